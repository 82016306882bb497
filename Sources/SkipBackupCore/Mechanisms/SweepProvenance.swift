import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What `skipbackup sweep` records on each item it marks: which marks it
/// wrote and by which rule, so that a later sweep can take back its own
/// marks, and only those.
///
/// It is kept in the extended attribute `user.skipbackup.sweep`, whose value
/// is the mechanisms' short names joined by commas, one space, and the
/// rule's name as `sweep --list-rules` prints it (everything after the first
/// space, so a rule name may hold spaces):
///
///     user.skipbackup.sweep="resource node_modules"
///     user.skipbackup.sweep="legacy,resource ~/Downloads/big.iso"
///
/// An item whose mark carries no such record is a hand mark (`mark`,
/// `setfattr`, another program): no sweep ever removes it.
public struct SweepProvenance: Hashable, Sendable {
  /// `user.skipbackup.sweep`.
  public static let attributeName: AttributeName = "user.skipbackup.sweep"
  /// ``attributeName`` as a literal, compared with `memcmp` on the hot path.
  static let attributeNameLiteral: StaticString = "user.skipbackup.sweep"

  /// The mechanisms whose marks the sweep wrote.
  public var mechanisms: MechanismSet
  /// The rule's name, as bytes (a `path` rule is named by its path).
  public var rule: [UInt8]

  public init(mechanisms: MechanismSet, rule: [UInt8]) {
    self.mechanisms = mechanisms
    self.rule = rule
  }

  /// The rule's name, for messages.
  public var ruleName: String { String(escapingForDisplay: rule) }

  /// The attribute's value: `MECHANISMS RULE`.
  public var value: [UInt8] {
    Array(mechanisms.names.joined(separator: ",").utf8) + [UInt8(ascii: " ")] + rule
  }

  /// The record an attribute value holds, or `nil` when the value is not
  /// one: no space, no rule, or a mechanism name the tool does not know.
  public init?(value: some Collection<UInt8>) {
    let value = Array(value)
    guard let space = value.firstIndex(of: UInt8(ascii: " ")), space > 0, space + 1 < value.count,
      let mechanisms = Self.mechanisms(named: value[..<space]), !mechanisms.isEmpty
    else { return nil }
    self.init(mechanisms: mechanisms, rule: Array(value[(space + 1)...]))
  }

  /// The mechanisms of a comma-separated list of names as ``MechanismSet/named``
  /// spells them, read from the bytes (a repeat sweep reads a record on
  /// every item it marked: no text is made for it); `nil` for a name it
  /// does not know.
  private static func mechanisms(named list: ArraySlice<UInt8>) -> MechanismSet? {
    var mechanisms: MechanismSet = []
    for name in list.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
      guard let set = namedBytes.first(where: { $0.name.elementsEqual(name) })?.set else {
        return nil
      }
      mechanisms.formUnion(set)
    }
    return mechanisms
  }

  private static let namedBytes: [(name: [UInt8], set: MechanismSet)] = MechanismSet.named.map {
    (Array($0.name.utf8), $0.set)
  }

  /// The attribute's name as bytes, as a listing of names holds it.
  package static let attributeNameBytes: [UInt8] = attributeName.bytes

  /// The record on `item`, or `nil` when it has none (or one that does not
  /// parse, which no sweep wrote). A filesystem without user attributes
  /// holds none.
  ///
  /// The corresponding C function is `getxattr(2)`.
  public static func read(from item: FileItem) throws(SkipBackupError) -> SweepProvenance? {
    do {
      return try ExtendedAttributes(of: item).withValue(of: attributeName) { value in
        value.flatMap { SweepProvenance(value: $0) }
      }
    } catch  where error.errno == .notSupported {
      return nil
    }
  }

  /// Records this on `item`. Nothing is written when the item holds this
  /// record already, so that its ctime stays.
  ///
  /// The corresponding C function is `setxattr(2)`.
  public func write(to item: FileItem) throws(SkipBackupError) {
    let attributes = ExtendedAttributes(of: item)
    let value = self.value
    let same = try attributes.withValue(of: Self.attributeName) { old in
      old.map { $0.elementsEqual(value) } ?? false
    }
    if same { return }
    try attributes.setValue(value, of: Self.attributeName)
  }

  /// Removes the record from `item`; returns whether there was one. An item
  /// that keeps no user attributes (a symbolic link, a FIFO, a filesystem
  /// without them) has none, which is no error.
  ///
  /// The corresponding C function is `removexattr(2)`.
  @discardableResult
  public static func remove(from item: FileItem) throws(SkipBackupError) -> Bool {
    do {
      return try ExtendedAttributes(of: item).removeValue(of: attributeName)
    } catch  where error.errno == .notSupported || error.isRefusedForFileType {
      return false
    }
  }
}

/// What a sweep needs to know of one item, read with one listing of its
/// attribute names: which of the counted mechanisms mark it, and whether a
/// sweep's record is there.
package struct SweepItemState {
  /// The reader's mechanisms that mark the item.
  package var marks: MechanismSet = []
  /// Whether `user.skipbackup.sweep` is among the item's attributes.
  package var hasRecord = false
}

/// Reads ``SweepItemState`` for the items of a walk: one `listxattr` per
/// item, a value read only where a mechanism's mark depends on it and no
/// record is there.
package struct SweepStateReader: Sendable {
  package let mechanisms: MechanismSet

  package init(mechanisms: MechanismSet) {
    self.mechanisms = mechanisms
  }

  /// The state of `item`.
  package func state(of item: FileItem) throws(SkipBackupError) -> SweepItemState {
    var state = SweepItemState()
    var listed: MechanismSet = []
    do {
      try ExtendedAttributes(of: item).forEachName { name in
        if let mechanism = Mechanism.attributeMechanism(named: name) {
          listed.insert(MechanismSet(mechanism))
        } else if name.elementsEqual(SweepProvenance.attributeNameBytes) {
          state.hasRecord = true
        }
      }
    } catch  where error.errno == .notSupported {
      return state
    }
    listed.formIntersection(mechanisms)
    if state.hasRecord {
      // Beside a sweep's record, the attribute is the sweep's own mark: its
      // name is enough, which keeps a repeat sweep at one call per marked item.
      state.marks = listed
    } else {
      state.marks = listed.intersection(.resource)  // present is marked
      for mechanism in [Mechanism.legacy, .xdg] where listed.includes(mechanism) {
        if try mechanism.isAttributeMarked(item) { state.marks.insert(MechanismSet(mechanism)) }
      }
    }
    if mechanisms.contains(.nodump), try NodumpFlag.isMarked(item) { state.marks.insert(.nodump) }
    if mechanisms.contains(.cachedir), try CacheDirectoryTag.isMarked(item) {
      state.marks.insert(.cachedir)
    }
    return state
  }
}

extension FileItem {
  /// Whether the directory this item is holds an entry called `name`
  /// (a symbolic link counts, and is not followed).
  ///
  /// The corresponding C function is `fstatat(2)`.
  package func holdsEntry(named name: [UInt8]) -> Bool {
    var status = stat()
    let result = withPathPointer { path in
      var inside = Array(UnsafeRawBufferPointer(start: path, count: strlen(path)))
      if !inside.isEmpty { inside.append(UInt8(ascii: "/")) }
      inside += name
      inside.append(0)
      return inside.withUnsafeBufferPointer { bytes in
        withAtArguments { directory, _, _ in
          valueOrErrno {
            system_fstatat(
              directory, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
              &status, AT_SYMLINK_NOFOLLOW)
          }
        }
      }
    }
    if case .success = result { return true }
    return false
  }
}
