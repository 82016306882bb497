import SkipBackupSystem

/// The mechanisms kept in one extended attribute each, as the table in
/// Mechanism.swift defines them: reading, marking and clearing for all.
extension Mechanism {
  /// The attribute the mark is kept in, under its Linux name (with the
  /// `user.` prefix); `nil` for nodump and cachedir.
  public var attributeName: AttributeName? {
    Self.attributes[Int(definition.bit.trailingZeroBitCount)]?.name
  }

  /// The exact bytes the mark writes, for the attribute mechanisms.
  public var markValue: [UInt8]? {
    Self.attributes[Int(definition.bit.trailingZeroBitCount)]?.value
  }

  /// Each mechanism's attribute name and mark, made once from the table,
  /// by bit: the readers ask for the name of every marked item's
  /// attribute, and making it anew for each costs 16 % of `list`'s
  /// instructions on the 200,000-file tree (docs/performance.md).
  private static let attributes: [(name: AttributeName, value: [UInt8])?] = {
    var attributes = [(name: AttributeName, value: [UInt8])?](repeating: nil, count: 8)
    for mechanism in allCases {
      guard case .attribute(let name, let mark, _) = mechanism.definition.store else { continue }
      attributes[Int(mechanism.definition.bit.trailingZeroBitCount)] = (
        AttributeName(name),
        Array(UnsafeBufferPointer(start: mark.utf8Start, count: mark.utf8CodeUnitCount))
      )
    }
    return attributes
  }()

  /// Whether the attribute counts as a mark whatever its value, so that a
  /// reader need not fetch the value.
  package var presenceIsMark: Bool {
    guard case .attribute(_, _, .anyValue) = definition.store else { return false }
    return true
  }

  /// Whether an attribute with this value is a mark.
  package func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    guard case .attribute(_, let mark, let counts) = definition.store else { return false }
    switch counts {
    case .anyValue: return true
    case .firstByteNotZero: return value.first.map { $0 != 0 } ?? false
    case .markBytes:
      return value.equals(mark)
    }
  }

  func isAttributeMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    let name = attributeName!
    do {
      if presenceIsMark { return try attributes.contains(name) }
      return try attributes.withValue(of: name) { $0.map(isMark) ?? false }
    } catch  where error.errno == .notSupported {
      return false  // no user attributes here, so no mark
    }
  }

  func markAttribute(_ item: FileItem) throws(SkipBackupError) -> Bool {
    var listing: ItemAttributes?
    return try markAttribute(item, sharing: &listing, withOthers: false)
  }

  /// Marks `item`. Most items have no such attribute: one call creates it,
  /// or fails if it exists. Then whether it is a mark already is read by
  /// the table's value rule: alone, of its value (one read); `withOthers`,
  /// of `listing`, the one listing of the item's names (``ItemAttributes``)
  /// made at the first name found there and kept for the set's other
  /// members, so that marking an item that carries every attribute mark
  /// again costs one write, one listing and the values the rule reads (four
  /// calls for `all`, where each member's write and read made six).
  func markAttribute(
    _ item: FileItem, sharing listing: inout ItemAttributes?, withOthers: Bool
  ) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    let name = attributeName!
    let value = markValue!
    if let known = listing, known.listed.includes(self) {
      if try known.holdsMark(of: self, on: item) { return false }
      try attributes.setValue(value, of: name)
      return true
    }
    do {
      try attributes.setValue(value, of: name, mode: .create)
      return true
    } catch  where error.errno == .fileExists {
      let marked: Bool
      if withOthers {
        let known: ItemAttributes
        if let listing {
          known = listing
        } else {
          known = try ItemAttributes(of: item)
        }
        listing = known
        marked = try known.holdsMark(of: self, on: item)
      } else {
        marked = try isAttributeMarked(item)
      }
      if marked { return false }
      try attributes.setValue(value, of: name)
      return true
    }
  }

  func checkAttribute(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try ExtendedAttributes(of: item).checkWritable(attributeName!)
    return false
  }

  /// Clears the mark from `item` when `listing`, the set's one listing of
  /// its names, holds the attribute; nothing is asked of one without it.
  func clearAttribute(_ item: FileItem, listed listing: ItemAttributes) throws(SkipBackupError)
    -> Bool
  {
    guard listing.listed.includes(self) else { return false }
    return try clearAttribute(item)
  }

  func clearAttribute(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    do {
      // An attribute that is there but is no mark (xdg's "true") is not ours to remove.
      if !presenceIsMark, try !isAttributeMarked(item) { return false }
      return try attributes.removeValue(of: attributeName!)
    } catch  where error.errno == .notSupported || error.isRefusedForFileType {
      return false  // no user attributes here, so nothing to clear
    }
  }

  /// The attribute mechanism whose attribute has the name `name` (the bytes
  /// of one entry of a `listxattr` list), if any: a walk's hot path, once
  /// per name of every item. A `memcmp` is made only where the lengths
  /// agree: one at most for the table's names, which differ in length, and
  /// a new row whose name is as long as another's is still found.
  @inline(__always)
  package static func attributeMechanism(named name: UnsafeRawBufferPointer) -> Mechanism? {
    for mechanism in attributeMechanisms {
      guard case .attribute(let candidate, _, _) = mechanism.definition.store,
        candidate.utf8CodeUnitCount == name.count
      else { continue }
      if name.equals(candidate) { return mechanism }
    }
    return nil
  }
}

extension AttributeName {
  /// The name with the bytes of `name`, a literal without NUL.
  init(_ name: StaticString) {
    self = AttributeName(
      bytes: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))!
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
