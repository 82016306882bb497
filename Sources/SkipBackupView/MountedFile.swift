import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A file mounted on a file inside a ROOT (a container's `/etc/hosts`, a
/// bind-mounted secret). The overlay reads its lower directory below every
/// mount, so it shows the file underneath; `list` and `status` read the
/// mounted file, and so must the view: the mounted file is bound over the
/// view's, read-only like the rest of it. When the mounted file is marked,
/// the walk hid it, and nothing is bound.
package enum MountedFile {
  /// Binds the file mounted at `relative` below the real ROOT `real` over
  /// the same path below `view`, both reached one name at a time with no
  /// link followed.
  package static func bind(
    _ relative: [UInt8], root: ViewRoot, real: CInt, view: CInt
  ) throws(SkipBackupError) {
    let path = root.path.appending(bytes: relative)
    let names = relative.split(separator: UInt8(ascii: "/"))
    let parent = Array(names.dropLast().joined(separator: [UInt8(ascii: "/")]))
    let name = (names.last.map(Array.init) ?? []).map { CChar(bitPattern: $0) } + [0]

    let realParent = try FileItem.openDirectory(parent, below: real, rootPath: root.path)
    defer { if realParent != real { _ = system_close(realParent) } }
    let tree = try check(.openTree, path) {
      name.withUnsafeBufferPointer {
        system_open_tree(
          realParent, $0.baseAddress!,
          MountFlag.cloneTree | MountFlag.treeCloseOnExec | MountFlag.symbolicLinkNoFollow)
      }
    }
    defer { _ = system_close(tree) }
    try check(.mountSetattr, path) {
      system_mount_setattr(tree, "", MountFlag.atEmptyPath, UInt64(MountFlag.readOnly))
    }

    let viewParent = try FileItem.openDirectory(parent, below: view, rootPath: root.path)
    defer { if viewParent != view { _ = system_close(viewParent) } }
    let target = try check(.openat, path) {
      name.withUnsafeBufferPointer {
        system_openat(viewParent, $0.baseAddress!, MountFlag.pathOnly | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    defer { _ = system_close(target) }
    try check(.moveMount, path) {
      system_move_mount(tree, "", target, "", MountFlag.emptyPath | MountFlag.targetEmptyPath)
    }
  }
}
