/// The three mechanisms kept in one extended attribute each: which
/// attribute, which bytes a mark writes, which values count as a mark, and
/// reading, marking and clearing for all three.
extension Mechanism {
  /// The attribute the mark is kept in, under its Linux name (with the
  /// `user.` prefix); `nil` for nodump and cachedir.
  public var attributeName: AttributeName? {
    switch self {
    case .legacy: MobileBackupAttribute.attributeName
    case .resource: BackupExcludeItemAttribute.attributeName
    case .xdg: RobotsBackupAttribute.attributeName
    case .nodump, .cachedir: nil
    }
  }

  /// The exact bytes the mark writes, for the attribute mechanisms.
  public var markValue: [UInt8]? {
    switch self {
    case .legacy: MobileBackupAttribute.value
    case .resource: BackupExcludeItemAttribute.value
    case .xdg: RobotsBackupAttribute.value
    case .nodump, .cachedir: nil
    }
  }

  /// Whether the attribute counts as a mark whatever its value, so that a
  /// reader need not fetch the value.
  var presenceIsMark: Bool { self == .resource }

  /// Whether an attribute with this value is a mark.
  func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    switch self {
    case .legacy: MobileBackupAttribute.isMark(value)
    case .xdg: RobotsBackupAttribute.isMark(value)
    default: true
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
    let attributes = ExtendedAttributes(of: item)
    let name = attributeName!
    let value = markValue!
    // Most items have no such attribute: one call creates it, or fails if it exists.
    do {
      try attributes.setValue(value, of: name, mode: .create)
      return true
    } catch  where error.errno == .fileExists {
      if try isAttributeMarked(item) { return false }
      try attributes.setValue(value, of: name)
      return true
    }
  }

  func checkAttribute(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try ExtendedAttributes(of: item).checkWritable(attributeName!)
    return false
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
  /// of one entry of a `listxattr` list), if any. The three names differ in
  /// length, so the length picks the one candidate and one `memcmp` settles it.
  static func attributeMechanism(named name: UnsafeRawBufferPointer) -> Mechanism? {
    let candidate: StaticString
    let mechanism: Mechanism
    switch name.count {
    case MobileBackupAttribute.nameBytes.utf8CodeUnitCount:
      (candidate, mechanism) = (MobileBackupAttribute.nameBytes, .legacy)
    case BackupExcludeItemAttribute.nameBytes.utf8CodeUnitCount:
      (candidate, mechanism) = (BackupExcludeItemAttribute.nameBytes, .resource)
    case RobotsBackupAttribute.nameBytes.utf8CodeUnitCount:
      (candidate, mechanism) = (RobotsBackupAttribute.nameBytes, .xdg)
    default:
      return nil
    }
    return memcmp(name.baseAddress!, candidate.utf8Start, name.count) == 0 ? mechanism : nil
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
