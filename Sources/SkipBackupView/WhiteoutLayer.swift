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
  package let descriptor: CInt

  package init() throws(SkipBackupError) {
    let context = try check(.fsopen, "tmpfs") {
      system_fsopen("tmpfs", MountFlag.fsopenCloseOnExec)
    }
    defer { _ = system_close(context) }
    try check(.fsconfig, "tmpfs") {
      system_fsconfig(context, MountFlag.setString, "mode", "0755", 0)
    }
    try check(.fsconfig, "tmpfs") {
      system_fsconfig(context, MountFlag.create, nil, nil, 0)
    }
    descriptor = try check(.fsmount, "tmpfs") {
      system_fsmount(context, MountFlag.fsmountCloseOnExec, 0)
    }
  }

  deinit { _ = system_close(descriptor) }

  /// Builds root `index`'s part of the layer: a whiteout for each hidden
  /// item, an opaque directory for each emptied mount point (overlayfs
  /// then looks no further down, so the real directory's entries, which the
  /// mount hides from users, stay hidden), the directories on the way to
  /// them, and on each of those directories (the root's own too) the real
  /// directory's metadata, which overlayfs shows for a directory present
  /// in both layers. Returns the part's directory, open for the overlay's
  /// `lowerdir`.
  package func build(
    _ root: ViewRoot, index: Int, real: CInt, privilege: MountNamespace.Privilege
  ) throws(SkipBackupError) -> CInt {
    let name = FilePath("\(index)")
    try check(.mkdirat, root.path) { name.withCString { system_mkdirat(descriptor, $0, 0o700) } }
    let part = try check(.openat, root.path) {
      name.withCString {
        system_openat(descriptor, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    // Every directory on the way to a hidden item, "" for the root: a
    // sorted list of paths yields each parent before its children.
    var merged: [[UInt8]] = [[]]
    var made: Set<[UInt8]> = [[]]
    let items =
      (root.hidden.map { ($0, false) } + root.emptied.map { ($0, true) })
      .sorted { $0.0.lexicographicallyPrecedes($1.0) }
    var layer = LayerPath(part)
    for (item, emptied) in items {
      var slash = item.startIndex
      while let next = item[slash...].firstIndex(of: UInt8(ascii: "/")) {
        let directory = Array(item[..<next])
        if made.insert(directory).inserted {
          merged.append(directory)
          let parent = try layer.descriptor(of: directory, parentOnly: true, root)
          try layerCall(.mkdirat, root, directory) { system_mkdirat(parent, $0, 0o700) }
        }
        slash = next + 1
      }
      let parent = try layer.descriptor(of: item, parentOnly: true, root)
      if emptied {
        made.insert(item)
        merged.append(item)
        try layerCall(.mkdirat, root, item) { system_mkdirat(parent, $0, 0o700) }
      } else {
        try layerCall(.mknodat, root, item) { system_mknodat(parent, $0, S_IFCHR, 0, 0) }
      }
    }
    // After every whiteout is made, so that no later entry changes a copied
    // time, and no immutable or append-only flag refuses one.
    let opaque = Set(root.emptied)
    for directory in merged {
      try copyMetadata(
        root, directory, layer: layer.descriptor(of: directory, parentOnly: false, root),
        real: real, privilege: privilege, opaque: opaque.contains(directory))
    }
    return part
  }

  /// The layer's directories on the way to the last one asked for, each
  /// open, so that every call names one entry in an open directory: a
  /// hidden item's path may be longer than PATH_MAX (4,096 bytes), which
  /// the walk reaches one name at a time and a path given to the kernel
  /// whole would not (`ENAMETOOLONG`). The items come sorted, so a
  /// directory stays open while the items below it are made.
  private struct LayerPath: ~Copyable {
    let part: CInt
    var opened: [(path: [UInt8], descriptor: CInt)] = []

    init(_ part: CInt) { self.part = part }

    deinit { for entry in opened { _ = system_close(entry.descriptor) } }

    /// The open layer directory `relative` ("" for the part itself), or,
    /// with `parentOnly`, the one that holds it.
    mutating func descriptor(of relative: [UInt8], parentOnly: Bool, _ root: ViewRoot)
      throws(SkipBackupError) -> CInt
    {
      let slash = UInt8(ascii: "/")
      let directory =
        parentOnly ? Array(relative[..<(relative.lastIndex(of: slash) ?? 0)]) : relative
      while let last = opened.last,
        !(directory.starts(with: last.path)
          && (directory.count == last.path.count || directory[last.path.count] == slash))
      {
        _ = system_close(last.descriptor)
        opened.removeLast()
      }
      var current = opened.last?.descriptor ?? part
      var start = opened.last.map { $0.path.count + 1 } ?? 0
      while start < directory.count {
        let end = directory[start...].firstIndex(of: slash) ?? directory.count
        let name = Array(directory[start..<end]).map { CChar(bitPattern: $0) } + [0]
        let from = current
        current = try check(.openat, root.path.appending(bytes: Array(directory[..<end]))) {
          name.withUnsafeBufferPointer {
            system_openat(
              from, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
          }
        }
        opened.append((Array(directory[..<end]), current))
        start = end + 1
      }
      return current
    }
  }

  /// Attaches the layer at `path` in the private namespace, under the view
  /// mounted there next.
  package func attach(at path: FilePath) throws(SkipBackupError) {
    try check(.moveMount, path) {
      path.withCString {
        system_move_mount(descriptor, "", MountFlag.atWorkingDirectory, $0, MountFlag.emptyPath)
      }
    }
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
    _ root: ViewRoot, _ directory: [UInt8], layer: CInt, real rootDescriptor: CInt,
    privilege: MountNamespace.Privilege, opaque: Bool
  )
    throws(SkipBackupError)
  {
    let realPath = root.real.appending(bytes: directory)
    guard !directory.isEmpty else {
      try copyMetadata(
        root, directory, layer: layer,
        from: FileItem(path: realPath, followSymbolicLinks: false), privilege: privilege,
        opaque: opaque)
      return
    }
    try FileItem.withItem(
      directory, below: rootDescriptor, rootPath: root.path
    ) { (real) throws(SkipBackupError) in
      try copyMetadata(
        root, directory, layer: layer, from: real, privilege: privilege, opaque: opaque)
    }
  }

  /// ``copyMetadata(_:_:layer:real:privilege:opaque:)`` from `real`, the real directory.
  private func copyMetadata(
    _ root: ViewRoot, _ directory: [UInt8], layer opened: CInt, from real: FileItem,
    privilege: MountNamespace.Privilege, opaque: Bool
  ) throws(SkipBackupError) {
    let realPath = real.displayPath
    let status = try real.status()
    guard status.st_mode & S_IFMT == S_IFDIR else {
      // Replaced since the walk: the view would not be what the walk saw.
      throw SkipBackupError(.openat, .notDirectory, path: realPath)
    }
    try check(.fchown, realPath) { system_fchown(opened, status.st_uid, status.st_gid) }
    try check(.fchmod, realPath) { system_fchmod(opened, status.st_mode & 0o7777) }
    let to = ExtendedAttributes(
      of: FileItem(descriptor: FileDescriptor(rawValue: opened), displayPath: realPath))
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
    let times = [status.st_atim, status.st_mtim]
    try check(.futimens, realPath) {
      times.withUnsafeBufferPointer { system_futimens(opened, $0.baseAddress!) }
    }
    try copyInodeFlags(from: real, to: opened, path: realPath)
  }

  /// Gives the layer's directory the real one's nodump (`d`), noatime
  /// (`A`), immutable (`i`) and append-only (`a`) flags, the ones tmpfs
  /// keeps: overlayfs answers FS_IOC_GETFLAGS on a merged directory from
  /// its topmost layer, so `lsattr -d`, `borg create --exclude-nodump` and
  /// `bsdtar --nodump` see the layer's. Set last: an immutable directory
  /// takes no other change. The flags of how a filesystem stores a
  /// directory (ext4's extents `e` and index `I`, btrfs's `C` and `c`)
  /// tmpfs has not, and the view does not show them. Only root may set `i`
  /// and `a` (CAP_LINUX_IMMUTABLE, which a user namespace does not grant):
  /// an ordinary user's view of a directory that has them is refused.
  private func copyInodeFlags(
    from real: FileItem, to layer: CInt, path: FilePath
  ) throws(SkipBackupError) {
    var flags: CInt = 0
    do {
      _ = try real.withOpenDescriptor(O_RDONLY | O_NONBLOCK | O_DIRECTORY) {
        (descriptor) throws(SkipBackupError) in
        try check(.getInodeFlags, path) { system_get_inode_flags(descriptor, &flags) }
      }
    } catch
      where error.call == .getInodeFlags
      && (error.errno == .inappropriateIOCTLForDevice || error.errno == .notSupported)
    {
      return  // a filesystem without inode flags
    }
    var carried =
      flags
      & (InodeFlag.noDump | InodeFlag.noAccessTime | InodeFlag.immutable | InodeFlag.appendOnly)
    guard carried != 0 else { return }
    try check(.setInodeFlags, path) { system_set_inode_flags(layer, &carried) }
  }

  /// A call on the last name of `relative` in the layer, in its parent;
  /// a failure names the real path it stands for.
  @discardableResult
  private func layerCall(
    _ call: SystemCall, _ root: ViewRoot, _ relative: [UInt8],
    _ body: (UnsafePointer<CChar>) -> CInt
  ) throws(SkipBackupError) -> CInt {
    let name = relative.split(separator: UInt8(ascii: "/")).last ?? []
    let cString = name.map { CChar(bitPattern: $0) } + [0]
    return try check(call, root.path.appending(bytes: relative)) {
      cString.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
  }
}
