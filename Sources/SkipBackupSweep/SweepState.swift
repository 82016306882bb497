import SkipBackupCore

/// What a sweep needs to know of one item, read with one listing of its
/// attribute names: which of the counted mechanisms mark it, and whether a
/// sweep's record is there that the sweep may take for its own.
package struct SweepItemState {
  /// The reader's mechanisms that mark the item.
  package var marks: MechanismSet = []
  /// The listing of the item's names the state was read from. Its record
  /// is there whether or not it is trusted: ask ``hasRecord`` and ``record``.
  package let listing: SweepListing
  /// Whether a sweep's record is there, in a name or in a value, on an item
  /// no one but its owner may write (``SweepRecord/isTrusted(on:)``): the
  /// one answer every use of the state sees, decided when it is read.
  package var hasRecord = false

  /// The trusted record, when a name holds it; `nil` with ``hasRecord``
  /// means it is in the value of ``SweepRecord/attributeName``, which
  /// ``SweepRecord/readValue(from:)`` reads.
  package var record: SweepRecord? { hasRecord ? listing.record : nil }
}

/// Reads ``SweepItemState`` for the items of a walk: one `listxattr` per
/// item, which holds the record too, and a value read only where a
/// mechanism's mark depends on it and no trusted record is there.
package struct SweepStateReader: Sendable {
  package let mechanisms: MechanismSet

  package init(mechanisms: MechanismSet) {
    self.mechanisms = mechanisms
  }

  /// The state of `item`. Whether its record is trusted is decided here,
  /// once, before the marks are read: beside a trusted record an attribute's
  /// name is the sweep's own mark, beside a forged one it is read by its
  /// value as anywhere else (a record and an xdg `true` planted on a
  /// group-writable node_modules would make the sweep say "already marked").
  package func state(of item: FileItem) throws(SkipBackupError) -> SweepItemState {
    let listing = try SweepListing(of: item)
    var state = SweepItemState(listing: listing)
    state.hasRecord = listing.hasRecord && SweepRecord.isTrusted(on: item)
    state.marks = try mechanisms.marks(
      on: item, listed: listing.attributes, namesSuffice: state.hasRecord)
    return state
  }
}
