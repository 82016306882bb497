import SkipBackupSystem

import CXattr
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
/// sysctls are 0 in many containers, and a save that resolves a link by
/// itself never meets them at all: root's `export -o /tmp/x` then replaced
/// the root-owned file another user's link named.
package enum SharedDirectory {
  /// The item at `path`, as it stands in its directory, before anything
  /// writes there. `shared` says the directory is sticky and others may
  /// write it: then a link is followed only if `trustedLink`.
  package struct Check {
    package var shared: Bool
    /// The item there is a link this check let through (then no one else
    /// can replace it: the sticky bit keeps others from renaming it).
    package var trustedLink: Bool
  }

  /// Refuses, naming `path`, when the item there is another user's in a
  /// sticky directory others may write; says what it found.
  package static func check(_ path: FilePath) throws(SkipBackupError) -> Check {
    let parent = path.removingLastComponent().isEmpty ? "." : path.removingLastComponent()
    var directory = stat()
    guard parent.withCString({ system_fstatat(CXATTR_AT_FDCWD, $0, &directory, 0) }) == 0,
      isShared(directory)
    else { return Check(shared: false, trustedLink: false) }
    var item = stat()
    let found = path.withCString { pointer in
      valueOrErrno { system_fstatat(CXATTR_AT_FDCWD, pointer, &item, AT_SYMLINK_NOFOLLOW) }
    }
    switch found {
    case .failure(.noSuchFileOrDirectory): return Check(shared: true, trustedLink: false)
    case .failure(let errno): throw SkipBackupError(.fstatat, errno, path: path)
    case .success: break
    }
    try refuseForeign(item, in: directory, path: path)
    return Check(shared: true, trustedLink: item.st_mode & S_IFMT == S_IFLNK)
  }

  /// ``refuseForeign(_:in:path:)`` for the file `descriptor` just opened at
  /// `path`: the open's own file, so that one swapped in between ``check(_:)``
  /// and the open (another user's, in a sticky directory) is refused before
  /// anything is written to it.
  ///
  /// The corresponding C functions are `fstat(2)` and `fstatat(2)`.
  package static func refuseForeign(
    opened descriptor: CInt, at path: FilePath
  ) throws(SkipBackupError) {
    let parent = path.removingLastComponent().isEmpty ? "." : path.removingLastComponent()
    var directory = stat()
    var item = stat()
    if case .failure(let errno) = valueOrErrno({ system_fstat(descriptor, &item) }) {
      throw SkipBackupError(.fstat, errno, path: path)
    }
    let looked = parent.withCString { pointer in
      valueOrErrno { system_fstatat(CXATTR_AT_FDCWD, pointer, &directory, 0) }
    }
    if case .failure(let errno) = looked { throw SkipBackupError(.fstatat, errno, path: parent) }
    try refuseForeign(item, in: directory, path: path)
  }

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
