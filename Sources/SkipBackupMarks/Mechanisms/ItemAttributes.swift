import SkipBackupSystem
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What one listing of an item's extended attribute names says of it: the
/// one reader of an item's state that every command starts from (status,
/// list, du, explain, export, sweep, mark and clear).
///
/// A walk lists every item's names anyway. The listing tells which
/// attribute mechanisms' names are there, under Linux's name or a Mac
/// file server's (``MarkForm``), and whether a sweep's record is: so values
/// are read only where a mark depends on one, and a tree without marks
/// costs one call per item.
package struct ItemAttributes {
  /// The attribute mechanisms whose Linux name is listed, whatever its value.
  package private(set) var listed: MechanismSet = []
  /// The Samba streams listed that may hold a Mac's mark.
  package private(set) var streams: SambaStreams = []
  /// The first sweep's record held in a name, read only by
  /// ``init(readingRecordOf:)``.
  package private(set) var record: SweepProvenance?
  /// Whether a name holds a sweep's record: with ``init(of:)``, one that
  /// may (its name is not parsed), with ``init(readingRecordOf:)`` one that
  /// parses.
  package private(set) var recordInName = false
  /// Whether ``SweepProvenance/attributeName`` is listed: a record in its
  /// value (the first form), which ``SweepProvenance/readValue(from:)`` reads.
  package private(set) var recordInValue = false
  /// The namespaces in which a name of overlayfs's own is listed
  /// (`trusted.overlay.*`, `user.overlay.*`): an overlay over the item
  /// would obey or hide it, so `run` cannot show the item as it is. Found
  /// in the same listing, among the names that are no mark's.
  package private(set) var overlayNames: OverlayNamespaces = []

  /// Whether a sweep's record is there, in a name or in a value.
  @inline(__always)
  package var hasRecord: Bool { recordInName || recordInValue }

  /// The listing of `item`'s names. A filesystem that keeps no user
  /// attributes lists none.
  ///
  /// The corresponding C function is `listxattr(2)` (`listxattrat`, or
  /// `flistxattr`, `llistxattr`, as the item is named).
  package init(of item: FileItem) throws(SkipBackupError) {
    try self.init(of: item, readingRecord: false, recordName: nil)
  }

  /// The listing of `item`'s names, with the sweep's record held in a name
  /// read into ``record``: for the sweep and the reports that name its
  /// rule. The others only ask whether there is one: reading it makes its
  /// bytes, which on a swept home's 1,005 records was 3.5 % of `list`'s
  /// instructions.
  package init(readingRecordOf item: FileItem) throws(SkipBackupError) {
    try self.init(of: item, readingRecord: true, recordName: nil)
  }

  /// The listing of `item`'s names, and the names of its sweep's records,
  /// for writing or removing them. The walk's readers never ask for those:
  /// an array kept in every item's state cost a release per item (3 % of
  /// `list`'s instructions on the 200,000-file tree).
  package static func recordNames(on item: FileItem) throws(SkipBackupError) -> [AttributeName] {
    var names: [AttributeName] = []
    _ = try ItemAttributes(of: item, readingRecord: false) { names.append($0) }
    return names
  }

  private init(
    of item: FileItem, readingRecord: Bool, recordName: ((AttributeName) -> Void)?
  ) throws(SkipBackupError) {
    var state = ItemAttributes()
    do {
      try ExtendedAttributes(of: item).forEachName { name in
        if let mechanism = Mechanism.attributeMechanism(named: name) {
          state.listed.insert(MechanismSet(mechanism))
        } else if state.streams.insert(named: name) {
          // A Mac's mark as Samba keeps it (MacServerForms.swift).
        } else if SweepProvenance.isAttributeName(name) {
          state.recordInValue = true
          recordName?(SweepProvenance.attributeName)
        } else if SweepProvenance.isRecordName(name) {
          guard readingRecord || recordName != nil else {
            state.recordInName = true  // may hold one: not read on the hot path
            return
          }
          // A name after the prefix that does not parse is no sweep's: left alone.
          guard let record = SweepProvenance(attributeName: name) else { return }
          state.recordInName = true
          if readingRecord && state.record == nil { state.record = record }
          recordName?(AttributeName(bytes: name)!)
        } else if let namespace = OverlayNamespaces(ofName: name) {
          state.overlayNames.insert(namespace)
        }
      }
    } catch  where error.errno == .notSupported {
      // No user attributes here: nothing listed.
    }
    self = state
  }

  private init() {}

  /// Which of `mechanisms` (those kept in attributes) mark `item`, this
  /// listing of it: the resource value by its presence, legacy and xdg by
  /// their value, read only when listed. Beside a sweep's record
  /// (`trustingRecord`), the attribute is the sweep's own mark and its name
  /// is enough, which keeps a repeat sweep at one call per marked item.
  package func marks(
    _ mechanisms: MechanismSet, on item: FileItem, trustingRecord: Bool = false
  ) throws(SkipBackupError) -> MechanismSet {
    let listed = self.listed.intersection(mechanisms)
    var marks: MechanismSet
    if trustingRecord && hasRecord {
      marks = listed
    } else {
      marks = listed.intersection(.resource)  // present is marked
      // A Mac's legacy stream and the Linux name are read only as far as needed.
      if !streams.isEmpty { marks.formUnion(try streams.marks(for: mechanisms, on: item)) }
      if listed.contains(.legacy), !marks.contains(.legacy),
        try Mechanism.legacy.isAttributeMarked(item)
      {
        marks.insert(.legacy)
      }
      if listed.contains(.xdg), try Mechanism.xdg.isAttributeMarked(item) { marks.insert(.xdg) }
      return marks
    }
    if !streams.isEmpty { marks.formUnion(try streams.marks(for: mechanisms, on: item)) }
    return marks
  }
}

/// Where overlayfs keeps the attributes it reads from its layers and never
/// shows (Documentation/filesystems/overlayfs.rst): `trusted.overlay.*`, or
/// `user.overlay.*` when mounted with `userxattr`, as in a user namespace.
package struct OverlayNamespaces: OptionSet, Sendable {
  package let rawValue: UInt8
  package init(rawValue: UInt8) { self.rawValue = rawValue }

  package static let trusted = OverlayNamespaces(rawValue: 1)
  package static let user = OverlayNamespaces(rawValue: 2)

  /// The namespace whose overlay prefix `name` starts with, if any. Met
  /// by every name that is no mark's (`security.selinux` on each file of
  /// an SELinux system): two comparisons, no allocation.
  @inline(__always)
  package init?(ofName name: UnsafeRawBufferPointer) {
    func starts(with prefix: StaticString) -> Bool {
      name.count > prefix.utf8CodeUnitCount
        && memcmp(name.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }
    if starts(with: "trusted.overlay.") {
      self = .trusted
    } else if starts(with: "user.overlay.") {
      self = .user
    } else {
      return nil
    }
  }

  /// The prefix of the names in this namespace, for a name test outside a listing.
  package var prefix: [UInt8] {
    Array((self == .trusted ? "trusted.overlay." : "user.overlay.").utf8)
  }
}
