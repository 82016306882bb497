/// A way to record that an item stays on the device but out of backups.
///
/// Apple has two: iOS 5.0.1's ``MobileBackupAttribute`` and, from iOS 5.1,
/// the `isExcludedFromBackup` resource value, kept in
/// ``BackupExcludeItemAttribute``. Linux conventions add
/// ``RobotsBackupAttribute``, ``NodumpFlag`` and ``CacheDirectoryTag``; a
/// ``MechanismSet`` acts with several at once.
///
/// Marking and clearing are idempotent: marking an item that already reads
/// as marked writes nothing (its ctime stays), and clearing an item without
/// the mark is no error.
public protocol BackupExclusionMechanism: Sendable {
  /// The short name the tool and the documentation use, such as `legacy`.
  var name: String { get }

  /// Whether `item` carries this mark. A filesystem that keeps no user
  /// attributes carries none.
  func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool

  /// Marks `item`; returns whether anything was written.
  @discardableResult
  func mark(_ item: FileItem) throws(SkipBackupError) -> Bool

  /// Removes the mark from `item`; returns whether there was one to remove.
  @discardableResult
  func clear(_ item: FileItem) throws(SkipBackupError) -> Bool

  /// Whether only directories can carry this mark (a `CACHEDIR.TAG`). A
  /// recursive run applies such a mechanism to the directories it meets,
  /// not to the files in them.
  var marksDirectoriesOnly: Bool { get }

  /// Where the mark is kept. A set reads every mark kept in an extended
  /// attribute from one listing of the item's attribute names.
  var storage: MarkStorage { get }
}

/// Where a mechanism keeps its mark.
public enum MarkStorage: Hashable, Sendable {
  /// In the extended attribute `name`; with `presenceIsMark`, the attribute
  /// is a mark whatever its value.
  case extendedAttribute(AttributeName, presenceIsMark: Bool)
  /// Somewhere else: an inode flag, a file, or several places.
  case elsewhere
}

extension BackupExclusionMechanism {
  public var marksDirectoriesOnly: Bool { false }
  public var storage: MarkStorage { .elsewhere }
}

/// A mark kept in one extended attribute.
///
/// Conforming types say which attribute, which bytes they write, and which
/// values count as a mark; reading, marking and clearing come from here.
public protocol ExtendedAttributeMechanism: BackupExclusionMechanism {
  /// The attribute, under its Linux name (with the `user.` prefix).
  var attributeName: AttributeName { get }
  /// The exact bytes the mark writes.
  var markValue: [UInt8] { get }
  /// Whether the attribute counts as a mark whatever its value, so that a
  /// reader need not fetch the value.
  var presenceIsMark: Bool { get }
  /// Whether an attribute with this value is a mark.
  func isMark(_ value: UnsafeRawBufferPointer) -> Bool
}

extension ExtendedAttributeMechanism {
  public var presenceIsMark: Bool { false }

  public var storage: MarkStorage {
    .extendedAttribute(attributeName, presenceIsMark: presenceIsMark)
  }

  public func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    do {
      if presenceIsMark { return try attributes.contains(attributeName) }
      return try attributes.withValue(of: attributeName) { $0.map(isMark) ?? false }
    } catch  where error.errno == .notSupported {
      return false  // no user attributes here, so no mark
    }
  }

  @discardableResult
  public func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    // Most items have no such attribute: one call creates it, or fails if it exists.
    do {
      try attributes.setValue(markValue, of: attributeName, mode: .create)
      return true
    } catch  where error.errno == .fileExists {
      if try isMarked(item) { return false }
      try attributes.setValue(markValue, of: attributeName)
      return true
    }
  }

  @discardableResult
  public func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    do {
      // An attribute that is there but is no mark (xdg's "true") is not ours to remove.
      if !presenceIsMark, try !isMarked(item) { return false }
      return try attributes.removeValue(of: attributeName)
    } catch  where error.errno == .notSupported || error.isRefusedForFileType {
      return false  // no user attributes here, so nothing to clear
    }
  }
}
