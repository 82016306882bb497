import SkipBackupSystem

/// A way to record that an item stays on the device but out of backups.
///
/// Apple has two: iOS 5.0.1's ``legacy`` attribute and, from iOS 5.1, the
/// `isExcludedFromBackup` resource value (``resource``). Linux conventions
/// add ``xdg`` (the freedesktop attribute), ``nodump`` (the inode flag) and
/// ``cachedir`` (``CacheDirectoryTag``). An attribute mechanism's name and
/// the bytes its mark writes are ``attributeName`` and ``markValue``. A
/// ``MechanismSet`` acts with several at once.
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
  public var marksDirectoriesOnly: Bool { definition.directoriesOnly }

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

  /// Sends `operation` to where the table says this mark is kept: an
  /// extended attribute (AttributeMarks.swift), the inode flag or the tag
  /// file. One switch over two closed enums, which allocates nothing: a
  /// table of closures in its place allocated a closure context on every
  /// call (`swift_allocObject` in the release build's `Mechanism.mark`),
  /// once per entry and mechanism in `mark -R`.
  private func perform(
    _ operation: Operation, on item: FileItem
  ) throws(SkipBackupError) -> Bool {
    switch (definition.store, operation) {
    case (.attribute, .read): try isAttributeMarked(item)
    case (.attribute, .write): try markAttribute(item)
    case (.attribute, .remove): try clearAttribute(item)
    case (.attribute, .check): try checkAttribute(item)
    case (.nodumpFlag, .check): try NodumpFlag.check(item)
    case (.cacheDirectoryTag, .check): try CacheDirectoryTag.check(item)
    case (.nodumpFlag, .read): try NodumpFlag.isMarked(item)
    case (.nodumpFlag, .write): try NodumpFlag.mark(item)
    case (.nodumpFlag, .remove): try NodumpFlag.clear(item)
    case (.cacheDirectoryTag, .read): try CacheDirectoryTag.isMarked(item)
    case (.cacheDirectoryTag, .write): try CacheDirectoryTag.mark(item)
    case (.cacheDirectoryTag, .remove): try CacheDirectoryTag.clear(item)
    }
  }
}

// MARK: - The table of mechanisms

extension Mechanism {
  /// Where a mechanism keeps its mark.
  package enum Store: Sendable {
    /// An extended attribute: its Linux name (with `user.`), the bytes a
    /// mark writes, and which values count as a mark.
    case attribute(name: StaticString, mark: StaticString, counts: ValueRule)
    /// The nodump inode flag, `FS_NODUMP_FL` (`chattr +d`): NodumpFlag.swift.
    case nodumpFlag
    /// A `CACHEDIR.TAG` file in a directory: CacheDirectoryTag.swift.
    case cacheDirectoryTag
  }

  /// Which values of a mechanism's attribute are a mark.
  package enum ValueRule: Sendable {
    /// Any value: the attribute's presence is the mark.
    case anyValue
    /// A value whose first byte is not 0.
    case firstByteNotZero
    /// Exactly the mark's bytes.
    case markBytes
  }

  /// Who else writes a mechanism's mark, which decides the named sets and
  /// the forms a mark can have on disk.
  package enum Origin: Sendable {
    /// Apple's: a Mac writes it, so it is in the set `apple`, and a Linux
    /// file server that shares folders with Macs keeps it in a form of its
    /// own (MacServerForms.swift: ``SambaStream``).
    case apple
    /// A Linux convention, written on Linux only.
    case linux
  }

  /// One row of the table of mechanisms. No field has a default: a new
  /// row names each, so that nothing a mechanism needs is left out unseen.
  package struct Definition: Sendable {
    /// Where the mark is kept.
    package var store: Store
    /// The mechanism's bit in a ``MechanismSet``.
    package var bit: UInt8
    /// Whether only directories can carry the mark.
    package var directoriesOnly: Bool
    /// Whether the mechanism is in the default set, ``MechanismSet/all``:
    /// what clear, status, list, export, du, run and the library's
    /// `isExcludedFromBackup` act on when no set is named. A new row
    /// decides it here, or every one of them changes what it does unasked.
    package var inDefaultSet: Bool
    /// Who else writes the mark.
    package var origin: Origin
    /// What the mark is, as `-m`'s help says it after the name:
    /// `legacy (iOS 5.0.1's com.apple.MobileBackup)`.
    package var summary: StaticString
    /// What the mark is, as a sentence of the tool's help names it before
    /// the name: `iOS 5.0.1's com.apple.MobileBackup attribute (legacy)`.
    package var prose: StaticString
  }

  /// The table of the mechanisms: where each keeps its mark, with which
  /// bytes, what counts as set, and how the help names it. A sixth
  /// mechanism is a case of ``Mechanism`` and a row here, plus its tests;
  /// docs/architecture.md ("The table of mechanisms") lists the places a
  /// new row reaches, and the compiler points at the rest.
  ///
  /// Every field is a literal (no array, no reference), so reading a row
  /// on a walk's hot path retains and allocates nothing.
  package var definition: Definition {
    switch self {
    case .legacy:
      // iOS 5.0.1's attribute, `com.apple.MobileBackup` holding one byte, 1
      // (QA1719, listing 3); under the name `rsync -X` gives it from a Mac.
      // It is a mark when its first byte is not 0.
      Definition(
        store: .attribute(
          name: "user.com.apple.MobileBackup", mark: "\u{1}", counts: .firstByteNotZero),
        bit: 1 << 0, directoriesOnly: false, inDefaultSet: true, origin: .apple,
        summary: "iOS 5.0.1's com.apple.MobileBackup",
        prose: "iOS 5.0.1's com.apple.MobileBackup attribute")
    case .resource:
      // The `isExcludedFromBackup` resource value of iOS 5.1 and macOS: the
      // attribute `com.apple.metadata:com_apple_backup_excludeItem`, whose
      // value is the 61-byte binary property list of the string
      // `com.apple.backupd`, as a Mac writes it:
      //   "bplist00", 5f 10 11 (an ASCII string whose length, 17, follows),
      //   "com.apple.backupd", 08 (the offset table: the object at byte 8),
      //   the trailer: 6 unused bytes, 01 01 (offset and reference sizes),
      //   1 object (8 bytes), the top object 0 (8), the offset table at 28 (8).
      // Any value is a mark, as borg reads it and as macOS honours it.
      Definition(
        store: .attribute(
          name: "user.com.apple.metadata:com_apple_backup_excludeItem",
          mark: """
            bplist00_\u{10}\u{11}com.apple.backupd\u{8}\0\0\0\0\0\0\u{1}\u{1}\
            \0\0\0\0\0\0\0\u{1}\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\u{1C}
            """,
          counts: .anyValue),
        bit: 1 << 1, directoriesOnly: false, inDefaultSet: true, origin: .apple,
        summary: "the iOS 5.1 isExcludedFromBackup resource value",
        prose: "the isExcludedFromBackup resource value of iOS 5.1 and later")
    case .xdg:
      // freedesktop.org's "Common Extended Attributes": only `false` is a
      // mark (borg 2 reads it so); `true` says the opposite and is left
      // alone by clear.
      Definition(
        store: .attribute(name: "user.xdg.robots.backup", mark: "false", counts: .markBytes),
        bit: 1 << 2, directoriesOnly: false, inDefaultSet: true, origin: .linux,
        summary: "user.xdg.robots.backup", prose: "the freedesktop user.xdg.robots.backup attribute"
      )
    case .nodump:
      Definition(
        store: .nodumpFlag, bit: 1 << 3, directoriesOnly: false, inDefaultSet: false,
        origin: .linux,
        summary: "the inode flag chattr +d sets", prose: "the nodump inode flag")
    case .cachedir:
      Definition(
        store: .cacheDirectoryTag, bit: 1 << 4, directoriesOnly: true, inDefaultSet: false,
        origin: .linux,
        summary: "a CACHEDIR.TAG in a directory", prose: "a CACHEDIR.TAG")
    }
  }

  /// Whether the mark is kept in an extended attribute.
  package var isAttribute: Bool {
    switch definition.store {
    case .attribute: true
    case .nodumpFlag, .cacheDirectoryTag: false
    }
  }

  /// The mechanisms kept in an extended attribute, in order: the set
  /// ``MechanismSet/attributes``.
  package static let attributeMechanisms = allCases.filter(\.isAttribute)
}
