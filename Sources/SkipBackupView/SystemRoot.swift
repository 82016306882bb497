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
  /// one (open_tree(2), `OPEN_TREE_CLONE | AT_RECURSIVE`), at the same
  /// index in ``trees``.
  private let names: [[UInt8]]
  private let trees: DescriptorList

  /// Copies the real directories; call in the private namespace, before
  /// anything is mounted on `/`. One that is missing, or not a directory
  /// (a link), is not bound: the view shows what is there. Each is looked
  /// at and copied by its name in `/`, opened once.
  package init() throws(SkipBackupError) {
    let top = try Descriptor.open("/", [.pathOnly, .directory])
    var names: [[UInt8]] = []
    var trees = DescriptorList(capacity: Self.boundBack.count)
    for name in Self.boundBack {
      let path = FilePath(bytes: [UInt8(ascii: "/")] + name)
      guard let status = try? top.status(of: FilePath(bytes: name), reporting: path),
        status.st_mode & S_IFMT == S_IFDIR
      else { continue }
      trees.append(
        try top.openTree(
          FilePath(bytes: name), [.clone, .recursive, .symbolicLinkNoFollow], reporting: path))
      names.append(name)
    }
    self.names = names
    self.trees = trees
  }

  /// Attaches each copy at its place in `view`, the mounted view of `/`.
  package func bind(onto view: borrowing Descriptor) throws(SkipBackupError) {
    for (index, name) in names.enumerated() {
      let path = FilePath(bytes: [UInt8(ascii: "/")] + name)
      let target = try view.openDirectory(name, reporting: "/")
      try trees[index].moveMount(onto: target, reporting: path)
    }
  }

  /// Whether `relative`, a path below `/`, is or is below a directory
  /// bound back.
  package static func holds(_ relative: [UInt8]) -> Bool {
    boundBack.contains { path(relative[...], isOrIsBelow: $0) }
  }
}
