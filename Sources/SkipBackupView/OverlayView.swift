import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One ROOT's view: a read-only overlayfs of the layer's part over the real
/// directory, attached at the ROOT's own path in the private namespace.
package enum OverlayView {
  /// Opens the real ROOT, before anything is mounted on it or above it:
  /// the descriptor keeps reaching the real directory afterwards.
  package static func openReal(_ real: FilePath) throws(SkipBackupError) -> CInt {
    try check(.openat, real) {
      real.withCString {
        system_openat(
          MountFlag.atWorkingDirectory, $0,
          MountFlag.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
  }

  /// Mounts the overlay of `layer` over `real` on `target`, an open
  /// directory (``ViewMounter``: the ROOT opened once, or a directory
  /// opened from the view it is inside), so that no link swapped in on the
  /// way moves the view elsewhere; at the ROOT's path only when none is
  /// given (the layer attached there first, on a kernel that takes no
  /// detached layer). Returns the mounted view (close-on-exec), through
  /// which a view inside it is reached.
  ///
  /// Both layers are named as /proc/self/fd/N: the layer has no other name,
  /// and the real directory's path now leads to the view of a ROOT above it.
  /// `userxattr` (Linux 5.11) lets overlayfs mount in a user namespace.
  package static func mount(
    _ root: ViewRoot, layer: CInt, real: CInt, privilege: MountNamespace.Privilege,
    on target: CInt? = nil
  ) throws(SkipBackupError) -> CInt {
    let context = try check(.fsopen, root.path) {
      system_fsopen("overlay", MountFlag.fsopenCloseOnExec)
    }
    defer { _ = system_close(context) }
    let lower = "/proc/self/fd/\(layer):/proc/self/fd/\(real)"
    try check(.fsconfig, root.path) {
      system_fsconfig(context, MountFlag.setString, "lowerdir", lower, 0)
    }
    if case .user = privilege {
      try check(.fsconfig, root.path) {
        system_fsconfig(context, MountFlag.setFlag, "userxattr", nil, 0)
      }
    }
    // Its layers are on two filesystems (the tmpfs and the tree's): without
    // xino overlayfs gives each file the device number of its layer and
    // each directory the overlay's (overlayfs.rst, "Inode properties"), so
    // restic --one-file-system, which compares every item's device with
    // ROOT's, left out every file. With xino every item has the overlay's
    // device, and a file's inode number is the real one with the layer's
    // number in its top bits: the same in every view.
    try check(.fsconfig, root.path) {
      system_fsconfig(context, MountFlag.setString, "xino", "on", 0)
    }
    try check(.fsconfig, root.path) {
      system_fsconfig(context, MountFlag.create, nil, nil, 0)
    }
    let attributes = try carriedAttributes(of: real, root.path)
    let mounted = try check(.fsmount, root.path) {
      system_fsmount(context, MountFlag.fsmountCloseOnExec, MountFlag.readOnly | attributes)
    }
    do {
      try check(.moveMount, root.path) {
        if let target {
          return system_move_mount(
            mounted, "", target, "", MountFlag.emptyPath | MountFlag.targetEmptyPath)
        }
        return root.path.withCString {
          system_move_mount(mounted, "", MountFlag.atWorkingDirectory, $0, MountFlag.emptyPath)
        }
      }
    } catch {
      _ = system_close(mounted)
      throw error
    }
    return mounted
  }

  /// The real mount's `nosuid`, `nodev`, `noexec` and access-time options
  /// as fsmount's MOUNT_ATTR_* (statfs(2)'s `f_flags` of the real ROOT, or
  /// of the filesystem mounted inside one), so that COMMAND cannot run a
  /// setuid program or open a device through the view that it could not
  /// run or open on the real tree.
  static func carriedAttributes(of real: CInt, _ path: FilePath) throws(SkipBackupError)
    -> CUnsignedInt
  {
    let flags: UInt
    switch FilesystemFlag.flags(of: real) {
    case .success(let value): flags = value
    case .failure(let errno): throw SkipBackupError(.fstatfs, errno, path: path)
    }
    var attributes: CUnsignedInt = 0
    for (flag, attribute) in [
      (FilesystemFlag.noSetUserID, MountFlag.noSetUserID),
      (FilesystemFlag.noDevices, MountFlag.noDevices),
      (FilesystemFlag.noExecution, MountFlag.noExecution),
      (FilesystemFlag.noDirectoryAccessTime, MountFlag.noDirectoryAccessTime),
    ] where flags & flag != 0 {
      attributes |= attribute
    }
    // One of three: noatime, relatime (the default, 0), strictatime.
    if flags & FilesystemFlag.noAccessTime != 0 {
      attributes |= MountFlag.noAccessTime
    } else if flags & FilesystemFlag.relativeAccessTime == 0 {
      attributes |= MountFlag.strictAccessTime
    }
    return attributes
  }
}
