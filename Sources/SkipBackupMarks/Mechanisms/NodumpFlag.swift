import SkipBackupSystem
import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The nodump inode flag, `FS_NODUMP_FL`, which `chattr +d` sets:
/// ``Mechanism/nodump``.
///
/// borg `--exclude-nodump`, bsdtar `--nodump` and dump honour it. It is read
/// with `statx(2)` without opening the item; setting it needs the item's
/// owner or root, as `chattr` does.
package enum NodumpFlag {
  static func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let buffer = try item.extendedStatus(mask: 0).get(explaining: item)
    let nodump = UInt64(STATX_ATTR_NODUMP)
    if buffer.stx_attributes_mask & nodump != 0 {
      return buffer.stx_attributes & nodump != 0
    }
    // A filesystem that does not report the flag through statx: ask it, for
    // regular files and directories, the only items that carry inode flags.
    let type = mode_t(buffer.stx_mode) & S_IFMT
    guard type == S_IFREG || type == S_IFDIR else { return false }
    do {
      return try withFlags(of: item) { flags in flags & FS_NODUMP_FL != 0 }
    } catch  where Self.keepsNoFlags(error) {
      return false  // a filesystem without inode flags (procfs, NFS, FAT) carries no mark
    }
  }

  static func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try update(item) { $0 | FS_NODUMP_FL }
  }

  static func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    do {
      return try update(item) { $0 & ~FS_NODUMP_FL }
    } catch  where Self.keepsNoFlags(error) && error.call == .getInodeFlags {
      return false  // no inode flags here, so nothing to clear
    } catch  where error.refusal == .inodeFlagsNeedFileOrDirectory {
      return false  // a link, device, FIFO or socket carries no flag to clear
    }
  }

  /// Whether `error` says the filesystem has no inode flags: `ENOTTY` from
  /// filesystems without the ioctl, `EOPNOTSUPP` from some that have it.
  private static func keepsNoFlags(_ error: SkipBackupError) -> Bool {
    (error.call?.isInodeFlags ?? false)
      && (error.errno == .inappropriateIOCTLForDevice || error.errno == .notSupported)
  }

  /// Throws what ``mark(_:)`` or ``clear(_:)`` would fail with, and
  /// writes nothing: the same refusal of what is no file or directory, the
  /// same reading of the flags, and what `FS_IOC_SETFLAGS` checks before
  /// it writes: the caller owns the item (or is root), and the item is
  /// neither immutable nor append-only. Setting the same flags to find out
  /// would change the item's ctime.
  static func check(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let status = try item.status()
    let type = FileType(rawValue: status.st_mode & S_IFMT)
    guard type == .regular || type == .directory else {
      throw SkipBackupError(
        refusing: .inodeFlagsNeedFileOrDirectory, path: item.displayPath, fileType: type)
    }
    let flags = try withFlags(of: item) { $0 }
    let user = system_geteuid()
    if (user != 0 && user != status.st_uid) || flags & (FS_IMMUTABLE_FL | FS_APPEND_FL) != 0 {
      throw SkipBackupError(.setInodeFlags, .notPermitted, path: item.displayPath)
    }
    return false
  }

  /// Changes the flags through `change`; writes only when they differ.
  ///
  /// As chattr does, refuses an item that is neither a regular file nor a
  /// directory before opening it: opening a device can act on the device.
  private static func update(
    _ item: FileItem, _ change: (CInt) -> CInt
  ) throws(SkipBackupError) -> Bool {
    let type = FileType(rawValue: try item.status().st_mode & S_IFMT)
    guard type == .regular || type == .directory else {
      throw SkipBackupError(
        refusing: .inodeFlagsNeedFileOrDirectory, path: item.displayPath, fileType: type)
    }
    let file = try item.open(.nonBlocking)
    do throws(SkipBackupError) {
      let flags = try file.inodeFlags()
      let wanted = change(flags)
      guard wanted != flags else { return false }
      try file.setInodeFlags(wanted)
      return true
    } catch {
      throw item.explained(error)
    }
  }

  private static func withFlags<R>(
    of item: FileItem, _ body: (CInt) -> R
  ) throws(SkipBackupError) -> R {
    let file = try item.open(.nonBlocking)
    do throws(SkipBackupError) {
      return body(try file.inodeFlags())
    } catch {
      throw item.explained(error)
    }
  }
}
