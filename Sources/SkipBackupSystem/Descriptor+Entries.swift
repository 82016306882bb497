// The typed calls of the marks room and the app exports: on an entry that
// a caller reaches by a directory number no Descriptor owns, and on what a
// Descriptor is open on (inode flags, a lock, a whole write, a link).
//
// A FileItem is a walk's entry: a C name in the walk's buffer, relative to
// a directory the walk's frames hold raw (docs/architecture.md, the walk's
// raw calls), or the working directory. Its calls take those as they are,
// and the path a failure names is made only on failure (`reporting`): made
// for every successful call, a FilePath costs 11.5 % of du's instructions
// (docs/performance.md).

import CLinux
import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// MARK: - An entry by a directory number

extension Descriptor {
  /// The status of `name` in the directory `directory` (or
  /// `AT_FDCWD`), `fstatat(2)`; a failure names `reporting()`.
  @inlinable
  package static func status(
    of name: UnsafePointer<CChar>, in directory: CInt, _ flags: AtFlags,
    reporting: () -> FilePath
  ) throws(SkipBackupError) -> stat {
    var status = stat()
    if case .failure(let errno) = valueOrErrno({
      system_fstatat(directory, name, &status, flags.rawValue)
    }) {
      throw SkipBackupError(.fstatat, errno, path: reporting())
    }
    return status
  }

  /// What `statx(2)` says of `name` in `directory` for `mask`; a failure
  /// names `reporting()`.
  @inlinable
  package static func extendedStatus(
    of name: UnsafePointer<CChar>, in directory: CInt, _ flags: AtFlags, mask: CUnsignedInt,
    reporting: () -> FilePath
  ) throws(SkipBackupError) -> statx {
    var status = statx()
    if case .failure(let errno) = valueOrErrno({
      system_statx(directory, name, flags.rawValue, mask, &status)
    }) {
      throw SkipBackupError(.statx, errno, path: reporting())
    }
    return status
  }

  /// Opens `name` in `directory` (or `AT_FDCWD`), close-on-exec; the
  /// descriptor and a failure name `reporting()`.
  package static func open(
    _ name: UnsafePointer<CChar>, in directory: CInt, _ flags: OpenFlags, mode: mode_t = 0,
    reporting: () -> FilePath
  ) throws(SkipBackupError) -> Descriptor {
    switch valueOrErrno({
      system_openat(directory, name, flags.union(.closeOnExec).rawValue, mode)
    }) {
    case .success(let number): return Descriptor(adopting: number, path: reporting())
    case .failure(let errno): throw SkipBackupError(.openat, errno, path: reporting())
    }
  }
}

// MARK: - What a descriptor is open on

extension Descriptor {
  /// Its inode flags (`FS_IOC_GETFLAGS`, what `lsattr` shows).
  package func inodeFlags() throws(SkipBackupError) -> CInt {
    var flags: CInt = 0
    _ = try valueOrErrno { system_get_inode_flags(rawValue, &flags) }.get(.getInodeFlags, path)
    return flags
  }

  /// Sets its inode flags to `flags` (`FS_IOC_SETFLAGS`, what `chattr`
  /// does); the error names `reporting`, or else its path.
  package func setInodeFlags(_ flags: CInt, reporting: FilePath? = nil) throws(SkipBackupError) {
    var flags = flags
    _ = try valueOrErrno { system_set_inode_flags(rawValue, &flags) }.get(
      .setInodeFlags, reporting ?? path)
  }

  /// Takes an exclusive `flock(2)` on it: waits for it, or with
  /// `waiting: false` answers `false` at once when another holds it.
  @discardableResult
  package func lockExclusively(waiting: Bool = true) throws(SkipBackupError) -> Bool {
    switch valueOrErrno({ system_flock(rawValue, LOCK_EX | (waiting ? 0 : LOCK_NB)) }) {
    case .success: return true
    case .failure(.wouldBlock) where !waiting: return false
    case .failure(let errno): throw SkipBackupError(.flock, errno, path: path)
    }
  }

  /// Writes all of `bytes` (``OutputDescriptor/writeAll(_:to:)-(UnsafeRawBufferPointer,_)``).
  package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SkipBackupError) {
    _ = try OutputDescriptor.writeAll(bytes, to: rawValue).get(.write, path)
  }

  /// Writes all of `bytes`.
  package func writeAll(_ bytes: [UInt8]) throws(SkipBackupError) {
    _ = try OutputDescriptor.writeAll(bytes, to: rawValue).get(.write, path)
  }

  /// Gives its entry `name` the second name `newName` in `directory`
  /// (`linkat(2)`, a link not followed); `EEXIST` when that is taken.
  package func link(
    _ name: FilePath, as newName: FilePath, in directory: borrowing Descriptor
  ) throws(SkipBackupError) {
    let target = directory.rawValue
    _ = try name.withCString { old in
      newName.withCString { new in
        valueOrErrno { system_linkat(rawValue, old, target, new, 0) }
      }
    }.get(.linkat, directory.path.appending(newName.components))
  }

  /// Renames its entry `name` to `newName` in the same directory with
  /// `renameat(2)`, which every filesystem has (``rename(_:to:in:_:)``'s
  /// `renameat2` is refused by some FUSE filesystems, `EINVAL`).
  package func rename(_ name: FilePath, to newName: FilePath) throws(SkipBackupError) {
    _ = try name.withCString { old in
      newName.withCString { new in
        valueOrErrno { system_renameat(rawValue, old, rawValue, new) }
      }
    }.get(.renameat, path.appending(newName.components))
  }
}

// MARK: - Neither a path nor a descriptor of the caller's

/// Whether /etc/xattr.conf says a copy passes the attribute `name` over
/// (`ATTR_ACTION_SKIP`), as libattr's `attr_copy_action(3)` reads it; a
/// file that is there but cannot be read or parsed fails, naming it.
package func copySkipsAttribute(_ name: AttributeName) throws(SkipBackupError) -> Bool {
  try name.withCString { cName in valueOrErrno { system_attr_copy_action(cName) } }
    .get(.attrCopyAction, "/etc/xattr.conf") == ATTR_ACTION_SKIP
}

/// The working directory's path as the kernel gives it (`getcwd(3)`).
package func currentDirectory() throws(SkipBackupError) -> FilePath {
  let directory = try valueOrErrno { system_getcwd() }.get(.getcwd, ".")
  defer { system_free(directory) }
  return FilePath(platformString: directory)
}

/// The login name of the user `user` (`getpwuid_r(3)`), or `nil` when the
/// user database has no such user; a failure of the look-up names `shown`.
package func loginName(of user: uid_t, reporting shown: FilePath) throws(SkipBackupError)
  -> [UInt8]?
{
  var size = 16 * 1024
  while true {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
    defer { buffer.deallocate() }
    let returned = system_getpwuid_r(user, &entry, buffer, size, &result)
    if returned == 0 {
      guard let result, let name = result.pointee.pw_name else { return nil }
      return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }
    let errno = Errno(returned: returned)
    guard errno == .outOfRange, size < 1 << 20 else {
      throw SkipBackupError(.getpwuidR, errno, path: shown)
    }
    size *= 2
  }
}

extension Descriptor {
  /// The item this descriptor is open on, opened again with `flags`
  /// through `/proc/self/fd/N`, which leads to that inode whatever its
  /// path leads to now: an item looked at through an `O_PATH` descriptor
  /// is then read without a second resolution of its path.
  package func reopen(_ flags: OpenFlags) throws(SkipBackupError) -> Descriptor {
    let number = try FilePath("/proc/self/fd/\(rawValue)").withCString { name in
      valueOrErrno { system_openat(CLINUX_AT_FDCWD, name, flags.union(.closeOnExec).rawValue, 0) }
    }.get(.openat, path)
    return Descriptor(adopting: number, path: path)
  }
}
