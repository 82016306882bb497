import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The view of `/`. A view mounted on `/` is not what COMMAND sees: a
/// process's root is a directory, not a path, and a lookup starts there
/// without crossing what is mounted on it, so COMMAND would still read the
/// real tree. So COMMAND's root becomes the view itself (chroot(2) into
/// the mounted view, the last mount made on `/`, which the kernel then
/// takes for the namespace's root: current_chrooted() follows the mounts
/// stacked there, so COMMAND may still make namespaces of its own).
///
/// A view shows a directory's own entries, not what is mounted on them;
/// COMMAND needs the kernel's `/proc`, `/sys` and `/dev`, and `/run` and
/// `/tmp` as they are (sockets, locks, temporary files, writable), so those
/// are bound back from the real tree, with what is mounted below them and
/// their own flags, as arch-chroot gives a chroot its API filesystems.
package struct SystemRoot: ~Copyable {
  /// The directories below `/` that COMMAND gets as they are.
  package static let boundBack: [[UInt8]] = ["proc", "sys", "dev", "run", "tmp"].map {
    Array($0.utf8)
  }
  /// Of those, the kernel's, which the walk leaves alone: they hold no
  /// one's files, and `/proc` cannot be walked (`/proc/1/task/1/fdinfo` is
  /// EACCES to root in a container).
  package static let kernels: [[UInt8]] = ["proc", "sys", "dev"].map { Array($0.utf8) }

  /// Each directory to bind back, by name, as a detached copy of the real
  /// one (open_tree(2), `OPEN_TREE_CLONE | AT_RECURSIVE`).
  private let trees: [(name: [UInt8], tree: CInt)]

  /// Copies the real directories; call in the private namespace, before
  /// anything is mounted on `/`. One that is missing, or not a directory
  /// (a link), is not bound: the view shows what is there.
  package init() throws(SkipBackupError) {
    var trees: [(name: [UInt8], tree: CInt)] = []
    do throws(SkipBackupError) {
      for name in Self.boundBack {
        let path = FilePath(bytes: [UInt8(ascii: "/")] + name)
        guard let status = try? FileItem(path: path, followSymbolicLinks: false).status(),
          status.st_mode & S_IFMT == S_IFDIR
        else { continue }
        let tree = try check(.openTree, path) {
          path.withCString {
            system_open_tree(
              MountFlag.atWorkingDirectory, $0,
              MountFlag.cloneTree | MountFlag.treeCloseOnExec | MountFlag.recursiveTree
                | MountFlag.symbolicLinkNoFollow)
          }
        }
        trees.append((name, tree))
      }
    } catch {
      for (_, tree) in trees { _ = system_close(tree) }
      throw error
    }
    self.trees = trees
  }

  deinit { for (_, tree) in trees { _ = system_close(tree) } }

  /// Attaches each copy at its place in `view`, the mounted view of `/`.
  package func bind(onto view: CInt) throws(SkipBackupError) {
    for (name, tree) in trees {
      let path = FilePath(bytes: [UInt8(ascii: "/")] + name)
      let target = try FileItem.openDirectory(name, below: view, rootPath: "/")
      defer { _ = system_close(target) }
      try check(.moveMount, path) {
        system_move_mount(
          tree, "", target, "", MountFlag.emptyPath | MountFlag.targetEmptyPath)
      }
    }
  }

  /// Makes `view`, the mounted view of `/`, this process's root directory
  /// and working directory.
  package static func enter(_ view: CInt) throws(SkipBackupError) {
    try check(.fchdir, "/") { system_fchdir(view) }
    try check(.chroot, "/") { system_chroot(".") }
  }

  /// Whether `relative`, a path below `/`, is or is below a directory
  /// bound back.
  package static func holds(_ relative: [UInt8]) -> Bool {
    boundBack.contains { path(relative[...], isOrIsBelow: $0) }
  }
}
