import SkipBackupCore
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
/// In the other form, the value of `user.skipbackup.sweep`
/// (`"MECHANISMS RULE"`), a repeat sweep of mkhome.py's 800-project home
/// reads its 1,005 records with a `getxattr` each: its CPU time against
/// `list` is 1.055x so, 1.020x from the names (docs/performance.md). That
/// form is still read,
/// and still written where the name would pass the kernel's 255 bytes
/// (`XATTR_NAME_MAX`): a `path` rule with a long path.
///
/// An item whose mark carries no such record is a hand mark (`mark`,
/// `setfattr`, another program): no sweep ever removes it.
package struct SweepRecord: Hashable, Sendable {
  /// `user.skipbackup.sweep`, whose value holds a record in the first form.
  package static let attributeName: AttributeName = "user.skipbackup.sweep"
  /// What the name of a record in the name begins with.
  package static let namePrefix: StaticString = "user.skipbackup.sweep."
  /// Between the mechanisms and the rule in a record's name; no mechanism's
  /// name holds one.
  private static let separator = UInt8(ascii: ":")
  /// The longest attribute name Linux takes, `XATTR_NAME_MAX` in <linux/limits.h>.
  private static let longestName = 255

  /// The mechanisms whose marks the sweep wrote.
  package var mechanisms: MechanismSet
  /// The rule's name, as bytes (a `path` rule is named by its path).
  package var rule: [UInt8]

  package init(mechanisms: MechanismSet, rule: [UInt8]) {
    self.mechanisms = mechanisms
    self.rule = rule
  }

  /// The rule's name, for messages.
  package var ruleName: String { String(escapingForDisplay: rule) }

  /// The attribute that holds this record: its name, and its value (empty
  /// unless the name would be too long for the kernel).
  package var attribute: (name: AttributeName, value: [UInt8]) {
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
  package init?(value: some Collection<UInt8>) {
    self.init(Array(value), separator: UInt8(ascii: " "))
  }

  /// The record `name`, an attribute's name, holds, or `nil` when it is not
  /// a sweep's record in the name.
  package init?(attributeName name: UnsafeRawBufferPointer) {
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
    name.count > namePrefix.utf8CodeUnitCount && name.starts(with: namePrefix)
  }

  /// Whether `name` is ``attributeName``, whose value holds a record.
  static func isAttributeName(_ name: UnsafeRawBufferPointer) -> Bool {
    name.equals("user.skipbackup.sweep")
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

  /// The record on `item`, or `nil` when it has none (or one that does not
  /// parse, which no sweep wrote). A filesystem without user attributes
  /// holds none. Trusted or not: ask ``isTrusted(on:)``.
  ///
  /// The corresponding C functions are `listxattr(2)`, and `getxattr(2)`
  /// for a record in the first form.
  package static func read(from item: FileItem) throws(SkipBackupError) -> SweepRecord? {
    try read(from: item, listed: SweepListing(of: item))
  }

  /// ``read(from:)`` from `listing`, the caller's listing of the item's
  /// names, which holds a record in a name already.
  ///
  /// The corresponding C function is `getxattr(2)`, for a record in the
  /// first form.
  package static func read(
    from item: FileItem, listed listing: SweepListing
  ) throws(SkipBackupError) -> SweepRecord? {
    if let record = listing.record { return record }
    guard listing.recordInValue else { return nil }
    return try readValue(from: item)
  }

  /// The sweep rule behind a mark on `item`, escaped for display as every
  /// name is (a `path` rule is a path, whose bytes need not be UTF-8).
  /// `nil` when the item has none, or when it cannot be read (a rule is a
  /// detail of a report, never a reason to fail it).
  package static func ruleName(of item: FileItem) -> String? {
    guard let record = try? read(from: item) else { return nil }
    return record.ruleName
  }

  /// Whether a record on `item` can only be its owner's doing (or a
  /// privileged process's): no one else may write the item, so no one
  /// else can have set its attributes (docs/sweep.md, "What a record
  /// proves"). The group write bit is the ACL's mask where the item has an
  /// ACL, so a named user granted write shows there too: a group member
  /// who planted `user.skipbackup.sweep.nodump,xdg:x` on the owner's file
  /// would otherwise make the owner's `--undo` clear the owner's own
  /// nodump flag and xdg mark. Asked only of items that have a record
  /// (one `fstatat` each); an item that cannot be looked at is not trusted.
  package static func isTrusted(on item: FileItem) -> Bool {
    guard let status = try? item.status() else { return false }
    return status.st_mode & (S_IWGRP | S_IWOTH) == 0
  }

  /// What a mark made or cleared by hand (`mark`, `clear`, browse) does to
  /// the record on `item`: a mark a person makes again becomes theirs, so
  /// the record goes and no sweep removes the mark later; a mark cleared
  /// (`cleared`, its mechanisms) leaves the record's other mechanisms to
  /// the sweep (docs/sweep.md), but a record others may have written is
  /// never written again as this user's: it goes, as a sweep would not
  /// trust it either.
  ///
  /// The corresponding C functions are `listxattr(2)`, `getxattr(2)`,
  /// `setxattr(2)` and `removexattr(2)`.
  ///
  /// `listing`: the caller's listing of the item's names, just made.
  package static func handOver(
    _ item: FileItem, cleared: MechanismSet? = nil, listed listing: SweepListing? = nil
  ) throws(SkipBackupError) {
    let record: SweepRecord?
    if let listing {
      record = try read(from: item, listed: listing)
    } else {
      record = cleared == nil ? nil : try read(from: item)
    }
    if let cleared, let record,
      !record.mechanisms.subtracting(cleared).isEmpty, isTrusted(on: item)
    {
      try SweepRecord(mechanisms: record.mechanisms.subtracting(cleared), rule: record.rule)
        .write(to: item)
    } else {
      try remove(from: item)
    }
  }

  /// The record in the value of ``attributeName`` on `item`, the first
  /// form, or `nil`.
  ///
  /// The corresponding C function is `getxattr(2)`.
  package static func readValue(from item: FileItem) throws(SkipBackupError) -> SweepRecord? {
    do {
      return try ExtendedAttributes(of: item).withValue(of: attributeName) { value in
        value.flatMap { SweepRecord(value: $0) }
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
  package func write(to item: FileItem, holdingNoRecord: Bool = false) throws(SkipBackupError) {
    let attributes = ExtendedAttributes(of: item)
    let (name, value) = attribute
    if holdingNoRecord {
      try attributes.setValue(value, of: name)
      return
    }
    var others = try SweepListing.recordNames(on: item)
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
  package static func remove(from item: FileItem) throws(SkipBackupError) -> Bool {
    do {
      let attributes = ExtendedAttributes(of: item)
      var removed = false
      let names = try SweepListing.recordNames(on: item)
      for name in names where try attributes.removeValue(of: name) {
        removed = true
      }
      return removed
    } catch  where error.errno == .notSupported || error.isRefusedForFileType {
      return false
    }
  }
}

/// One listing of an item's attribute names (``ItemAttributes``) with the
/// sweep's record in it: which marks' names are there, and the record when
/// a name holds it, from the one `listxattr` a walk makes anyway.
package struct SweepListing {
  /// The listing, for the marks.
  package let attributes: ItemAttributes
  /// The first record held in a name.
  package private(set) var record: SweepRecord?
  /// Whether a name holds a record that parses.
  package private(set) var recordInName = false
  /// Whether ``SweepRecord/attributeName`` is listed: a record in its value
  /// (the first form), which ``SweepRecord/readValue(from:)`` reads.
  package private(set) var recordInValue = false

  /// Whether a record is there, in a name or in a value.
  package var hasRecord: Bool { recordInName || recordInValue }

  /// The listing of `item`'s names, its record read from them.
  package init(of item: FileItem) throws(SkipBackupError) {
    var record: SweepRecord?
    var (inName, inValue) = (false, false)
    attributes = try ItemAttributes(of: item) { name in
      if SweepRecord.isAttributeName(name) {
        inValue = true
      } else if let parsed = SweepRecord(attributeName: name) {
        // A name after the prefix that does not parse is no sweep's: left alone.
        inName = true
        if record == nil { record = parsed }
      }
    }
    (self.record, recordInName, recordInValue) = (record, inName, inValue)
  }

  /// The names of `item`'s records, for writing or removing them. The
  /// walk's readers never ask for those: an array kept in every item's
  /// state cost a release per item (3 % of `list`'s instructions on the
  /// 200,000-file tree).
  package static func recordNames(on item: FileItem) throws(SkipBackupError) -> [AttributeName] {
    var names: [AttributeName] = []
    _ = try ItemAttributes(of: item) { name in
      if SweepRecord.isAttributeName(name) {
        names.append(SweepRecord.attributeName)
      } else if SweepRecord(attributeName: name) != nil {
        names.append(AttributeName(bytes: name)!)
      }
    }
    return names
  }
}
