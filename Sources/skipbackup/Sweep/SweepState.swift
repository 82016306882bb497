import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#endif

/// What a sweep needs to know of one item, read with one listing of its
/// attribute names: which of the counted mechanisms mark it, and whether a
/// sweep's record is there that the sweep may take for its own.
package struct SweepItemState {
  /// The reader's mechanisms that mark the item.
  package var marks: MechanismSet = []
  /// The listing of the item's names the state was read from. Its record
  /// is there whether or not it is trusted: ask ``hasRecord`` and ``record``.
  package let attributes: ItemAttributes
  /// Whether a sweep's record is there, in a name or in a value, on an item
  /// no one but its owner may write (``SweepStateReader/recordIsTrusted(on:)``):
  /// the one answer every use of the state sees, decided when it is read.
  package var hasRecord = false

  /// The trusted record, when a name holds it; `nil` with ``hasRecord``
  /// means it is in the value of ``SweepProvenance/attributeName``, which
  /// ``SweepProvenance/readValue(from:)`` reads.
  package var record: SweepProvenance? { hasRecord ? attributes.record : nil }
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
  /// group-writable node_modules made the sweep say "already marked").
  package func state(of item: FileItem) throws(SkipBackupError) -> SweepItemState {
    let attributes = try ItemAttributes(readingRecordOf: item)
    var state = SweepItemState(attributes: attributes)
    state.hasRecord = attributes.hasRecord && Self.recordIsTrusted(on: item)
    state.marks = try attributes.marks(
      mechanisms.intersection(.all), on: item, trustingRecord: state.hasRecord)
    if mechanisms.contains(.nodump), try Mechanism.nodump.isMarked(item) {
      state.marks.insert(.nodump)
    }
    if mechanisms.contains(.cachedir), try Mechanism.cachedir.isMarked(item) {
      state.marks.insert(.cachedir)
    }
    return state
  }

  /// Whether a record on `item` can only be its owner's doing (or a
  /// privileged process's): no one else may write the item, so no one
  /// else can have set its attributes (docs/sweep.md, "What a record
  /// proves"). The group write bit is the ACL's mask where the item has an
  /// ACL, so a named user granted write shows there too. A group member
  /// who planted `user.skipbackup.sweep.nodump,xdg:x` on the owner's file
  /// made the owner's `--undo` clear the owner's own nodump flag and xdg
  /// mark (issue 24, 3). Asked only of items that have a record (one
  /// `fstatat` each); an item that cannot be looked at is not trusted.
  static func recordIsTrusted(on item: FileItem) -> Bool {
    guard let status = try? item.status() else { return false }
    return status.st_mode & (S_IWGRP | S_IWOTH) == 0
  }
}
