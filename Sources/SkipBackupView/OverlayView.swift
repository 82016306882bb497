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
  /// Opens the real ROOT (`O_PATH`), before anything is mounted on it or
  /// above it: the descriptor keeps reaching the real directory
  /// afterwards. A canonical path has no link on the way; one there now
  /// was swapped in since, and is refused (`openat2` with
  /// `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`), never followed.
  package static func openReal(_ real: FilePath) throws(SkipBackupError) -> Descriptor {
    try Descriptor.open(real, [.pathOnly, .directory, .noFollow], resolve: .noLinks)
  }

  /// Mounts the overlay of `layer` over `real` on `target`, an open
  /// directory (``ViewMounter``: the ROOT opened once, or a directory
  /// opened from the view it is inside), so that no link swapped in on the
  /// way moves the view elsewhere. Returns the mounted view
  /// (close-on-exec), through which a view inside it is reached.
  ///
  /// Both layers are named as /proc/self/fd/N: the layer has no other name,
  /// and the real directory's path now leads to the view of a ROOT above it.
  /// `userxattr` (Linux 5.11) lets overlayfs mount in a user namespace.
  package static func mount(
    _ root: ViewRoot, layer: borrowing Descriptor, real: borrowing Descriptor,
    privilege: MountNamespace.Privilege, on target: borrowing Descriptor
  ) throws(SkipBackupError) -> Descriptor {
    let context = try Descriptor.filesystemContext("overlay", for: root.path)
    try context.configure(
      "lowerdir", to: Array("/proc/self/fd/\(layer.rawValue):/proc/self/fd/\(real.rawValue)".utf8))
    if case .user = privilege { try context.configure(flag: "userxattr") }
    // Its layers are on two filesystems (the tmpfs and the tree's): without
    // xino overlayfs gives each file the device number of its layer and
    // each directory the overlay's (overlayfs.rst, "Inode properties"), so
    // restic --one-file-system, which compares every item's device with
    // ROOT's, left out every file. With xino every item has the overlay's
    // device, and a file's inode number is the real one with the layer's
    // number in its top bits: the same in every view.
    try context.configure("xino", to: Array("on".utf8))
    try context.createFilesystem()
    let attributes = try carriedAttributes(of: real, root.path)
    let mounted = try context.mount(attributes.union(.readOnly))
    try mounted.moveMount(onto: target, reporting: root.path)
    return mounted
  }

  /// The real mount's `nosuid`, `nodev`, `noexec` and access-time options
  /// as fsmount's MOUNT_ATTR_* (statfs(2)'s `f_flags` of the real ROOT, or
  /// of the filesystem mounted inside one), so that COMMAND cannot run a
  /// setuid program or open a device through the view that it could not
  /// run or open on the real tree.
  static func carriedAttributes(of real: borrowing Descriptor, _ path: FilePath)
    throws(SkipBackupError) -> MountAttributes
  {
    let flags = UInt(try real.filesystemStatus(reporting: path).f_flags)
    var attributes: MountAttributes = []
    for (flag, attribute) in [
      (FilesystemFlag.noSetUserID, MountAttributes.noSetUserID),
      (FilesystemFlag.noDevices, .noDevices),
      (FilesystemFlag.noExecution, .noExecution),
      (FilesystemFlag.noDirectoryAccessTime, .noDirectoryAccessTime),
    ] where flags & flag != 0 {
      attributes.insert(attribute)
    }
    // One of three: noatime, relatime (the default, 0), strictatime.
    if flags & FilesystemFlag.noAccessTime != 0 {
      attributes.insert(.noAccessTime)
    } else if flags & FilesystemFlag.relativeAccessTime == 0 {
      attributes.insert(.strictAccessTime)
    }
    return attributes
  }
}
