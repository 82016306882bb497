// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Every raw call the library makes, one `system_` function per C call and
// no logic, in the manner of swift-system. Errors are made from errno in
// one place: `valueOrErrno` in SkipBackupError.swift.

import CXattr

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// MARK: - Extended attributes by path

internal func system_getxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  getxattr(path, name, value, size)
}

internal func system_lgetxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  lgetxattr(path, name, value, size)
}

internal func system_setxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  setxattr(path, name, value, size, flags)
}

internal func system_lsetxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  lsetxattr(path, name, value, size, flags)
}

internal func system_listxattr(
  _ path: UnsafePointer<CChar>, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  listxattr(path, list, size)
}

internal func system_llistxattr(
  _ path: UnsafePointer<CChar>, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  llistxattr(path, list, size)
}

internal func system_removexattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>
) -> CInt {
  removexattr(path, name)
}

internal func system_lremovexattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>
) -> CInt {
  lremovexattr(path, name)
}

// MARK: - Extended attributes by descriptor

internal func system_fgetxattr(
  _ fd: CInt, _ name: UnsafePointer<CChar>, _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  fgetxattr(fd, name, value, size)
}

internal func system_fsetxattr(
  _ fd: CInt, _ name: UnsafePointer<CChar>, _ value: UnsafeRawPointer?, _ size: Int,
  _ flags: CInt
) -> CInt {
  fsetxattr(fd, name, value, size, flags)
}

internal func system_flistxattr(
  _ fd: CInt, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  flistxattr(fd, list, size)
}

internal func system_fremovexattr(_ fd: CInt, _ name: UnsafePointer<CChar>) -> CInt {
  fremovexattr(fd, name)
}

// MARK: - Extended attributes relative to a directory (Linux 6.13)

internal func system_getxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ name: UnsafePointer<CChar>, _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  cxattr_getxattrat(dirfd, path, atFlags, name, value, size)
}

internal func system_setxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ name: UnsafePointer<CChar>, _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  cxattr_setxattrat(dirfd, path, atFlags, name, value, size, flags)
}

internal func system_listxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  cxattr_listxattrat(dirfd, path, atFlags, list, size)
}

internal func system_removexattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ name: UnsafePointer<CChar>
) -> CInt {
  cxattr_removexattrat(dirfd, path, atFlags, name)
}

// MARK: - Files and directories

internal func system_openat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t
) -> CInt {
  cxattr_openat(dirfd, path, flags, mode)
}

internal func system_close(_ fd: CInt) -> CInt {
  close(fd)
}

internal func system_read(_ fd: CInt, _ buffer: UnsafeMutableRawPointer?, _ size: Int) -> Int {
  read(fd, buffer, size)
}

internal func system_write(_ fd: CInt, _ buffer: UnsafeRawPointer?, _ size: Int) -> Int {
  write(fd, buffer, size)
}

internal func system_fsync(_ fd: CInt) -> CInt {
  fsync(fd)
}

internal func system_fchmod(_ fd: CInt, _ mode: mode_t) -> CInt {
  fchmod(fd, mode)
}

internal func system_getdents64(
  _ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ size: Int
) -> Int {
  cxattr_getdents64(fd, buffer, size)
}

internal func system_fstatat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<stat>,
  _ flags: CInt
) -> CInt {
  fstatat(dirfd, path, buffer, flags)
}

internal func system_fstat(_ fd: CInt, _ buffer: UnsafeMutablePointer<stat>) -> CInt {
  fstat(fd, buffer)
}

internal func system_statx(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mask: CUnsignedInt,
  _ buffer: UnsafeMutablePointer<statx>
) -> CInt {
  cxattr_statx(dirfd, path, flags, mask, buffer)
}

internal func system_renameat(
  _ olddirfd: CInt, _ oldpath: UnsafePointer<CChar>, _ newdirfd: CInt,
  _ newpath: UnsafePointer<CChar>
) -> CInt {
  renameat(olddirfd, oldpath, newdirfd, newpath)
}

internal func system_linkat(
  _ olddirfd: CInt, _ oldpath: UnsafePointer<CChar>, _ newdirfd: CInt,
  _ newpath: UnsafePointer<CChar>, _ flags: CInt
) -> CInt {
  linkat(olddirfd, oldpath, newdirfd, newpath, flags)
}

internal func system_flock(_ fd: CInt, _ operation: CInt) -> CInt {
  flock(fd, operation)
}

internal func system_unlinkat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt
) -> CInt {
  unlinkat(dirfd, path, flags)
}

internal func system_realpath(
  _ path: UnsafePointer<CChar>, _ resolved: UnsafeMutablePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
  realpath(path, resolved)
}

// MARK: - Inode flags (chattr)

internal func system_getInodeFlags(_ fd: CInt, _ flags: UnsafeMutablePointer<CInt>) -> CInt {
  cxattr_get_inode_flags(fd, flags)
}

internal func system_setInodeFlags(_ fd: CInt, _ flags: UnsafePointer<CInt>) -> CInt {
  cxattr_set_inode_flags(fd, flags)
}

// MARK: - libattr

/// What /etc/xattr.conf says of the attribute `name`: `ATTR_ACTION_SKIP`,
/// `ATTR_ACTION_PERMISSIONS` (ACLs), or 0 for an ordinary one.
internal func system_attr_copy_action(_ name: UnsafePointer<CChar>) -> CInt {
  attr_copy_action(name, nil)
}

// MARK: - Process

internal func system_getrlimit(_ resource: CInt, _ limit: UnsafeMutablePointer<rlimit>) -> CInt {
  getrlimit(__rlimit_resource_t(UInt32(resource)), limit)
}

internal func system_setrlimit(_ resource: CInt, _ limit: UnsafePointer<rlimit>) -> CInt {
  setrlimit(__rlimit_resource_t(UInt32(resource)), limit)
}

internal func system_fchown(_ fd: CInt, _ owner: uid_t, _ group: gid_t) -> CInt {
  fchown(fd, owner, group)
}

internal func system_umask(_ mask: mode_t) -> mode_t {
  umask(mask)
}

// MARK: - Threads

internal func system_pthread_create(
  _ thread: UnsafeMutablePointer<pthread_t>,
  _ start: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
  _ argument: UnsafeMutableRawPointer?
) -> CInt {
  pthread_create(thread, nil, start, argument)
}

internal func system_pthread_join(_ thread: pthread_t) -> CInt {
  pthread_join(thread, nil)
}

internal func system_usleep(_ microseconds: useconds_t) -> CInt {
  usleep(microseconds)
}

internal func system_sysconf(_ name: CInt) -> Int {
  sysconf(name)
}
