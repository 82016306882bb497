import SkipBackupSystem
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
/// The record is the mechanisms' short names joined by commas, and the
/// rule's name as `sweep --list-rules` prints it. It is kept in the *name*
/// of an extended attribute with an empty value, after
/// `user.skipbackup.sweep.` and with a colon between the two:
///
///     user.skipbackup.sweep.resource:node_modules
///     user.skipbackup.sweep.legacy,resource:~/Downloads/big.iso
///
/// so that the one `listxattr` a walk makes on every item anyway carries it.
/// In the first form, the value of `user.skipbackup.sweep`
/// (`"MECHANISMS RULE"`), a repeat sweep of mkhome.py's 800-project home
/// read its 1,005 records with a `getxattr` each: its CPU time against
/// `list` went from 1.055x to 1.020x without them. That form is still read,
/// and still written where the name would pass the kernel's 255 bytes
/// (`XATTR_NAME_MAX`): a `path` rule with a long path.
///
/// An item whose mark carries no such record is a hand mark (`mark`,
/// `setfattr`, another program): no sweep ever removes it.
public struct SweepProvenance: Hashable, Sendable {
  /// `user.skipbackup.sweep`, whose value holds a record in the first form.
  public static let attributeName: AttributeName = "user.skipbackup.sweep"
  /// What the name of a record in the name begins with.
  static let namePrefix: StaticString = "user.skipbackup.sweep."
  /// Between the mechanisms and the rule in a record's name; no mechanism's
  /// name holds one.
  private static let separator = UInt8(ascii: ":")
  /// The longest attribute name Linux takes, `XATTR_NAME_MAX` in <linux/limits.h>.
  private static let longestName = 255

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

  /// The attribute that holds this record: its name, and its value (empty
  /// unless the name would be too long for the kernel).
  var attribute: (name: AttributeName, value: [UInt8]) {
    let mechanisms = Array(self.mechanisms.names.joined(separator: ",").utf8)
    let prefix = UnsafeBufferPointer(
      start: Self.namePrefix.utf8Start, count: Self.namePrefix.utf8CodeUnitCount)
    if prefix.count + mechanisms.count + 1 + rule.count <= Self.longestName,
      let name = AttributeName(bytes: prefix + mechanisms + [Self.separator] + rule)
    {
      return (name, [])
    }
    return (Self.attributeName, mechanisms + [UInt8(ascii: " ")] + rule)
  }

  /// The record a value of ``attributeName`` holds (`MECHANISMS RULE`), or
  /// `nil` when the value is not one: no space, no rule, or a mechanism
  /// name the tool does not know.
  public init?(value: some Collection<UInt8>) {
    self.init(Array(value), separator: UInt8(ascii: " "))
  }

  /// The record `name`, an attribute's name, holds, or `nil` when it is not
  /// a sweep's record in the name.
  init?(attributeName name: UnsafeRawBufferPointer) {
    guard Self.isRecordInName(name) else { return nil }
    self.init(Array(name[Self.namePrefix.utf8CodeUnitCount...]), separator: Self.separator)
  }

  private init?(_ bytes: [UInt8], separator: UInt8) {
    guard let split = bytes.firstIndex(of: separator), split > 0, split + 1 < bytes.count,
      let mechanisms = Self.mechanisms(named: bytes[..<split]), !mechanisms.isEmpty
    else { return nil }
    self.init(mechanisms: mechanisms, rule: Array(bytes[(split + 1)...]))
  }

  /// Whether `name` begins with ``namePrefix`` and goes on.
  private static func isRecordInName(_ name: UnsafeRawBufferPointer) -> Bool {
    let count = namePrefix.utf8CodeUnitCount
    return name.count > count && memcmp(name.baseAddress!, namePrefix.utf8Start, count) == 0
  }

  /// Whether `name` may hold a record: ``attributeName``, or a record in
  /// the name. The walk's hot path: no allocation.
  package static func isRecordName(_ name: UnsafeRawBufferPointer) -> Bool {
    isAttributeName(name) || isRecordInName(name)
  }

  /// Whether `name` is ``attributeName``, whose value holds a record.
  package static func isAttributeName(_ name: UnsafeRawBufferPointer) -> Bool {
    let first = attributeNameLiteral
    return name.count == first.utf8CodeUnitCount
      && memcmp(name.baseAddress!, first.utf8Start, name.count) == 0
  }

  /// ``attributeName`` as a literal, compared with `memcmp` on the hot path.
  private static let attributeNameLiteral: StaticString = "user.skipbackup.sweep"

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

  /// The record on `item`, or `nil` when it has none (or one that does not
  /// parse, which no sweep wrote). A filesystem without user attributes
  /// holds none.
  ///
  /// The corresponding C functions are `listxattr(2)`, and `getxattr(2)`
  /// for a record in the first form.
  public static func read(from item: FileItem) throws(SkipBackupError) -> SweepProvenance? {
    try read(from: item, listed: ItemAttributes(readingRecordOf: item))
  }

  /// ``read(from:)`` from `attributes`, the caller's listing of the item's
  /// names (``ItemAttributes/init(readingRecordOf:)``), which may hold the
  /// record already.
  ///
  /// The corresponding C function is `getxattr(2)`, for a record in the
  /// first form.
  package static func read(
    from item: FileItem, listed attributes: ItemAttributes
  ) throws(SkipBackupError) -> SweepProvenance? {
    if let record = attributes.record { return record }
    guard attributes.recordInValue else { return nil }
    return try readValue(from: item)
  }

  /// The record in the value of ``attributeName`` on `item`, the first
  /// form, or `nil`.
  ///
  /// The corresponding C function is `getxattr(2)`.
  package static func readValue(from item: FileItem) throws(SkipBackupError) -> SweepProvenance? {
    do {
      return try ExtendedAttributes(of: item).withValue(of: attributeName) { value in
        value.flatMap { SweepProvenance(value: $0) }
      }
    } catch  where error.errno == .notSupported {
      return nil
    }
  }

  /// Records this on `item`, and removes any other record there. Nothing is
  /// written when the item holds this record alone already, so that its
  /// ctime stays.
  ///
  /// `holdingNoRecord`: the caller's own listing of the item's names, just
  /// made, found no record, so the record is written without listing them
  /// again (a first sweep of mkhome.py's home marks 1,005 items this way).
  ///
  /// The corresponding C functions are `listxattr(2)`, `setxattr(2)` and
  /// `removexattr(2)`.
  public func write(to item: FileItem, holdingNoRecord: Bool = false) throws(SkipBackupError) {
    let attributes = ExtendedAttributes(of: item)
    let (name, value) = attribute
    if holdingNoRecord {
      try attributes.setValue(value, of: name)
      return
    }
    var others = try ItemAttributes.recordNames(on: item)
    var present = false
    if let index = others.firstIndex(of: name) {
      others.remove(at: index)
      // A record in the name is all in the name; one in a value must match.
      present = value.isEmpty
      if !present {
        present = try attributes.withValue(of: name) { old in
          old.map { $0.elementsEqual(value) } ?? false
        }
      }
    }
    if !present { try attributes.setValue(value, of: name) }
    for other in others { _ = try attributes.removeValue(of: other) }
  }

  /// Removes every record from `item`; returns whether there was one. An
  /// item that keeps no user attributes (a symbolic link, a FIFO, a
  /// filesystem without them) has none, which is no error.
  ///
  /// The corresponding C functions are `listxattr(2)` and `removexattr(2)`.
  @discardableResult
  public static func remove(from item: FileItem) throws(SkipBackupError) -> Bool {
    do {
      let attributes = ExtendedAttributes(of: item)
      var removed = false
      let names = try ItemAttributes.recordNames(on: item)
      for name in names where try attributes.removeValue(of: name) {
        removed = true
      }
      return removed
    } catch  where error.errno == .notSupported || error.isRefusedForFileType {
      return false
    }
  }
}
