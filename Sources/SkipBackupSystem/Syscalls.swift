// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Every raw call the library makes, one `system_` function per C call and
// no logic, in the manner of swift-system: no code outside this target
// calls libc itself (scripts/lint checks it). In debug builds each wrapper
// of a call that can fail first asks the mocking driver (Mocking.swift)
// whether to fail with a forced errno, under its SystemCall case; release
// builds compile that out. The few calls that cannot fail (exit, getenv,
// the pthread mutex calls on default mutexes) say why, in a doc line that
// begins "Cannot fail", and have no case. Errors are made from errno in
// one place: `valueOrErrno` and `Result.get(_:_:attribute:)` below.

import CBtrfs
import CFanotify
import CLinux
import CMount
import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// MARK: - Extended attributes by path

/// The corresponding C function is `getxattr(2)`.
package func system_getxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  mocked(.getxattr) { getxattr(path, name, value, size) }
}

/// The corresponding C function is `lgetxattr(2)`.
package func system_lgetxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  mocked(.lgetxattr) { lgetxattr(path, name, value, size) }
}

/// The corresponding C function is `setxattr(2)`.
package func system_setxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  mocked(.setxattr) { setxattr(path, name, value, size, flags) }
}

/// The corresponding C function is `lsetxattr(2)`.
package func system_lsetxattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>,
  _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  mocked(.lsetxattr) { lsetxattr(path, name, value, size, flags) }
}

/// The corresponding C function is `listxattr(2)`.
package func system_listxattr(
  _ path: UnsafePointer<CChar>, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  mocked(.listxattr) { listxattr(path, list, size) }
}

/// The corresponding C function is `llistxattr(2)`.
package func system_llistxattr(
  _ path: UnsafePointer<CChar>, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  mocked(.llistxattr) { llistxattr(path, list, size) }
}

/// The corresponding C function is `removexattr(2)`.
package func system_removexattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>
) -> CInt {
  mocked(.removexattr) { removexattr(path, name) }
}

/// The corresponding C function is `lremovexattr(2)`.
package func system_lremovexattr(
  _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>
) -> CInt {
  mocked(.lremovexattr) { lremovexattr(path, name) }
}

// MARK: - Extended attributes by descriptor

/// The corresponding C function is `fgetxattr(2)`.
package func system_fgetxattr(
  _ fd: CInt, _ name: UnsafePointer<CChar>, _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  mocked(.fgetxattr) { fgetxattr(fd, name, value, size) }
}

/// The corresponding C function is `fsetxattr(2)`.
package func system_fsetxattr(
  _ fd: CInt, _ name: UnsafePointer<CChar>, _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  mocked(.fsetxattr) { fsetxattr(fd, name, value, size, flags) }
}

/// The corresponding C function is `flistxattr(2)`.
package func system_flistxattr(
  _ fd: CInt, _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  mocked(.flistxattr) { flistxattr(fd, list, size) }
}

/// The corresponding C function is `fremovexattr(2)`.
package func system_fremovexattr(_ fd: CInt, _ name: UnsafePointer<CChar>) -> CInt {
  mocked(.fremovexattr) { fremovexattr(fd, name) }
}

// MARK: - Extended attributes relative to a directory (Linux 6.13)

/// The corresponding C function is `getxattrat(2)` (Linux 6.13), through
/// `syscall(2)` in CXattr: glibc 2.36 has no wrapper for it.
package func system_getxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ name: UnsafePointer<CChar>, _ value: UnsafeMutableRawPointer?, _ size: Int
) -> Int {
  mocked(.getxattrat) { cxattr_getxattrat(dirfd, path, atFlags, name, value, size) }
}

/// The corresponding C function is `setxattrat(2)` (Linux 6.13), through
/// `syscall(2)` in CXattr: glibc 2.36 has no wrapper for it.
package func system_setxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ name: UnsafePointer<CChar>, _ value: UnsafeRawPointer?, _ size: Int, _ flags: CInt
) -> CInt {
  mocked(.setxattrat) { cxattr_setxattrat(dirfd, path, atFlags, name, value, size, flags) }
}

/// The corresponding C function is `listxattrat(2)` (Linux 6.13), through
/// `syscall(2)` in CXattr: glibc 2.36 has no wrapper for it.
package func system_listxattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt,
  _ list: UnsafeMutablePointer<CChar>?, _ size: Int
) -> Int {
  mocked(.listxattrat) { cxattr_listxattrat(dirfd, path, atFlags, list, size) }
}

/// The corresponding C function is `removexattrat(2)` (Linux 6.13), through
/// `syscall(2)` in CXattr: glibc 2.36 has no wrapper for it.
package func system_removexattrat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ atFlags: CUnsignedInt, _ name: UnsafePointer<CChar>
) -> CInt {
  mocked(.removexattrat) { cxattr_removexattrat(dirfd, path, atFlags, name) }
}

// MARK: - Files and directories

/// The corresponding C function is `openat(2)`, through CLinux because it
/// is variadic in C.
package func system_openat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t
) -> CInt {
  mocked(.openat) { clinux_openat(dirfd, path, flags, mode) }
}

/// The corresponding C function is `openat2(2)` (Linux 5.6), through
/// `syscall(2)` in CLinux: glibc 2.36 has no wrapper for it.
package func system_openat2(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t, _ resolve: UInt64
) -> CInt {
  mocked(.openat2) {
    clinux_openat2(
      dirfd, path, CUnsignedLongLong(UInt32(bitPattern: flags)), CUnsignedLongLong(mode),
      CUnsignedLongLong(resolve))
  }
}

/// The corresponding C function is `renameat2(2)`, through CLinux: glibc
/// declares it only under `_GNU_SOURCE`.
package func system_renameat2(
  _ olddirfd: CInt, _ oldpath: UnsafePointer<CChar>, _ newdirfd: CInt,
  _ newpath: UnsafePointer<CChar>, _ flags: CUnsignedInt
) -> CInt {
  mocked(.renameat2) { clinux_renameat2(olddirfd, oldpath, newdirfd, newpath, flags) }
}

/// The corresponding C function is `close(2)`.
package func system_close(_ fd: CInt) -> CInt {
  mocked(.close) { close(fd) }
}

/// The corresponding C function is `read(2)`.
package func system_read(_ fd: CInt, _ buffer: UnsafeMutableRawPointer?, _ size: Int) -> Int {
  mocked(.read) { read(fd, buffer, size) }
}

/// The corresponding C function is `write(2)`.
package func system_write(_ fd: CInt, _ buffer: UnsafeRawPointer?, _ size: Int) -> Int {
  mocked(.write) { write(fd, buffer, size) }
}

/// The corresponding C function is `fsync(2)`.
package func system_fsync(_ fd: CInt) -> CInt {
  mocked(.fsync) { fsync(fd) }
}

/// The corresponding C function is `fchmod(2)`.
package func system_fchmod(_ fd: CInt, _ mode: mode_t) -> CInt {
  mocked(.fchmod) { fchmod(fd, mode) }
}

/// The corresponding C function is `getdents64(2)`, through CLinux.
package func system_getdents64(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ size: Int) -> Int {
  mocked(.getdents64) { clinux_getdents64(fd, buffer, size) }
}

/// The corresponding C function is `fstatat(2)`.
package func system_fstatat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<stat>, _ flags: CInt
) -> CInt {
  mocked(.fstatat) { fstatat(dirfd, path, buffer, flags) }
}

/// The corresponding C function is `fstat(2)`.
package func system_fstat(_ fd: CInt, _ buffer: UnsafeMutablePointer<stat>) -> CInt {
  mocked(.fstat) { fstat(fd, buffer) }
}

/// The corresponding C function is `statx(2)`, through `syscall(2)` in CLinux.
package func system_statx(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mask: CUnsignedInt,
  _ buffer: UnsafeMutablePointer<statx>
) -> CInt {
  mocked(.statx) { clinux_statx(dirfd, path, flags, mask, buffer) }
}

/// The corresponding C function is `renameat(2)`.
package func system_renameat(
  _ olddirfd: CInt, _ oldpath: UnsafePointer<CChar>, _ newdirfd: CInt,
  _ newpath: UnsafePointer<CChar>
) -> CInt {
  mocked(.renameat) { renameat(olddirfd, oldpath, newdirfd, newpath) }
}

/// The corresponding C function is `linkat(2)`.
package func system_linkat(
  _ olddirfd: CInt, _ oldpath: UnsafePointer<CChar>, _ newdirfd: CInt,
  _ newpath: UnsafePointer<CChar>, _ flags: CInt
) -> CInt {
  mocked(.linkat) { linkat(olddirfd, oldpath, newdirfd, newpath, flags) }
}

/// The corresponding C function is `flock(2)`.
package func system_flock(_ fd: CInt, _ operation: CInt) -> CInt {
  mocked(.flock) { flock(fd, operation) }
}

/// The corresponding C function is `unlinkat(2)`.
package func system_unlinkat(_ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt {
  mocked(.unlinkat) { unlinkat(dirfd, path, flags) }
}

/// The corresponding C function is `realpath(3)`.
package func system_realpath(
  _ path: UnsafePointer<CChar>, _ resolved: UnsafeMutablePointer<CChar>?
) -> UnsafeMutablePointer<CChar>? {
  mocked(.realpath) { realpath(path, resolved) }
}

/// The corresponding C function is `readlinkat(2)`.
package func system_readlinkat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int
) -> Int {
  mocked(.readlinkat) { readlinkat(dirfd, path, buffer, size) }
}

// MARK: - Inode flags (chattr)

/// The corresponding C function is `ioctl(2)` with `FS_IOC_GETFLAGS`, through
/// CLinux because `ioctl` is variadic in C.
package func system_get_inode_flags(_ fd: CInt, _ flags: UnsafeMutablePointer<CInt>) -> CInt {
  mocked(.getInodeFlags) { clinux_get_inode_flags(fd, flags) }
}

/// The corresponding C function is `ioctl(2)` with `FS_IOC_SETFLAGS`, through
/// CLinux because `ioctl` is variadic in C.
package func system_set_inode_flags(_ fd: CInt, _ flags: UnsafePointer<CInt>) -> CInt {
  mocked(.setInodeFlags) { clinux_set_inode_flags(fd, flags) }
}

// MARK: - libattr

/// What /etc/xattr.conf says of the attribute `name`: `ATTR_ACTION_SKIP`,
/// `ATTR_ACTION_PERMISSIONS` (ACLs), or 0 for an ordinary one; -1 when the
/// file is there but cannot be read or parsed.
///
/// The corresponding C function is `attr_copy_action(3)` (libattr), through
/// CXattr, which gives it an error context: libattr answers 0 for every
/// name when it cannot read or parse the file (`attr_copy_action.c`), and
/// says why only through that context. Here that is -1 with the errno.
package func system_attr_copy_action(_ name: UnsafePointer<CChar>) -> CInt {
  mocked(.attrCopyAction) { cxattr_attr_copy_action(name) }
}

// MARK: - Process

/// The corresponding C function is `getrlimit(2)`.
package func system_getrlimit(_ resource: CInt, _ limit: UnsafeMutablePointer<rlimit>) -> CInt {
  mocked(.getrlimit) { getrlimit(__rlimit_resource_t(UInt32(resource)), limit) }
}

/// The corresponding C function is `setrlimit(2)`.
package func system_setrlimit(_ resource: CInt, _ limit: UnsafePointer<rlimit>) -> CInt {
  mocked(.setrlimit) { setrlimit(__rlimit_resource_t(UInt32(resource)), limit) }
}

/// The corresponding C function is `fchown(2)`.
package func system_fchown(_ fd: CInt, _ owner: uid_t, _ group: gid_t) -> CInt {
  mocked(.fchown) { fchown(fd, owner, group) }
}

/// A pipe whose two ends are closed on exec from the start, so that no
/// other child (another walk thread may be starting one) inherits them:
/// `pipe` and then `fcntl` left a window between the two.
///
/// The corresponding C function is `pipe2(2)`.
package func system_pipe2(_ fds: UnsafeMutablePointer<CInt>, _ flags: CInt) -> CInt {
  mocked(.pipe2) { clinux_pipe2(fds, flags) }
}

/// The corresponding C function is `waitpid(2)`.
package func system_waitpid(
  _ pid: pid_t, _ status: UnsafeMutablePointer<CInt>, _ options: CInt
) -> pid_t {
  mocked(.waitpid) { waitpid(pid, status, options) }
}

/// The corresponding C function is `posix_spawn(3)`, with default
/// attributes; it returns the error number rather than setting `errno`.
package func system_posix_spawn(
  _ pid: UnsafeMutablePointer<pid_t>, _ path: UnsafePointer<CChar>,
  _ actions: UnsafePointer<posix_spawn_file_actions_t>,
  _ argv: UnsafePointer<UnsafeMutablePointer<CChar>?>,
  _ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>
) -> CInt {
  mockedReturningErrno(.posixSpawn) { posix_spawn(pid, path, actions, nil, argv, environment) }
}

/// The corresponding C function is `posix_spawn_file_actions_init(3)`; it
/// returns the error number.
package func system_posix_spawn_file_actions_init(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>
) -> CInt {
  mockedReturningErrno(.posixSpawnFileActionsInit) { posix_spawn_file_actions_init(actions) }
}

/// The corresponding C function is `posix_spawn_file_actions_addopen(3)`;
/// it returns the error number.
package func system_posix_spawn_file_actions_addopen(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: CInt,
  _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t
) -> CInt {
  mockedReturningErrno(.posixSpawnFileActionsAddopen) {
    posix_spawn_file_actions_addopen(actions, fd, path, flags, mode)
  }
}

/// The corresponding C function is `posix_spawn_file_actions_adddup2(3)`;
/// it returns the error number.
package func system_posix_spawn_file_actions_adddup2(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: CInt, _ target: CInt
) -> CInt {
  mockedReturningErrno(.posixSpawnFileActionsAdddup2) {
    posix_spawn_file_actions_adddup2(actions, fd, target)
  }
}

/// Cannot fail on what `posix_spawn_file_actions_init` made: glibc frees
/// the list and returns 0.
///
/// The corresponding C function is `posix_spawn_file_actions_destroy(3)`.
package func system_posix_spawn_file_actions_destroy(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>
) {
  _ = posix_spawn_file_actions_destroy(actions)
}

/// The corresponding C function is `access(2)`.
package func system_access(_ path: UnsafePointer<CChar>, _ mode: CInt) -> CInt {
  mocked(.access) { access(path, mode) }
}

/// Cannot fail: `free(3)` returns nothing.
///
/// The corresponding C function is `free(3)`, for what `realpath(3)` and
/// `getcwd(3)` allocate.
package func system_free(_ pointer: UnsafeMutableRawPointer?) {
  free(pointer)
}

/// Cannot fail: `umask(2)` always succeeds.
///
/// The corresponding C function is `umask(2)`.
package func system_umask(_ mask: mode_t) -> mode_t {
  umask(mask)
}

/// Cannot fail: `getenv(3)` answers `NULL` for a variable that is not set, and only then.
///
/// The corresponding C function is `getenv(3)`.
package func system_getenv(_ name: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? {
  getenv(name)
}

/// The corresponding C function is `getcwd(3)`, which allocates the result
/// when given no buffer; the caller frees it.
package func system_getcwd() -> UnsafeMutablePointer<CChar>? {
  mocked(.getcwd) { getcwd(nil, 0) }
}

// MARK: - Terminal and time

/// Cannot fail: `isatty(3)` answers 0 for "no" whatever the reason
/// (`ENOTTY`, `EBADF`), and no caller asks why.
///
/// The corresponding C function is `isatty(3)`.
package func system_isatty(_ fd: CInt) -> CInt {
  isatty(fd)
}

/// Cannot fail; does not return.
///
/// The corresponding C function is `exit(3)`.
package func system_exit(_ status: CInt) -> Never {
  exit(status)
}

/// Cannot fail: `pause(2)` returns only after a signal's handler ran.
///
/// The corresponding C function is `pause(2)`.
package func system_pause() {
  _ = pause()
}

/// Cannot fail on the clocks the callers name (`CLOCK_MONOTONIC_COARSE`, Linux 2.6.32;
/// `CLOCK_MONOTONIC`): `EINVAL`
/// is for a clock the kernel lacks.
///
/// The corresponding C function is `clock_gettime(2)`.
package func system_clock_gettime(_ clock: clockid_t, _ time: UnsafeMutablePointer<timespec>)
  -> CInt
{
  clock_gettime(clock, time)
}

/// Cannot fail: `sigemptyset(3)` refuses only a null set.
///
/// The corresponding C function is `sigemptyset(3)`.
package func system_sigemptyset(_ set: UnsafeMutablePointer<sigset_t>) {
  _ = sigemptyset(set)
}

/// Cannot fail for a signal number the kernel has: `sigaddset(3)` refuses
/// only a number out of range, and callers pass `SIG*` constants.
///
/// The corresponding C function is `sigaddset(3)`.
package func system_sigaddset(_ set: UnsafeMutablePointer<sigset_t>, _ signal: CInt) {
  _ = sigaddset(set, signal)
}

/// The corresponding C function is `sigaction(2)`.
package func system_sigaction(
  _ signal: CInt, _ action: UnsafePointer<sigaction>?, _ old: UnsafeMutablePointer<sigaction>?
) -> CInt {
  mocked(.sigaction) { sigaction(signal, action, old) }
}

// MARK: - Threads

/// The corresponding C function is `pthread_create(3)`, with default attributes.
package func system_pthread_create(
  _ thread: UnsafeMutablePointer<pthread_t>,
  _ start: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
  _ argument: UnsafeMutableRawPointer?
) -> CInt {
  mockedReturningErrno(.pthreadCreate) { pthread_create(thread, nil, start, argument) }
}

/// The corresponding C function is `pthread_join(3)`.
package func system_pthread_join(_ thread: pthread_t) -> CInt {
  mockedReturningErrno(.pthreadJoin) { pthread_join(thread, nil) }
}

/// Cannot fail with default attributes: glibc checks only the attributes
/// (nptl/pthread_mutex_init.c).
///
/// The corresponding C function is `pthread_mutex_init(3)`, with default attributes.
package func system_pthread_mutex_init(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> CInt {
  pthread_mutex_init(mutex, nil)
}

/// Cannot fail on a mutex nobody holds, which is when the callers destroy it.
///
/// The corresponding C function is `pthread_mutex_destroy(3)`.
package func system_pthread_mutex_destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> CInt {
  pthread_mutex_destroy(mutex)
}

/// Cannot fail on a default mutex: `EDEADLK` and `EAGAIN` are for error-checking and recursive
/// ones.
///
/// The corresponding C function is `pthread_mutex_lock(3)`.
package func system_pthread_mutex_lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> CInt {
  pthread_mutex_lock(mutex)
}

/// Cannot fail on a default mutex: `EBUSY`, another thread holds it, is
/// an answer, and the error-checking and recursive ones' errors are not its.
///
/// The corresponding C function is `pthread_mutex_trylock(3)`.
package func system_pthread_mutex_trylock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> CInt {
  pthread_mutex_trylock(mutex)
}

/// Cannot fail on a default mutex the caller holds.
///
/// The corresponding C function is `pthread_mutex_unlock(3)`.
package func system_pthread_mutex_unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> CInt {
  pthread_mutex_unlock(mutex)
}

/// Cannot fail with default attributes: glibc returns 0 (nptl/pthread_cond_init.c).
///
/// The corresponding C function is `pthread_cond_init(3)`, with default attributes.
package func system_pthread_cond_init(_ condition: UnsafeMutablePointer<pthread_cond_t>) -> CInt {
  pthread_cond_init(condition, nil)
}

/// Cannot fail on a condition nobody waits on, which is when the callers destroy it.
///
/// The corresponding C function is `pthread_cond_destroy(3)`.
package func system_pthread_cond_destroy(_ condition: UnsafeMutablePointer<pthread_cond_t>)
  -> CInt
{
  pthread_cond_destroy(condition)
}

/// Cannot fail: glibc returns 0, after a signal too (the caller checks its predicate again).
///
/// The corresponding C function is `pthread_cond_wait(3)`.
package func system_pthread_cond_wait(
  _ condition: UnsafeMutablePointer<pthread_cond_t>, _ mutex: UnsafeMutablePointer<pthread_mutex_t>
) -> CInt {
  pthread_cond_wait(condition, mutex)
}

/// Cannot fail: glibc returns 0.
///
/// The corresponding C function is `pthread_cond_signal(3)`.
package func system_pthread_cond_signal(_ condition: UnsafeMutablePointer<pthread_cond_t>) -> CInt {
  pthread_cond_signal(condition)
}

/// Cannot fail: glibc returns 0.
///
/// The corresponding C function is `pthread_cond_broadcast(3)`.
package func system_pthread_cond_broadcast(_ condition: UnsafeMutablePointer<pthread_cond_t>)
  -> CInt
{
  pthread_cond_broadcast(condition)
}

/// The corresponding C function is `sysconf(3)`.
package func system_sysconf(_ name: CInt) -> Int {
  mocked(.sysconf) { sysconf(name) }
}

/// The corresponding C function is `poll(2)`.
package func system_poll(
  _ descriptors: UnsafeMutablePointer<pollfd>, _ count: Int, _ timeout: CInt
)
  -> CInt
{
  mocked(.poll) { poll(descriptors, nfds_t(count), timeout) }
}

// MARK: - From errno to a result

/// Runs a raw call until it is not interrupted; -1 becomes the errno. The
/// one place above the wrappers that reads `errno`: every failure of a
/// call goes through here (or through ``Errno/init(returned:)``, for the
/// calls that return their error number), and becomes a
/// ``SkipBackupError`` through `Result.get(_:_:attribute:)`.
/// Inlinable, so that the layers above get it specialized (AttributeName.withCString).
@inlinable @inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(_ call: () -> I) -> Result<I, Errno> {
  while true {
    let result = call()
    if result != -1 { return .success(result) }
    let errno = Errno.current
    if errno != .interrupted { return .failure(errno) }
  }
}

/// ``valueOrErrno(_:)-(()->I)`` for a call that is not made again after
/// `EINTR`: `close(2)`, which on Linux has closed the descriptor whatever
/// it answers, so that a second call could close another thread's new one.
@inlinable @inline(__always)
package func valueOrErrnoOnce<I: FixedWidthInteger>(_ call: () -> I) -> Result<I, Errno> {
  let result = call()
  return result != -1 ? .success(result) : .failure(Errno.current)
}

/// ``valueOrErrno(_:)-(()->I)`` for a call that returns a pointer, and
/// `NULL` on failure (`realpath`, `getcwd`).
@inlinable @inline(__always)
package func valueOrErrno<P>(
  _ call: () -> UnsafeMutablePointer<P>?
) -> Result<UnsafeMutablePointer<P>, Errno> {
  while true {
    if let result = call() { return .success(result) }
    let errno = Errno.current
    if errno != .interrupted { return .failure(errno) }
  }
}

/// Runs a raw call until it is not interrupted; -1 becomes a
/// ``SkipBackupError`` naming `call` and `path`.
@discardableResult
package func check(_ call: SystemCall, _ path: FilePath, _ body: () -> CInt) throws(SkipBackupError)
  -> CInt
{
  try valueOrErrno(body).get(call, path)
}

extension Result where Failure == Errno {
  /// The value, or the errno as the ``SkipBackupError`` of `call` on `path`
  /// (and `attribute`): the one place where an errno becomes an error.
  @inline(__always)
  package func get(
    _ call: SystemCall, _ path: FilePath, attribute: AttributeName? = nil
  ) throws(SkipBackupError) -> Success {
    switch self {
    case .success(let value): return value
    case .failure(let errno): throw SkipBackupError(call, errno, path: path, attribute: attribute)
    }
  }
}

extension Errno {
  /// The calling thread's `errno`: the one place that reads the C variable,
  /// for ``valueOrErrno(_:)-(()->I)`` alone.
  @inlinable static var current: Errno { Errno(rawValue: Glibc.errno) }

  /// The error number a call returns instead of setting `errno`
  /// (`posix_spawn`, the `pthread` calls).
  package init(returned code: CInt) { self.init(rawValue: code) }
}

// MARK: - Looking at an item to explain a refusal

/// The corresponding C function is `fstatfs(2)`.
package func system_fstatfs(_ fd: CInt, _ buffer: UnsafeMutablePointer<statfs>) -> CInt {
  mocked(.fstatfs) { fstatfs(fd, buffer) }
}

/// Cannot fail: `geteuid(2)` always succeeds.
///
/// The corresponding C function is `geteuid(2)`.
package func system_geteuid() -> uid_t {
  geteuid()
}

/// Cannot fail: `getuid(2)` always succeeds.
///
/// The corresponding C function is `getuid(2)`.
package func system_getuid() -> uid_t {
  getuid()
}

/// Returns 0 and sets `result` to `nil` when there is no such user, or the
/// error number itself (it does not set `errno`).
///
/// The corresponding C function is `getpwuid_r(3)`.
package func system_getpwuid_r(
  _ uid: uid_t, _ entry: UnsafeMutablePointer<passwd>, _ buffer: UnsafeMutablePointer<CChar>,
  _ size: Int, _ result: UnsafeMutablePointer<UnsafeMutablePointer<passwd>?>
) -> CInt {
  mockedReturningErrno(.getpwuidR) { getpwuid_r(uid, entry, buffer, size, result) }
}

// MARK: - Mount namespaces and the new mount API (skipbackup run)

/// The inode flags (`chattr`) that tmpfs keeps (mm/shmem.c's
/// SHMEM_FL_USER_MODIFIABLE on Linux 6.18, casefolding aside), for the tool,
/// which imports no C module: the view's layer carries these of each
/// real directory it stands for.
package enum InodeFlag {
  package static let immutable = FS_IMMUTABLE_FL
  package static let appendOnly = FS_APPEND_FL
  package static let noDump = FS_NODUMP_FL
  package static let noAccessTime = FS_NOATIME_FL
}

/// The flags statfs(2) reports in `f_flags` (`ST_*` of <sys/statvfs.h>,
/// which Swift sees only under `_GNU_SOURCE`).
package enum FilesystemFlag {
  package static let noSetUserID = CMOUNT_ST_NOSUID
  package static let noDevices = CMOUNT_ST_NODEV
  package static let noExecution = CMOUNT_ST_NOEXEC
  package static let noAccessTime = CMOUNT_ST_NOATIME
  package static let noDirectoryAccessTime = CMOUNT_ST_NODIRATIME
  package static let relativeAccessTime = CMOUNT_ST_RELATIME

  /// The `f_flags` of the filesystem `fd` is on, as mounted there
  /// (statfs(2)), for the tool, to which `struct statfs` is not visible.
  package static func flags(of fd: CInt) -> Result<UInt, Errno> {
    var status = statfs()
    return valueOrErrno { system_fstatfs(fd, &status) }.map { _ in UInt(status.f_flags) }
  }

  /// The identity of the filesystem `fd` is on, statfs(2)'s `f_fsid`, as
  /// its 8 bytes (what fanotify(7) names each event's filesystem by), and
  /// its type, `f_type`.
  package static func identity(of fd: CInt) -> Result<(identity: [UInt8], type: Int64), Errno> {
    var status = statfs()
    return valueOrErrno { system_fstatfs(fd, &status) }.map { _ in
      (withUnsafeBytes(of: status.f_fsid) { Array($0) }, Int64(status.f_type))
    }
  }
}

/// The corresponding C function is `unshare(2)`, through CMount: glibc
/// declares it only under `_GNU_SOURCE`.
package func system_unshare(_ flags: CInt) -> CInt {
  mocked(.unshare) { cmount_unshare(flags) }
}

/// The corresponding C function is `mount(2)`, through `syscall(2)` in
/// CMount: `<sys/mount.h>` clashes with `<linux/fs.h>` in glibc 2.36.
package func system_mount(
  _ source: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>,
  _ type: UnsafePointer<CChar>?, _ flags: UInt, _ data: UnsafeRawPointer?
) -> CInt {
  mocked(.mount) { cmount_mount(source, target, type, flags, data) }
}

/// The corresponding C function is `fsopen(2)` (Linux 5.2), through `syscall(2)` in CMount.
package func system_fsopen(_ name: UnsafePointer<CChar>, _ flags: CUnsignedInt) -> CInt {
  mocked(.fsopen) { cmount_fsopen(name, flags) }
}

/// The corresponding C function is `fsconfig(2)` (Linux 5.2), through `syscall(2)` in CMount.
package func system_fsconfig(
  _ fd: CInt, _ command: CUnsignedInt, _ key: UnsafePointer<CChar>?,
  _ value: UnsafeRawPointer?, _ aux: CInt
) -> CInt {
  mocked(.fsconfig) { cmount_fsconfig(fd, command, key, value, aux) }
}

/// The corresponding C function is `fsmount(2)` (Linux 5.2), through `syscall(2)` in CMount.
package func system_fsmount(_ fd: CInt, _ flags: CUnsignedInt, _ attributes: CUnsignedInt)
  -> CInt
{
  mocked(.fsmount) { cmount_fsmount(fd, flags, attributes) }
}

/// The corresponding C function is `move_mount(2)` (Linux 5.2), through `syscall(2)` in CMount.
package func system_move_mount(
  _ fromDirectory: CInt, _ fromPath: UnsafePointer<CChar>, _ toDirectory: CInt,
  _ toPath: UnsafePointer<CChar>, _ flags: CUnsignedInt
) -> CInt {
  mocked(.moveMount) { cmount_move_mount(fromDirectory, fromPath, toDirectory, toPath, flags) }
}

/// The corresponding C function is `mknodat(2)`, through CLinux: `makedev` is a macro.
package func system_mknodat(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ mode: mode_t, _ major: CUnsignedInt,
  _ minor: CUnsignedInt
) -> CInt {
  mocked(.mknodat) { clinux_mknodat(dirfd, path, mode, major, minor) }
}

/// The corresponding C function is `mkdirat(2)`.
package func system_mkdirat(_ dirfd: CInt, _ path: UnsafePointer<CChar>, _ mode: mode_t) -> CInt {
  mocked(.mkdirat) { mkdirat(dirfd, path, mode) }
}

/// The corresponding C function is `futimens(3)`.
package func system_futimens(_ fd: CInt, _ times: UnsafePointer<timespec>) -> CInt {
  mocked(.futimens) { futimens(fd, times) }
}

/// The corresponding C function is `chdir(2)`.
package func system_chdir(_ path: UnsafePointer<CChar>) -> CInt {
  mocked(.chdir) { chdir(path) }
}

/// The corresponding C function is `execvp(3)`; it returns only on failure.
package func system_execvp(
  _ file: UnsafePointer<CChar>, _ arguments: UnsafePointer<UnsafeMutablePointer<CChar>?>
) -> CInt {
  mocked(.execvp) { execvp(file, arguments) }
}

/// Cannot fail: `getegid(2)` always succeeds.
///
/// The corresponding C function is `getegid(2)`.
package func system_getegid() -> gid_t {
  getegid()
}

/// The corresponding C function is `dup(2)`.
package func system_dup(_ fd: CInt) -> CInt {
  mocked(.dup) { dup(fd) }
}

/// The corresponding C function is `fcntl(2)` with `F_DUPFD_CLOEXEC`: a
/// duplicate closed on exec from the start, through CLinux because `fcntl`
/// is variadic. Mocked as `dup`, which it is with that flag.
package func system_fcntl_dupfd_cloexec(_ fd: CInt) -> CInt {
  mocked(.dup) { clinux_dup_cloexec(fd) }
}

/// The corresponding C function is `dup2(2)`.
package func system_dup2(_ fd: CInt, _ target: CInt) -> CInt {
  mocked(.dup2) { dup2(fd, target) }
}

/// The corresponding C function is `setenv(3)`.
package func system_setenv(
  _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>, _ overwrite: CInt
) -> CInt {
  mocked(.setenv) { setenv(name, value, overwrite) }
}

// MARK: - Snapshots (skipbackup run --snapshot)

/// The snapshot calls' constants, for the tool, which imports no C module.
package enum SnapshotFlag {
  package static let btrfsMagic = CBTRFS_SUPER_MAGIC
  package static let subvolumeRootInode = CBTRFS_SUBVOLUME_ROOT_INODE
  package static let readOnly = CBTRFS_SUBVOL_RDONLY
  /// Room for the subvolumes one call of ``system_btrfs_subvolume_children`` names.
  package static let childrenMost = Int(CBTRFS_CHILDREN_MOST)
  /// Room for the path ``system_btrfs_subvolume_place`` writes.
  package static let placeMost = Int(CBTRFS_PLACE_MOST)
}

/// The corresponding C function is `ioctl(2)` with `BTRFS_IOC_SNAP_CREATE_V2`,
/// through CBtrfs: a snapshot of the subvolume whose root is open as
/// `source`, made in the directory `destination` as `name`.
package func system_btrfs_snapshot_create(
  _ destination: CInt, _ source: CInt, _ name: UnsafePointer<CChar>, _ readOnly: Bool
) -> CInt {
  mocked(.btrfsSnapshotCreate) {
    cbtrfs_snapshot_create(destination, source, name, readOnly ? 1 : 0)
  }
}

/// The corresponding C function is `ioctl(2)` with `BTRFS_IOC_SNAP_DESTROY`,
/// through CBtrfs: deletes the subvolume `name` of the directory `parent`.
package func system_btrfs_snapshot_destroy(_ parent: CInt, _ name: UnsafePointer<CChar>) -> CInt {
  mocked(.btrfsSnapshotDestroy) { cbtrfs_snapshot_destroy(parent, name) }
}

/// The corresponding C function is `ioctl(2)` with `BTRFS_IOC_SUBVOL_GETFLAGS`, through CBtrfs.
package func system_btrfs_subvolume_get_flags(_ fd: CInt, _ flags: UnsafeMutablePointer<UInt64>)
  -> CInt
{
  mocked(.btrfsSubvolumeGetFlags) {
    flags.withMemoryRebound(to: CUnsignedLongLong.self, capacity: 1) {
      cbtrfs_subvolume_get_flags(fd, $0)
    }
  }
}

/// The corresponding C function is `ioctl(2)` with `BTRFS_IOC_SUBVOL_SETFLAGS`, through CBtrfs.
package func system_btrfs_subvolume_set_flags(_ fd: CInt, _ flags: UInt64) -> CInt {
  var value = CUnsignedLongLong(flags)
  return mocked(.btrfsSubvolumeSetFlags) { cbtrfs_subvolume_set_flags(fd, &value) }
}

/// The subvolumes made directly in the btrfs subvolume `fd` is in, from
/// tree id `next` on: each one's tree id and the number of the directory
/// holding it, `CBTRFS_CHILDREN_MOST` at most; 1 when more follow, 0
/// after the last, -1 with errno.
///
/// The corresponding C function is `ioctl(2)` with
/// `BTRFS_IOC_GET_SUBVOL_ROOTREF`, through CBtrfs.
package func system_btrfs_subvolume_children(
  _ fd: CInt, _ next: inout UInt64, _ treeids: UnsafeMutablePointer<CUnsignedLongLong>,
  _ dirids: UnsafeMutablePointer<CUnsignedLongLong>, _ count: inout CInt
) -> CInt {
  var from = CUnsignedLongLong(next)
  defer { next = UInt64(from) }
  return mocked(.btrfsSubvolumeChildren) {
    cbtrfs_subvolume_children(fd, &from, treeids, dirids, &count)
  }
}

/// Where the subvolume `treeid`, made in the directory `dirid`, is below
/// the subvolume's root `fd`, into `path` (`CBTRFS_PLACE_MOST`
/// bytes): the directory's path ("" or ending in "/") and the subvolume's
/// name, NUL-terminated.
///
/// The corresponding C function is `ioctl(2)` with
/// `BTRFS_IOC_INO_LOOKUP_USER`, through CBtrfs.
package func system_btrfs_subvolume_place(
  _ fd: CInt, _ dirid: UInt64, _ treeid: UInt64, _ path: UnsafeMutablePointer<CChar>
) -> CInt {
  mocked(.btrfsSubvolumePlace) {
    cbtrfs_subvolume_place(fd, CUnsignedLongLong(dirid), CUnsignedLongLong(treeid), path)
  }
}

/// One step of a search of the tree of the btrfs subvolume `fd` is in for
/// the inodes that hold an extended attribute, the nodump flag, or are a
/// character device, ascending; CAP_SYS_ADMIN only. `inodes` has room for
/// `CBTRFS_SEARCH_MOST`; `done` is set after the last step.
///
/// The corresponding C function is `ioctl(2)` with
/// `BTRFS_IOC_TREE_SEARCH_V2`, through CBtrfs.
package func system_btrfs_inode_search_step(
  _ fd: CInt, _ search: OpaquePointer, _ inodes: UnsafeMutablePointer<CUnsignedLongLong>,
  _ done: inout CInt
) -> Int {
  mocked(.btrfsTreeSearch) { cbtrfs_inode_search_step(fd, search, inodes, &done) }
}

/// How many numbers one step of a search may write.
package let btrfsInodeSearchMost = Int(CBTRFS_SEARCH_MOST)

/// Cannot fail: without memory for its megabyte it stops the process, as
/// Swift's own allocations do.
///
/// The state of a search (``system_btrfs_inode_search_step(_:_:_:_:)``), for
/// one range after another; the corresponding C function is `calloc(3)`,
/// through CBtrfs.
package func system_btrfs_inode_search_new() -> OpaquePointer {
  cbtrfs_inode_search_new()
}

/// Cannot fail: it only sets fields.
///
/// Points a search's state at the objectids `first` to `last`.
package func system_btrfs_inode_search_start(
  _ search: OpaquePointer, _ first: UInt64, _ last: UInt64
) {
  cbtrfs_inode_search_start(search, CUnsignedLongLong(first), CUnsignedLongLong(last))
}

/// Whether the kernel allows the search
/// (``system_btrfs_inode_search_step(_:_:_:_:)``) on the btrfs subvolume `fd`
/// is in: CAP_SYS_ADMIN only.
///
/// The corresponding C function is `ioctl(2)` with
/// `BTRFS_IOC_TREE_SEARCH_V2`, for one item, through CBtrfs.
package func system_btrfs_inode_search_allowed(_ fd: CInt) -> CInt {
  mocked(.btrfsTreeSearch) { cbtrfs_inode_search_allowed(fd) }
}

/// Cannot fail: `free(3)` returns nothing.
///
/// Frees a search's state.
package func system_btrfs_inode_search_free(_ search: OpaquePointer) {
  cbtrfs_inode_search_free(search)
}

/// The corresponding C function is `fork(2)`, through CLinux.
package func system_fork() -> pid_t {
  mocked(.fork) { pid_t(clinux_fork()) }
}

/// The corresponding C function is `kill(2)`.
package func system_kill(_ pid: pid_t, _ signal: CInt) -> CInt {
  mocked(.kill) { kill(pid, signal) }
}

/// Cannot fail: `getpid(2)` always succeeds.
///
/// The corresponding C function is `getpid(2)`.
package func system_getpid() -> pid_t {
  getpid()
}

/// Cannot fail: `getppid(2)` always succeeds.
///
/// The corresponding C function is `getppid(2)`.
package func system_getppid() -> pid_t {
  getppid()
}

/// The corresponding C function is `sigprocmask(2)`.
package func system_sigprocmask(
  _ how: CInt, _ set: UnsafePointer<sigset_t>?, _ old: UnsafeMutablePointer<sigset_t>?
) -> CInt {
  mocked(.sigprocmask) { sigprocmask(how, set, old) }
}

/// The corresponding C function is `sigwaitinfo(2)`, through CLinux, which
/// also gives the signal's `si_code`: whether a process sent it (`SI_USER`,
/// 0, and below) or the kernel (a terminal's ^C, `SI_KERNEL`).
package func system_sigwaitinfo(_ set: UnsafePointer<sigset_t>, _ code: UnsafeMutablePointer<CInt>)
  -> CInt
{
  mocked(.sigwaitinfo) { clinux_wait_signal(set, code) }
}

/// The corresponding C function is `prctl(2)` with `PR_SET_PDEATHSIG`, through CLinux.
package func system_set_parent_death_signal(_ signal: CInt) -> CInt {
  mocked(.setParentDeathSignal) { clinux_set_parent_death_signal(signal) }
}

/// Cannot fail; does not return. For a process that must not run exit
/// handlers or flush buffers that a forked copy of it flushes too.
///
/// The corresponding C function is `_exit(2)`.
package func system__exit(_ status: CInt) -> Never {
  _exit(status)
}

/// The corresponding C function is `open_tree(2)` (Linux 5.2), through `syscall(2)` in CMount.
package func system_open_tree(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CUnsignedInt
) -> CInt {
  mocked(.openTree) { cmount_open_tree(dirfd, path, flags) }
}

/// The corresponding C function is `mount_setattr(2)` (Linux 5.12), setting
/// `attributes` and clearing none, through `syscall(2)` in CMount.
package func system_mount_setattr(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ flags: CUnsignedInt, _ attributes: UInt64
) -> CInt {
  mocked(.mountSetattr) { cmount_mount_setattr(dirfd, path, flags, attributes) }
}

/// The corresponding C function is `fchdir(2)`.
package func system_fchdir(_ fd: CInt) -> CInt {
  mocked(.fchdir) { fchdir(fd) }
}

/// The corresponding C function is `chroot(2)`.
package func system_chroot(_ path: UnsafePointer<CChar>) -> CInt {
  mocked(.chroot) { chroot(path) }
}

// MARK: - Watching a tree while run's view is made

/// The corresponding C function is `fanotify_init(2)`.
package func system_fanotify_init(_ flags: CUnsignedInt, _ eventFlags: CUnsignedInt) -> CInt {
  mocked(.fanotifyInit) { cfanotify_fanotify_init(flags, eventFlags) }
}

/// The corresponding C function is `fanotify_mark(2)`.
package func system_fanotify_mark(
  _ fd: CInt, _ flags: CUnsignedInt, _ mask: UInt64, _ dirfd: CInt,
  _ path: UnsafePointer<CChar>?
) -> CInt {
  mocked(.fanotifyMark) { cfanotify_fanotify_mark(fd, flags, mask, dirfd, path) }
}

/// The corresponding C function is `name_to_handle_at(2)`, into `handle`,
/// a buffer of struct file_handle's two fields and `MAX_HANDLE_SZ` bytes.
package func system_name_to_handle_at(
  _ dirfd: CInt, _ path: UnsafePointer<CChar>, _ handle: UnsafeMutableRawPointer,
  _ mountID: UnsafeMutablePointer<CInt>, _ flags: CInt
) -> CInt {
  mocked(.nameToHandleAt) { cfanotify_name_to_handle_at(dirfd, path, handle, mountID, flags) }
}

/// The corresponding C function is `read(2)` of an fanotify group's events:
/// a call of its own, so that a test can act just before the view is
/// checked for changes (`SKIPBACKUP_RACE=read(fanotify):N:...`).
package func system_read_events(_ fd: CInt, _ buffer: UnsafeMutableRawPointer?, _ size: Int)
  -> Int
{
  mocked(.readEvents) { read(fd, buffer, size) }
}
