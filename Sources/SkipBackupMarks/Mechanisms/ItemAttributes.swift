import SkipBackupSystem
import SystemPackage

/// What one listing of an item's extended attribute names says of it: the
/// one reader of an item's state that every command starts from (status,
/// list, du, explain, export, sweep, mark and clear).
///
/// A walk lists every item's names anyway. The listing tells which
/// attribute mechanisms' names are there, under Linux's name or a Mac
/// file server's (``MarkForm``), and whether any name is in skipbackup's
/// own namespace (`user.skipbackup.`, where a sweep keeps its records): so
/// values are read only where a mark depends on one, and a tree without
/// marks costs one call per item.
package struct ItemAttributes {
  /// The attribute mechanisms whose Linux name is listed, whatever its value.
  package private(set) var listed: MechanismSet = []
  /// The Samba streams listed that may hold a Mac's mark.
  package private(set) var streams: SambaStreams = []
  /// Whether a name in skipbackup's own namespace is listed.
  package private(set) var holdsOwnNames = false
  /// The namespaces in which a name of overlayfs's own is listed
  /// (`trusted.overlay.*`, `user.overlay.*`): an overlay over the item
  /// would obey or hide it, so `run` cannot show the item as it is. Found
  /// in the same listing, among the names that are no mark's.
  package private(set) var overlayNames: OverlayNamespaces = []

  /// skipbackup's own namespace: every name the tool writes besides the marks.
  package static let ownNamespace: StaticString = "user.skipbackup."

  /// The listing of `item`'s names. A filesystem that keeps no user
  /// attributes lists none.
  ///
  /// The corresponding C function is `listxattr(2)` (`listxattrat`, or
  /// `flistxattr`, `llistxattr`, as the item is named).
  @inline(__always)
  package init(of item: FileItem) throws(SkipBackupError) {
    try self.init(of: item) { _ in }
  }

  /// The listing of `item`'s names, handing each name in skipbackup's own
  /// namespace to `ownName` while the listing holds it: the sweep reads its
  /// records from the same one call.
  package init(
    of item: FileItem, ownName: (UnsafeRawBufferPointer) -> Void
  ) throws(SkipBackupError) {
    var state = ItemAttributes()
    let namespace = Self.ownNamespace
    do {
      try ExtendedAttributes(of: item).forEachName { name in
        if let mechanism = Mechanism.attributeMechanism(named: name) {
          state.listed.insert(MechanismSet(mechanism))
        } else if state.streams.insert(named: name) {
          // A Mac's mark as Samba keeps it (MacServerForms.swift).
        } else if name.starts(with: namespace) {
          state.holdsOwnNames = true
          ownName(name)
        } else if let overlay = OverlayNamespaces(ofName: name) {
          state.overlayNames.insert(overlay)
        }
      }
    } catch  where error.errno == .notSupported {
      // No user attributes here: nothing listed.
    }
    self = state
  }

  private init() {}

  /// Which of `mechanisms` (those kept in attributes) mark `item`, by this
  /// listing of it and the table's value rule (Mechanism.swift): a mechanism
  /// whose presence is its mark costs nothing more, the others a read of
  /// their value, only when listed. A Mac's marks in a Samba stream are read
  /// first, and the Linux name only for what they leave. With `namesSuffice`
  /// (the sweep, beside a record it trusts, where each attribute is its own
  /// mark) a listed name is enough, which keeps a repeat sweep at one call
  /// per marked item.
  package func marks(
    _ mechanisms: MechanismSet, on item: FileItem, namesSuffice: Bool = false
  ) throws(SkipBackupError) -> MechanismSet {
    var marks: MechanismSet = []
    if !streams.isEmpty { marks = try streams.marks(for: mechanisms, on: item) }
    let listed = self.listed.intersection(mechanisms).subtracting(marks)
    // Most items carry no mark: no loop over the table for them.
    if namesSuffice || listed.isEmpty { return marks.union(listed) }
    for mechanism in Mechanism.attributeMechanisms where listed.includes(mechanism) {
      if try holdsMark(of: mechanism, on: item) { marks.insert(MechanismSet(mechanism)) }
    }
    return marks
  }

  /// Whether `mechanism`'s Linux name on `item` holds its mark, by this
  /// listing and the table's value rule (a Mac's stream aside): what mark
  /// asks before it writes.
  package func holdsMark(of mechanism: Mechanism, on item: FileItem) throws(SkipBackupError)
    -> Bool
  {
    guard listed.includes(mechanism) else { return false }
    if mechanism.presenceIsMark { return true }
    return try mechanism.isAttributeMarked(item)
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
    if name.starts(with: "trusted.overlay.") {
      self = .trusted
    } else if name.starts(with: "user.overlay.") {
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
