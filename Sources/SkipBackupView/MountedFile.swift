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
    _ relative: [UInt8], root: ViewRoot, real: borrowing Descriptor, view: borrowing Descriptor
  ) throws(SkipBackupError) {
    let path = root.path.appending(bytes: relative)
    let names = relative.split(separator: UInt8(ascii: "/"))
    let parent = Array(names.dropLast().joined(separator: [UInt8(ascii: "/")]))
    let name = FilePath(bytes: names.last.map(Array.init) ?? [])

    let tree = try real.withDirectory(parent, reporting: root.path) {
      (realParent) throws(SkipBackupError) in
      try realParent.openTree(name, [.clone, .symbolicLinkNoFollow], reporting: path)
    }
    try tree.setMountAttributes(.readOnly)
    try view.withDirectory(parent, reporting: root.path) { (viewParent) throws(SkipBackupError) in
      let target = try viewParent.open(name, [.pathOnly, .noFollow], reporting: path)
      try tree.moveMount(onto: target, reporting: path)
    }
  }
}
