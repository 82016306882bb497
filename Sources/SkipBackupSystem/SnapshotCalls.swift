// The calls `run --snapshot` makes on an open directory: where it is
// (statx), a lock on it (flock), and btrfs's subvolume ioctls. Each on a
// ``Descriptor``, carrying its own SystemCall case, so that the snapshot
// provider reaches a subvolume, its snapshot and its snapshot directory
// only by the descriptor it opened once.

import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension ItemPlace {
  /// The item open as `descriptor` (`statx(2)` with `AT_EMPTY_PATH`).
  package init(of descriptor: borrowing Descriptor) throws(SkipBackupError) {
    var buffer = statx()
    let number = descriptor.rawValue
    _ = try valueOrErrno {
      system_statx(
        number, "", CLINUX_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
        CUnsignedInt(STATX_INO) | CUnsignedInt(STATX_MNT_ID), &buffer)
    }.get(.statx, descriptor.path)
    inode = buffer.stx_ino
    deviceMajor = buffer.stx_dev_major
    deviceMinor = buffer.stx_dev_minor
    mountID = buffer.stx_mnt_id
  }
}

/// How a lock is taken on an open file (`flock(2)`).
package enum FileLock {
  /// Shared: as many holders as take it.
  case shared
  /// Exclusive: one holder, and no shared one.
  case exclusive

  fileprivate var operation: CInt {
    switch self {
    case .shared: LOCK_SH
    case .exclusive: LOCK_EX
    }
  }
}

extension Descriptor {
  /// Takes `lock` on the file it is open on, waiting for the holders of a
  /// lock that conflicts.
  package func lock(_ lock: FileLock) throws(SkipBackupError) {
    let number = rawValue
    _ = try valueOrErrno { system_flock(number, lock.operation) }.get(.flock, path)
  }

  /// Takes `lock` if no other holder's conflicts: `false` when one does
  /// (`EWOULDBLOCK`).
  package func tryLock(_ lock: FileLock) throws(SkipBackupError) -> Bool {
    let number = rawValue
    switch valueOrErrno({ system_flock(number, lock.operation | LOCK_NB) }) {
    case .success: return true
    case .failure(.wouldBlock): return false
    case .failure(let errno): throw SkipBackupError(.flock, errno, path: path)
    }
  }
}

// MARK: - btrfs

/// Which btrfs subvolume an open item is in: the filesystem, the
/// subvolume ID and the transaction that made it. No path or inode number
/// says it: every subvolume's root is inode 256, so another user's swap of
/// a directory on the way to one for a link to another (root's, in a 0700
/// directory) passes a check by inode number.
package struct SubvolumeIdentity: Equatable, Sendable {
  package let filesystem: [UInt8]
  package let id: UInt64
  package let made: UInt64

  package init(filesystem: [UInt8], id: UInt64, made: UInt64) {
    self.filesystem = filesystem
    self.id = id
    self.made = made
  }
}

extension Descriptor {
  /// The subvolume this item is in (not `O_PATH`: an ioctl).
  package func subvolumeIdentity() throws(SkipBackupError) -> SubvolumeIdentity {
    let number = rawValue
    var fsid: [UInt8] = []
    _ = try valueOrErrno { system_btrfs_filesystem_id(number, &fsid) }.get(
      .btrfsFilesystemInfo, path)
    var id: UInt64 = 0
    var made: UInt64 = 0
    _ = try valueOrErrno { system_btrfs_subvolume_identity(number, &id, &made) }.get(
      .btrfsSubvolumeInfo, path)
    return SubvolumeIdentity(filesystem: fsid, id: id, made: made)
  }

  /// Whether the subvolume whose root this is is read-only (its
  /// `BTRFS_SUBVOL_RDONLY` flag, which any user may read; the kernel
  /// answers `EINVAL` for any other directory: fs/btrfs/ioctl.c,
  /// btrfs_ioctl_subvol_getflags).
  package func isReadOnlySubvolume() throws(SkipBackupError) -> Bool {
    try subvolumeFlags() & SnapshotFlag.readOnly != 0
  }

  /// The flags of the subvolume whose root this is.
  package func subvolumeFlags() throws(SkipBackupError) -> UInt64 {
    let number = rawValue
    var flags: UInt64 = 0
    _ = try valueOrErrno { system_btrfs_subvolume_get_flags(number, &flags) }.get(
      .btrfsSubvolumeGetFlags, path)
    return flags
  }

  /// Sets the flags of the subvolume whose root this is.
  package func setSubvolumeFlags(_ flags: UInt64) throws(SkipBackupError) {
    let number = rawValue
    _ = try valueOrErrno { system_btrfs_subvolume_set_flags(number, flags) }.get(
      .btrfsSubvolumeSetFlags, path)
  }

  /// Makes in this directory the snapshot `name` of the subvolume whose
  /// root `source` is open on (read-only when `readOnly`); the error
  /// names `reporting`.
  package func makeSnapshot(
    of source: borrowing Descriptor, named name: [UInt8], readOnly: Bool, reporting: FilePath
  ) throws(SkipBackupError) {
    let (number, from) = (rawValue, source.rawValue)
    let cName = name.map { CChar(bitPattern: $0) } + [0]
    _ = try cName.withUnsafeBufferPointer { buffer in
      valueOrErrno { system_btrfs_snapshot_create(number, from, buffer.baseAddress!, readOnly) }
    }.get(.btrfsSnapshotCreate, reporting)
  }

  /// Deletes the subvolume `name` of this directory; the error names
  /// `reporting`.
  package func destroySubvolume(named name: [UInt8], reporting: FilePath) throws(SkipBackupError) {
    let number = rawValue
    let cName = name.map { CChar(bitPattern: $0) } + [0]
    _ = try cName.withUnsafeBufferPointer { buffer in
      valueOrErrno { system_btrfs_snapshot_destroy(number, buffer.baseAddress!) }
    }.get(.btrfsSnapshotDestroy, reporting)
  }

  /// The subvolumes made directly in the subvolume whose root this is:
  /// each one's ID and the inode number of the directory holding it.
  package func subvolumeChildren() throws(SkipBackupError) -> [(id: UInt64, directory: UInt64)] {
    let number = rawValue
    var found: [(id: UInt64, directory: UInt64)] = []
    let most = SnapshotFlag.childrenMost
    var treeids = [CUnsignedLongLong](repeating: 0, count: most)
    var dirids = treeids
    var next: UInt64 = 0
    while true {
      var count: CInt = 0
      let more = try valueOrErrno {
        system_btrfs_subvolume_children(number, &next, &treeids, &dirids, &count)
      }.get(.btrfsSubvolumeChildren, path)
      for index in 0..<Int(count) {
        found.append((UInt64(treeids[index]), UInt64(dirids[index])))
      }
      if more == 0 { return found }
    }
  }

  /// Where the subvolume `id`, made in the directory with inode number
  /// `directory`, is below the subvolume's root this is: its path from
  /// there, as bytes.
  package func subvolumePlace(id: UInt64, directory: UInt64) -> Result<[UInt8], Errno> {
    let number = rawValue
    var buffer = [CChar](repeating: 0, count: SnapshotFlag.placeMost)
    return valueOrErrno { system_btrfs_subvolume_place(number, directory, id, &buffer) }.map { _ in
      buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }
  }

  /// Whether the kernel lets this process search the tree of the
  /// subvolume this item is in (CAP_SYS_ADMIN only).
  package func maySearchSubvolume() -> Bool {
    let number = rawValue
    return system_btrfs_inode_search_allowed(number) == 0
  }

  /// One step of the search `search` of the subvolume's tree into
  /// `inodes` (room for ``btrfsInodeSearchMost``): how many it wrote, or
  /// `nil` when the kernel refused it; `done` after the last.
  package func searchSubvolume(
    _ search: OpaquePointer, into inodes: UnsafeMutablePointer<CUnsignedLongLong>,
    done: inout CInt
  ) -> Int? {
    let count = system_btrfs_inode_search_step(rawValue, search, inodes, &done)
    return count >= 0 ? count : nil
  }
}
