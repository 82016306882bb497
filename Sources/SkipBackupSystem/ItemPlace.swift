import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where an item is: its inode, its device and the mount it is reached
/// through, as `statx(2)` reports them (the mount id from Linux 5.8). Two
/// directories on one device but reached through different mounts (a bind
/// mount of a directory inside a btrfs subvolume) differ here.
package struct ItemPlace: Equatable {
  package let inode: UInt64
  package let deviceMajor: UInt32
  package let deviceMinor: UInt32
  package let mountID: UInt64

  /// The item at `path`, a link not followed.
  package init(of path: FilePath) throws(SkipBackupError) {
    var buffer = statx()
    let result = path.withCString { name in
      valueOrErrno {
        system_statx(
          CLINUX_AT_FDCWD, name, AT_SYMLINK_NOFOLLOW,
          CUnsignedInt(STATX_INO) | CUnsignedInt(STATX_MNT_ID), &buffer)
      }
    }
    if case .failure(let errno) = result { throw SkipBackupError(.statx, errno, path: path) }
    inode = buffer.stx_ino
    deviceMajor = buffer.stx_dev_major
    deviceMinor = buffer.stx_dev_minor
    mountID = buffer.stx_mnt_id
  }

  /// Whether both are on one device, reached through one mount.
  package func sharesMount(with other: ItemPlace) -> Bool {
    deviceMajor == other.deviceMajor && deviceMinor == other.deviceMinor
      && mountID == other.mountID
  }
}

/// The type of the filesystem `path` is on (statfs(2)'s `f_type`, a magic
/// number of linux/magic.h), a link at `path` not followed.
package func filesystemType(at path: FilePath) throws(SkipBackupError) -> UInt {
  let opened = path.withCString { name in
    valueOrErrno {
      system_openat(CLINUX_AT_FDCWD, name, CLINUX_O_PATH | O_NOFOLLOW | O_CLOEXEC, 0)
    }
  }
  let descriptor: CInt
  switch opened {
  case .success(let value): descriptor = value
  case .failure(let errno): throw SkipBackupError(.openat, errno, path: path)
  }
  defer { _ = system_close(descriptor) }
  var status = statfs()
  if case .failure(let errno) = valueOrErrno({ system_fstatfs(descriptor, &status) }) {
    throw SkipBackupError(.fstatfs, errno, path: path)
  }
  return UInt(bitPattern: Int(status.f_type))
}

/// The 64-bit ID, never reused, of the mount on top at `path`, a link not
/// followed and nothing automounted (statx's `STATX_MNT_ID_UNIQUE`,
/// linux/stat.h, Linux 6.8); `nil` before 6.8, or when `path` cannot be
/// looked at. The mount table's own IDs are reused at once: a tmpfs
/// mounted, unmounted and mounted again on one directory got the same ID
/// and device number (42 and 0:39, four times in a row; Linux 6.18).
package func uniqueMountID(at path: FilePath) -> UInt64? {
  // STATX_MNT_ID_UNIQUE, which Debian 12's headers do not define.
  let unique: CUnsignedInt = 0x4000
  var buffer = statx()
  let result = path.withCString { name in
    valueOrErrno {
      system_statx(
        CLINUX_AT_FDCWD, name, AT_SYMLINK_NOFOLLOW | CLINUX_AT_NO_AUTOMOUNT, unique, &buffer)
    }
  }
  guard case .success = result, buffer.stx_mask & unique != 0 else { return nil }
  return buffer.stx_mnt_id
}
