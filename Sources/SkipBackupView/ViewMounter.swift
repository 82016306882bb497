import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Executes a ``ViewPlan`` in the private namespace, by descriptor: each
/// view's real directory is opened once (a ROOT by its path, before
/// anything is mounted; a view inside another from that one's real
/// directory, name by name; a snapshot's from its snapshot), the layer is
/// built from those descriptors, and each overlay is attached with
/// `move_mount` onto a descriptor: a view of its own onto its ROOT, a view
/// inside another onto a directory opened from that view name by name
/// (`O_NOFOLLOW`), never by its path again: mountinfo named it, and a
/// directory on the way may have become a link since (ENOTDIR, nothing
/// mounted).
package enum ViewMounter {
  /// Mounts every view of `plan`, binds the system's directories and the
  /// mounted files over them, and, when / is a ROOT, makes its view the
  /// root directory. `snapshots` holds the views' real directories under
  /// `run --snapshot`.
  package static func mount(
    _ plan: ViewPlan, snapshots: SnapshotSet?, privilege: MountNamespace.Privilege
  ) throws(SkipBackupError) {
    let views = plan.views
    // The real /proc, /sys, /dev, /run and /tmp, copied before the view
    // of / covers them.
    let systemRoot = try views.contains(where: \.isSystemRoot) ? SystemRoot() : nil
    // Opened in the new namespace (overlayfs takes layers from the
    // caller's namespace only) and before anything is mounted there.
    var reals = DescriptorList(capacity: views.count)
    // Under --snapshot, the live ROOT, where a view of its own is attached
    // and from which a file mounted below it is bound: its index in
    // `lives`, by view.
    var lives = DescriptorList(capacity: views.count)
    var live: [Int?] = []
    for (index, root) in views.enumerated() {
      let isLive = snapshots != nil && (plan.owners[index] == nil || !root.fileMounts.isEmpty)
      if isLive, let frozen = snapshots?.roots.first(where: { $0.path == root.path }) {
        // The directory the ROOT was resolved to before its snapshot, or
        // refused: never wherever its path leads now (a directory on the
        // way that its owner swapped for a link to one of root's).
        live.append(lives.count)
        lives.append(
          Descriptor(
            adopting: try ResolvedDirectory.reopen(root.path, as: frozen.live), path: root.path))
      } else if isLive {
        live.append(lives.count)
        lives.append(try OverlayView.openReal(root.path))
      } else {
        live.append(nil)
      }
      if let snapshots, let frozen = snapshots.roots.first(where: { $0.path == root.path }) {
        // From its own snapshot, which may not be the one above it (the
        // views are in mount order, not as given).
        let snapshot = snapshots.snapshots[frozen.snapshot]
        let top = Descriptor(adopting: try snapshot.reopen(), path: snapshot.path)
        reals.append(try top.openDirectory(frozen.inside, reporting: snapshot.path))
      } else if let owner = plan.owners[index], let inside = plan.inside(index) {
        reals.append(try reals[owner].openDirectory(inside, reporting: views[owner].path))
      } else {
        reals.append(try OverlayView.openReal(root.real))
      }
    }
    // HOME's real directory for the tools' own state, before anything is mounted.
    try ToolState(roots: views)?.pass()
    let layer = try WhiteoutLayer()
    var parts = DescriptorList(capacity: views.count)
    for (index, root) in views.enumerated() {
      parts.append(try layer.build(root, index: index, real: reals[index], privilege: privilege))
    }
    var mounted = DescriptorList(capacity: views.count)
    for (index, root) in views.enumerated() {
      // Inside another view, the directory opened from that view; else
      // the ROOT opened above, before anything was mounted: the live one,
      // or the real directory itself.
      if let owner = plan.owners[index] {
        let target = try mounted[owner].openDirectory(
          plan.inside(index)!, reporting: views[owner].path)
        mounted.append(
          try OverlayView.mount(
            root, layer: parts[index], real: reals[index], privilege: privilege, on: target))
      } else if let at = live[index] {
        mounted.append(
          try mountOwn(
            root, index: index, layer: layer, parts: parts, real: reals[index],
            privilege: privilege, on: lives[at]))
      } else {
        mounted.append(
          try mountOwn(
            root, index: index, layer: layer, parts: parts, real: reals[index],
            privilege: privilege, on: reals[index]))
      }
      if root.isSystemRoot { try systemRoot?.bind(onto: mounted[index]) }
      for file in root.fileMounts + root.keptReal {
        if let at = live[index] {
          try MountedFile.bind(file, root: root, real: lives[at], view: mounted[index])
        } else {
          try MountedFile.bind(file, root: root, real: reals[index], view: mounted[index])
        }
      }
    }
    if let root = views.firstIndex(where: \.isSystemRoot) {
      try mounted[root].enterAsRoot()
    }
  }

  /// Mounts the view of a ROOT that is inside no other view on `target`,
  /// the ROOT opened before anything was mounted.
  private static func mountOwn(
    _ root: ViewRoot, index: Int, layer: borrowing WhiteoutLayer,
    parts: borrowing DescriptorList, real: borrowing Descriptor,
    privilege: MountNamespace.Privilege, on target: borrowing Descriptor
  ) throws(SkipBackupError) -> Descriptor {
    do {
      return try OverlayView.mount(
        root, layer: parts[index], real: real, privilege: privilege, on: target)
    } catch  where index == 0 && error.call == .fsconfig && error.errno == .invalidArgument {
      // A kernel that takes no lower layer from a detached mount (Linux
      // 6.18 does; older ones log "failed to clone lowerpath"): attach
      // the layer at the first ROOT, under its view, both onto the ROOT's
      // descriptor (the view goes on top of the layer).
      try layer.attach(onto: target, reporting: root.path)
      return try OverlayView.mount(
        root, layer: parts[index], real: real, privilege: privilege, on: target)
    }
  }
}
