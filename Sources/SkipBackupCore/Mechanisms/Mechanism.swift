/// A way to record that an item stays on the device but out of backups.
///
/// Apple has two: iOS 5.0.1's ``legacy`` attribute (``MobileBackupAttribute``)
/// and, from iOS 5.1, the `isExcludedFromBackup` resource value
/// (``resource``, ``BackupExcludeItemAttribute``). Linux conventions add
/// ``xdg`` (``RobotsBackupAttribute``), ``nodump`` (``NodumpFlag``) and
/// ``cachedir`` (``CacheDirectoryTag``). A ``MechanismSet`` acts with
/// several at once.
///
/// Marking and clearing are idempotent: marking an item that already reads
/// as marked writes nothing (its ctime stays), and clearing an item without
/// the mark is no error.
public enum Mechanism: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// iOS 5.0.1's `com.apple.MobileBackup` attribute.
  case legacy
  /// The `isExcludedFromBackup` resource value of iOS 5.1 and later.
  case resource
  /// The freedesktop `user.xdg.robots.backup` attribute.
  case xdg
  /// The nodump inode flag (`chattr +d`).
  case nodump
  /// A `CACHEDIR.TAG` in a directory.
  case cachedir

  /// The short name the tool and the documentation use, such as `legacy`.
  public var name: String { rawValue }

  public var description: String { rawValue }

  /// Whether only directories can carry this mark (a `CACHEDIR.TAG`). A
  /// recursive run applies such a mechanism to the directories it meets,
  /// not to the files in them.
  public var marksDirectoriesOnly: Bool { self == .cachedir }

  /// Whether `item` carries this mark. A filesystem that keeps no user
  /// attributes carries none.
  public func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try perform(.read, on: item)
  }

  /// Marks `item`; returns whether anything was written.
  @discardableResult
  public func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try perform(.write, on: item)
  }

  /// Removes the mark from `item`; returns whether there was one to remove.
  @discardableResult
  public func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try perform(.remove, on: item)
  }

  /// Throws what marking `item`, or clearing its mark, would fail with,
  /// and writes nothing: a dry run's look at what the run would meet
  /// (a FIFO, /proc, a file for `cachedir`, another user's file).
  public func check(_ item: FileItem) throws(SkipBackupError) {
    _ = try perform(.check, on: item)
  }

  /// What is done with a mark.
  private enum Operation { case read, write, remove, check }

  /// Sends `operation` to where this mark is kept: an extended attribute
  /// (AttributeMarks.swift), the inode flag or the tag file. One switch over
  /// two closed enums, which allocates nothing: a table of closures in its
  /// place allocated a closure context on every call (`swift_allocObject`
  /// in the release build's `Mechanism.mark`), once per entry and mechanism
  /// in `mark -R`.
  private func perform(
    _ operation: Operation, on item: FileItem
  ) throws(SkipBackupError) -> Bool {
    switch (self, operation) {
    case (.legacy, .read), (.resource, .read), (.xdg, .read): try isAttributeMarked(item)
    case (.legacy, .write), (.resource, .write), (.xdg, .write): try markAttribute(item)
    case (.legacy, .remove), (.resource, .remove), (.xdg, .remove): try clearAttribute(item)
    case (.legacy, .check), (.resource, .check), (.xdg, .check): try checkAttribute(item)
    case (.nodump, .check): try NodumpFlag.check(item)
    case (.cachedir, .check): try CacheDirectoryTag.check(item)
    case (.nodump, .read): try NodumpFlag.isMarked(item)
    case (.nodump, .write): try NodumpFlag.mark(item)
    case (.nodump, .remove): try NodumpFlag.clear(item)
    case (.cachedir, .read): try CacheDirectoryTag.isMarked(item)
    case (.cachedir, .write): try CacheDirectoryTag.mark(item)
    case (.cachedir, .remove): try CacheDirectoryTag.clear(item)
    }
  }
}
