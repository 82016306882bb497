import SkipBackupSystem

import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The kernel's protections for a sticky directory that others may write
/// (as /tmp and /dev/shm are), applied whatever the sysctls say: Linux
/// follows a symbolic link there only for the link's owner or when the
/// directory's owner owns it (`fs.protected_symlinks`), and refuses an
/// `O_CREAT` open of a file or FIFO there that belongs to neither the
/// opener nor the directory's owner (`fs.protected_regular`,
/// `fs.protected_fifos`, level 2: group-writable directories too). Both
/// sysctls are 0 in many containers, and a save that renames a new file
/// into place never meets them at all, so the rule is applied here, to
/// what one look at the name relative to the directory's descriptor found
/// (``DirectoryEntry``).
package enum SharedDirectory {
  /// Refuses `item` of the directory `directory` (both as `fstat` gives
  /// them) when the directory is shared and the item is neither this
  /// user's nor the directory owner's.
  package static func refuseForeign(
    _ item: stat, in directory: stat, path: FilePath
  ) throws(SkipBackupError) {
    guard isShared(directory) else { return }
    let user = system_geteuid()
    guard item.st_uid != user, item.st_uid != directory.st_uid else { return }
    throw SkipBackupError(
      refusing: .anotherUsersItemInSharedDirectory, path: path,
      fileType: FileType(rawValue: item.st_mode & S_IFMT))
  }

  /// Sticky, and writable by its group or by everyone.
  package static func isShared(_ directory: stat) -> Bool {
    directory.st_mode & S_IFMT == S_IFDIR && directory.st_mode & S_ISVTX != 0
      && directory.st_mode & (S_IWGRP | S_IWOTH) != 0
  }
}
