import SkipBackupCore

/// What a sweep needs to know of one item, read with one listing of its
/// attribute names: which of the counted mechanisms mark it, and whether a
/// sweep's record is there.
package struct SweepItemState {
  /// The reader's mechanisms that mark the item.
  package var marks: MechanismSet = []
  /// The sweep's record, when one of the item's attribute names holds it.
  package var record: SweepProvenance?
  /// Whether ``SweepProvenance/attributeName`` is there: a record in its
  /// value (the first form), which ``SweepProvenance/readValue(from:)`` reads.
  package var recordInValue = false
  /// Whether a sweep's record is there, in a name or in a value. Stored,
  /// not computed, though it follows from the two above: it is asked of
  /// every item of a sweep, across the module boundary, and computed (even
  /// `@inlinable`) a repeat sweep of mkhome.py's home ran 55.5M user
  /// instructions under callgrind against 54.2M stored.
  package var hasRecord = false
}

/// Reads ``SweepItemState`` for the items of a walk: one `listxattr` per
/// item, which holds the record too, and a value read only where a
/// mechanism's mark depends on it and no record is there.
package struct SweepStateReader: Sendable {
  package let mechanisms: MechanismSet

  package init(mechanisms: MechanismSet) {
    self.mechanisms = mechanisms
  }

  /// The state of `item`.
  package func state(of item: FileItem) throws(SkipBackupError) -> SweepItemState {
    let attributes = try ItemAttributes(readingRecordOf: item)
    var state = SweepItemState()
    state.record = attributes.record
    state.recordInValue = attributes.recordInValue
    state.hasRecord = attributes.hasRecord
    state.marks = try attributes.marks(
      mechanisms.intersection(.all), on: item, trustingRecord: true)
    if mechanisms.contains(.nodump), try Mechanism.nodump.isMarked(item) {
      state.marks.insert(.nodump)
    }
    if mechanisms.contains(.cachedir), try Mechanism.cachedir.isMarked(item) {
      state.marks.insert(.cachedir)
    }
    return state
  }
}
