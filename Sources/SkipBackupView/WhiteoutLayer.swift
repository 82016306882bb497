import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The view's top layer: a tmpfs made attached nowhere (fsopen(2) and
/// fsmount(2) give a descriptor of a mount in no directory), holding for
/// each ROOT a directory `N` with a whiteout (a character device 0/0, which
/// overlayfs shows as "no such file") at the place of each topmost excluded
/// item. Nothing of it is ever on disk, and it is gone with the namespace.
///
/// Linux 6.18 takes a detached mount as an overlay's lower layer; older
/// kernels take layers only from mounts of the caller's namespace (they log
/// "overlayfs: failed to clone lowerpath" and fsconfig fails with EINVAL,
/// as Linux 6.18 does for a directory opened before unshare), and then the
/// built layer is attached at the first ROOT's path, where the ROOT's view
/// covers it: no path leads to it either way.
package struct WhiteoutLayer: ~Copyable {
  /// The tmpfs's root, a mount descriptor.
  package let descriptor: Descriptor

  package init() throws(SkipBackupError) {
    let context = try Descriptor.filesystemContext("tmpfs")
    try context.configure("mode", to: Array("0755".utf8))
    try context.createFilesystem()
    descriptor = try context.mount([])
  }

  /// Builds root `index`'s part of the layer: a whiteout for each hidden
  /// item, an opaque directory for each emptied mount point (overlayfs
  /// then looks no further down, so the real directory's entries, which the
  /// mount hides from users, stay hidden), the directories on the way to
  /// them, and on each of those directories (the root's own too) the real
  /// directory's metadata, which overlayfs shows for a directory present
  /// in both layers. Returns the part's directory, open for the overlay's
  /// `lowerdir`, named by the ROOT's path.
  package func build(
    _ root: ViewRoot, index: Int, real: borrowing Descriptor,
    privilege: MountNamespace.Privilege
  ) throws(SkipBackupError) -> Descriptor {
    let name = FilePath("\(index)")
    try descriptor.makeDirectory(name, mode: 0o700, reporting: root.path)
    let part = try descriptor.open(
      name, [.directory, .noFollow], reporting: root.path)
    // Every directory on the way to a hidden item, "" for the root: a
    // sorted list of paths yields each parent before its children.
    var merged: [[UInt8]] = [[]]
    var made: Set<[UInt8]> = [[]]
    let items =
      (root.hidden.map { ($0, false) } + root.emptied.map { ($0, true) })
      .sorted { $0.0.lexicographicallyPrecedes($1.0) }
    var layer = LayerPath()
    for (item, emptied) in items {
      var slash = item.startIndex
      while let next = item[slash...].firstIndex(of: UInt8(ascii: "/")) {
        let directory = Array(item[..<next])
        if made.insert(directory).inserted {
          merged.append(directory)
          try layer.withDirectory(of: directory, parentOnly: true, in: part) {
            (parent) throws(SkipBackupError) in
            try parent.makeDirectory(
              lastName(directory), mode: 0o700, reporting: root.path.appending(bytes: directory))
          }
        }
        slash = next + 1
      }
      try layer.withDirectory(of: item, parentOnly: true, in: part) {
        (parent) throws(SkipBackupError) in
        let shown = root.path.appending(bytes: item)
        if emptied {
          try parent.makeDirectory(lastName(item), mode: 0o700, reporting: shown)
        } else {
          try parent.makeWhiteout(lastName(item), reporting: shown)
        }
      }
      if emptied {
        made.insert(item)
        merged.append(item)
      }
    }
    // After every whiteout is made, so that no later entry changes a copied
    // time, and no immutable or append-only flag refuses one.
    let opaque = Set(root.emptied)
    for directory in merged {
      try layer.withDirectory(of: directory, parentOnly: false, in: part) {
        (opened) throws(SkipBackupError) in
        try copyMetadata(
          root, directory, layer: opened, real: real, privilege: privilege,
          opaque: opaque.contains(directory))
      }
    }
    return part
  }

  /// The last name of `relative`, a path in the layer.
  private func lastName(_ relative: [UInt8]) -> FilePath {
    FilePath(bytes: Array(relative.split(separator: UInt8(ascii: "/")).last ?? []))
  }

  /// The layer's directories on the way to the last one asked for, each
  /// open, so that every call names one entry in an open directory: a
  /// hidden item's path may be longer than PATH_MAX (4,096 bytes), which
  /// the walk reaches one name at a time and a path given to the kernel
  /// whole would not (`ENAMETOOLONG`). The items come sorted, so a
  /// directory stays open while the items below it are made.
  private struct LayerPath: ~Copyable {
    /// The open directories, outermost first, and their paths in the part.
    var opened = DescriptorList()
    var paths: [[UInt8]] = []

    /// Calls `body` with the open layer directory `relative` ("" for
    /// `part` itself), or, with `parentOnly`, the one that holds it.
    mutating func withDirectory(
      of relative: [UInt8], parentOnly: Bool, in part: borrowing Descriptor,
      _ body: (borrowing Descriptor) throws(SkipBackupError) -> Void
    ) throws(SkipBackupError) {
      let slash = UInt8(ascii: "/")
      let directory =
        parentOnly ? Array(relative[..<(relative.lastIndex(of: slash) ?? 0)]) : relative
      while let last = paths.last,
        !(directory.starts(with: last)
          && (directory.count == last.count || directory[last.count] == slash))
      {
        opened.removeLast()
        paths.removeLast()
      }
      var start = paths.last.map { $0.count + 1 } ?? 0
      while start < directory.count {
        let end = directory[start...].firstIndex(of: slash) ?? directory.count
        let name = FilePath(bytes: Array(directory[start..<end]))
        let shown = part.path.appending(bytes: Array(directory[..<end]))
        let next =
          try opened.count == 0
          ? part.open(name, [.directory, .noFollow], reporting: shown)
          : opened[opened.count - 1].open(name, [.directory, .noFollow], reporting: shown)
        opened.append(next)
        paths.append(Array(directory[..<end]))
        start = end + 1
      }
      if opened.count == 0 { return try body(part) }
      try body(opened[opened.count - 1])
    }
  }

  /// Attaches the layer onto `target` in the private namespace, under the
  /// view mounted there next.
  package func attach(onto target: borrowing Descriptor, reporting: FilePath)
    throws(SkipBackupError)
  {
    try descriptor.moveMount(onto: target, reporting: reporting)
  }

  /// Gives the layer's `directory` (open: `layer`) the real one's owner,
  /// mode, extended attributes (ACLs among them), times and inode flags; an
  /// `opaque` one also overlayfs's mark of an opaque directory.
  ///
  /// The real directory is reached from the real ROOT (`real`, opened before
  /// anything was mounted) one name at a time, no link followed: a directory
  /// on the way replaced by a link since the walk is refused, never
  /// followed out of the tree. A mount point is reached as users see it:
  /// the root of the filesystem mounted there.
  private func copyMetadata(
    _ root: ViewRoot, _ directory: [UInt8], layer: borrowing Descriptor,
    real rootDescriptor: borrowing Descriptor, privilege: MountNamespace.Privilege, opaque: Bool
  )
    throws(SkipBackupError)
  {
    guard !directory.isEmpty else {
      // The ROOT itself, by the descriptor opened before anything was
      // mounted, not by its path again.
      let realPath = root.real
      let top = try rootDescriptor.open(".", [.directory, .nonBlocking], reporting: realPath)
      try copyMetadata(
        root, layer: layer,
        from: FileItem(descriptor: FileDescriptor(rawValue: top.rawValue), displayPath: realPath),
        privilege: privilege, opaque: opaque)
      try copyInodeFlags(from: top, to: layer)
      return
    }
    let names = directory.split(separator: UInt8(ascii: "/"))
    let name = FilePath(bytes: Array(names.last ?? []))
    let realPath = root.path.appending(bytes: directory)
    try rootDescriptor.withDirectory(
      Array(names.dropLast().joined(separator: [UInt8(ascii: "/")])), reporting: root.path
    ) { (parent) throws(SkipBackupError) in
      try copyMetadata(
        root, layer: layer,
        from: FileItem(
          name: name, in: FileDescriptor(rawValue: parent.rawValue), displayPath: realPath),
        privilege: privilege, opaque: opaque)
      let opened = try parent.open(
        name, [.directory, .nonBlocking, .noFollow], reporting: realPath)
      try copyInodeFlags(from: opened, to: layer)
    }
  }

  /// ``copyMetadata(_:_:layer:real:privilege:opaque:)`` from `real`, the
  /// real directory, but its inode flags.
  private func copyMetadata(
    _ root: ViewRoot, layer opened: borrowing Descriptor, from real: FileItem,
    privilege: MountNamespace.Privilege, opaque: Bool
  ) throws(SkipBackupError) {
    let realPath = real.displayPath
    let status = try real.status()
    guard status.st_mode & S_IFMT == S_IFDIR else {
      // Replaced since the walk: the view would not be what the walk saw.
      throw SkipBackupError(.openat, .notDirectory, path: realPath)
    }
    try opened.changeOwner(status.st_uid, group: status.st_gid, reporting: realPath)
    try opened.changeMode(status.st_mode & 0o7777, reporting: realPath)
    let to = ExtendedAttributes(
      of: FileItem(descriptor: FileDescriptor(rawValue: opened.rawValue), displayPath: realPath))
    // The walk refused every item with a name in the overlay's own
    // namespace; one seen since is not copied, where it would steer the view.
    let own = privilege.overlayNamespace.prefix
    do {
      try ExtendedAttributes(of: real).copy(to: to) { $0.bytes.starts(with: own) }
    } catch  where error.errno == .notSupported && error.call?.changesAttributes == false {
      // A filesystem that keeps no attributes lists none: a FUSE mount
      // without them answers listxattr with EOPNOTSUPP (bindfs
      // --xattr-none), as ItemAttributes reads it too.
    }
    if opaque {
      // overlayfs.rst, "whiteouts and opaque directories": "y" in a lower
      // layer too; user.overlay.opaque with userxattr.
      try to.setValue(Array("y".utf8), of: AttributeName(bytes: own + Array("opaque".utf8))!)
    }
    try opened.changeTimes(
      access: status.st_atim, modification: status.st_mtim, reporting: realPath)
  }

  /// Whether `error` is the refusal of a filesystem without inode flags.
  private static func keepsNoFlags(_ error: SkipBackupError) -> Bool {
    error.errno == .inappropriateIOCTLForDevice || error.errno == .notSupported
  }

  /// Gives the layer's directory the real one's (`real`, open to read)
  /// nodump (`d`), noatime (`A`), immutable (`i`) and append-only (`a`)
  /// flags, the ones tmpfs keeps: overlayfs answers FS_IOC_GETFLAGS on a
  /// merged directory from its topmost layer, so `lsattr -d`, `borg create
  /// --exclude-nodump` and `bsdtar --nodump` see the layer's. Set last: an
  /// immutable directory takes no other change. The flags of how a
  /// filesystem stores a directory (ext4's extents `e` and index `I`,
  /// btrfs's `C` and `c`) tmpfs has not, and the view does not show them.
  /// Only root may set `i` and `a` (CAP_LINUX_IMMUTABLE, which a user
  /// namespace does not grant): an ordinary user's view of a directory
  /// that has them is refused.
  private func copyInodeFlags(
    from real: borrowing Descriptor, to layer: borrowing Descriptor
  ) throws(SkipBackupError) {
    let flags: CInt
    do {
      flags = try real.inodeFlags()
    } catch  where Self.keepsNoFlags(error) {
      return  // a filesystem without inode flags
    }
    let carried =
      flags
      & (InodeFlag.noDump | InodeFlag.noAccessTime | InodeFlag.immutable | InodeFlag.appendOnly)
    guard carried != 0 else { return }
    try layer.setInodeFlags(carried, reporting: real.path)
  }
}
