import CBtrfs

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The corresponding C function is `ioctl(2)` with
/// `BTRFS_IOC_GET_SUBVOL_INFO`, through CBtrfs: the subvolume ID of the
/// subvolume `fd` is in, and the transaction that made it.
package func system_btrfs_subvolume_identity(
  _ fd: CInt, _ treeid: inout UInt64, _ otransid: inout UInt64
) -> CInt {
  var tree: CUnsignedLongLong = 0
  var made: CUnsignedLongLong = 0
  let result = mocked(.btrfsSubvolumeInfo) { cbtrfs_subvolume_identity(fd, &tree, &made) }
  treeid = UInt64(tree)
  otransid = UInt64(made)
  return result
}

/// The corresponding C function is `ioctl(2)` with `BTRFS_IOC_FS_INFO`,
/// through CBtrfs: the 16-byte fsid of the btrfs filesystem `fd` is on.
package func system_btrfs_filesystem_id(_ fd: CInt, _ fsid: inout [UInt8]) -> CInt {
  fsid = [UInt8](repeating: 0, count: 16)
  return mocked(.btrfsFilesystemInfo) {
    fsid.withUnsafeMutableBufferPointer { cbtrfs_filesystem_id(fd, $0.baseAddress!) }
  }
}

/// The corresponding C function is `pthread_kill(3)`: a signal to one
/// thread of this process.
package func system_pthread_kill(_ thread: pthread_t, _ signal: CInt) -> CInt {
  mockedReturningErrno(.pthreadKill) { pthread_kill(thread, signal) }
}

/// The corresponding C function is `sigpending(2)`: the signals pending
/// for this thread or the process, blocked.
package func system_sigpending(_ set: UnsafeMutablePointer<sigset_t>) -> CInt {
  mocked(.sigpending) { sigpending(set) }
}

/// Cannot fail for a signal number the kernel has: `sigismember(3)`
/// refuses only a number out of range, and callers pass `SIG*` constants.
///
/// The corresponding C function is `sigismember(3)`.
package func system_sigismember(_ set: UnsafePointer<sigset_t>, _ signal: CInt) -> Bool {
  sigismember(set, signal) == 1
}
