import SkipBackupCore
import SystemPackage
import SkipBackupReport

/// What one ROOT's view hides: the topmost excluded items under it, as
/// `list --excluded` finds them, by their path relative to the ROOT. The
/// view is built from these alone, so that its cost beyond the one walk
/// grows with the marks, not with the entries.
package struct ViewRoot {
  /// The ROOT's canonical path, where the view is mounted.
  package let path: FilePath
  /// ``path``'s bytes, kept: a run compares every view's path with every
  /// other's, and `FilePath.bytes` makes an array each time (1,000 nested
  /// subvolumes took `run -- true` 1.2 s of user time in allocations).
  package let pathBytes: [UInt8]
  /// Where the ROOT's items are read: the ROOT itself, or its copy in a
  /// snapshot (`run --snapshot`).
  package var real: FilePath
  /// The topmost excluded items, relative to ``path`` ("a/b"), sorted.
  package var hidden: [[UInt8]]
  /// The directories the view shows as the empty directory `list -x`
  /// lists (an opaque directory in the layer), relative to ``path``: with
  /// -x, each where another filesystem begins (a mount point, or a btrfs
  /// subvolume nested in the ROOT's, whose own device ends `find -xdev`
  /// and `list -x` there though the overlay would show it); with
  /// `--snapshot`, each mount point, which the snapshot does not hold.
  package var emptied: [[UInt8]] = []
  /// The files on which another file is mounted, relative to ``path``:
  /// the overlay shows the file below, so the mounted one is bound over it.
  package var fileMounts: [[UInt8]] = []
  /// The tool's own directories the backup reads (Déjà Dup's metadata,
  /// which it includes in each backup and restores to check it), relative
  /// to ``path``: shown as they really are, read-only, though a mark above
  /// hides the rest of what holds them (the directories on the way are
  /// emptied); bound over the view like ``fileMounts``.
  package var keptReal: [[UInt8]] = []

  package init(path: FilePath, hidden: [[UInt8]]) {
    self.path = path
    pathBytes = path.bytes
    self.real = path
    self.hidden = hidden
  }

  /// Whether this is the view of `/`, which COMMAND enters as its root.
  package var isSystemRoot: Bool { pathBytes == [UInt8(ascii: "/")] }
}

/// The walk of one ROOT for `run`: `list --excluded`'s visitor, which keeps
/// the paths instead of printing them, and refuses by name each item the
/// overlay cannot show as it is.
package final class ViewVisitor: ReportingVisitor {
  package let reporter: Reporter
  private let mechanisms: MechanismSet
  /// Where the overlay keeps its own attributes: `trusted.overlay.*` as
  /// root, `user.overlay.*` in a user namespace (`userxattr`).
  private let overlayNamespace: OverlayNamespaces
  /// The length of the walked root's path, which every kept path leaves out.
  package var rootLength = 0
  /// The root's entries not walked (the kernel's own, in the view of `/`).
  package var pruned: [[UInt8]] = []
  /// What this thread found excluded, relative to the root.
  package var hidden: [[UInt8]] = []
  /// With -x, the directories on another filesystem this thread met and
  /// did not enter, relative to the root.
  package var otherFilesystems: [[UInt8]] = []
  /// The items this thread could not read for want of permission.
  package var denied = 0

  package init(mechanisms: MechanismSet, privilege: MountNamespace.Privilege, reporter: Reporter) {
    self.mechanisms = mechanisms
    overlayNamespace = privilege.overlayNamespace
    self.reporter = reporter
  }

  /// In a snapshot, as root, this walker's reading of its tree: an entry
  /// whose inode it says cannot matter, but a directory, is shown as it is
  /// with no call (a directory is opened to be walked anyway, and may hold
  /// a CACHEDIR.TAG).
  package var inodes: SnapshotInodes?

  /// Records each directory walked and each excluded item for the watch
  /// that tells whether the tree changed while the view was made
  /// (``ChangeWatch``); `nil` when nothing watches (`--snapshot`).
  package var watch: WatchRecorder?

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.depth == 1, !pruned.isEmpty {
      let name = entry.name
      if pruned.contains(where: { $0.elementsEqual(name) }) { return .skipChildren }
    }
    if let inodes, entry.depth > 0, !entry.type.isDirectory, !inodes.mayMatter(entry.inode) {
      return .descend
    }
    let judgement: Judgement
    do {
      judgement = try Self.judge(
        entry.item, type: entry.type, isRoot: entry.depth == 0, mechanisms: mechanisms,
        overlayNamespace: overlayNamespace)
    } catch {
      if error.errno == .permissionDenied { denied += 1 }
      return reporter.unreadable(error, at: entry)
    }
    // "/" walks as "/a"; any other root as "ROOT/a".
    let start = entry.depth == 0 ? entry.pathBytes.count : rootLength == 1 ? 1 : rootLength + 1
    switch judgement {
    case .shown:
      if entry.isOnOtherFilesystem { otherFilesystems.append(Array(entry.pathBytes[start...])) }
      if let watch, entry.type.isDirectory {
        watch.record(
          entry.item, at: Array(entry.pathBytes[start...]),
          as: entry.isOnOtherFilesystem ? .closed(.shown) : .walked)
      }
      return .descend
    case .hidden:
      let path = Array(entry.pathBytes[start...])
      hidden.append(path)
      watch?.hide(entry.item, at: path, isDirectory: entry.type.isDirectory)
      return .skipChildren
    case .overlayAttribute:
      // Each such item is named: a directory's entries are walked too.
      do {
        try refuseOverlayAttribute(entry)
      } catch {
        return reporter.unreadable(error, at: entry)
      }
      return .descend
    case .whiteoutDevice:
      reporter.report(
        "\(reporter.shown(entry.path).escapedDescription): a character device 0/0, which overlayfs takes "
          + "for a whiteout and would not show; \(Self.fallback)")
      return .skipChildren
    }
  }

  package func walkFailed(_ error: SkipBackupError) {
    if error.errno == .permissionDenied { denied += 1 }
    reporter.report(error)
  }

  /// What the view does with an item.
  package enum Judgement: Equatable, Sendable {
    /// It shows the item as it is.
    case shown
    /// It hides the item, which is marked: a whiteout in the layer.
    case hidden
    /// The item has an attribute in the overlay's own namespace, which an
    /// overlay would obey or hide: the view is refused.
    case overlayAttribute
    /// The item is a character device 0/0, which overlayfs takes for a
    /// whiteout: the view is refused.
    case whiteoutDevice
  }

  /// What the view does with `item`, of `type`: the one judgement of the
  /// walk, and of ``ChangeWatch`` when it looks at an item again. A ROOT's
  /// own marks are looked at before the walk (`isRoot`).
  package static func judge(
    _ item: FileItem, type: FileType, isRoot: Bool, mechanisms: MechanismSet,
    overlayNamespace: OverlayNamespaces
  ) throws(SkipBackupError) -> Judgement {
    // The one listing of names that the marks read anyway tells whether
    // the overlay would take an attribute for its own. A link or special
    // file keeps no user.* attribute, so only root, who may find a
    // trusted.overlay.* one on it, lists its names (one call each).
    if type.isRegularOrDirectory || overlayNamespace == .trusted {
      let attributes = try ItemAttributes(of: item)
      if type.isRegularOrDirectory && !isRoot,
        !(try mechanisms.marks(on: item, listed: attributes)).isEmpty
      {
        return .hidden
      }
      if attributes.overlayNames.contains(overlayNamespace) { return .overlayAttribute }
    }
    // A character device 0/0 is a whiteout to overlayfs: it would not show.
    if type.isCharacterDevice, try item.status().st_rdev == 0 { return .whiteoutDevice }
    return .shown
  }

  /// What to do when the view cannot show a tree as it is.
  package static let fallback =
    "the view cannot show it as it is, so nothing was run: back this tree up with "
    + "skipbackup export's recipe for the tool instead (skipbackup export --help)"

  /// Reports the first of the entry's attributes in the overlay's own namespace.
  private func refuseOverlayAttribute(_ entry: borrowing TreeEntry) throws(SkipBackupError) {
    let prefix = overlayNamespace.prefix
    let name = try ExtendedAttributes(of: entry.item).names().first {
      $0.bytes.starts(with: prefix)
    }
    reporter.report(
      "\(reporter.shown(entry.path).escapedDescription): its attribute \(name.map { "\($0)" } ?? "") is "
        + "overlayfs's own, which an overlay obeys or hides; \(Self.fallback)")
  }
}

/// What `run` mounts, decided from the walk's result alone and without a
/// system call: each view (a ROOT, a filesystem mounted in one, a btrfs
/// subvolume nested in one) with what it hides, empties and binds, in mount
/// order (a view before the views inside it), and for each the view it is
/// inside. ``ViewMounter`` executes a plan by descriptor; its tests build
/// plans by hand (Tests/SkipBackupViewTests/ViewPlanTests.swift).
package struct ViewPlan {
  /// The views, a view before every view inside it.
  package let views: [ViewRoot]
  /// For each view, the deepest view it is inside (its index in
  /// ``views``, always before its own), or `nil`: the mounter reaches it
  /// from that view name by name, never by its path again.
  package let owners: [Int?]

  /// The plan of `views`, put in mount order: by the length of their
  /// paths, so that a view comes after every view it is inside.
  package init(_ views: [ViewRoot]) {
    let sorted = views.sorted { $0.pathBytes.count < $1.pathBytes.count }
    self.views = sorted
    owners = sorted.indices.map { index in
      sorted.indices.last { path(sorted[index].pathBytes[...], below: sorted[$0].pathBytes) != nil }
    }
  }

  /// View `index`'s path inside the view it is in; `nil` for a view of its own.
  package func inside(_ index: Int) -> [UInt8]? {
    owners[index].map { Array(path(views[index].pathBytes[...], below: views[$0].pathBytes)!) }
  }

  /// A view that has no place to be mounted: it is below a directory that
  /// another view shows empty (-x), as `emptied`, relative to `outer`.
  package struct Placeless: Equatable {
    package let inner: FilePath
    package let outer: FilePath
    package let emptied: [UInt8]
  }

  /// Each view below a directory another view shows empty (-x).
  package var placeless: [Placeless] {
    var found: [Placeless] = []
    for outer in views where !outer.emptied.isEmpty {
      for inner in views {
        guard let inside = path(inner.pathBytes[...], below: outer.pathBytes),
          let emptied = outer.emptied.first(where: {
            path(inside, isOrIsBelow: $0) && !inside.elementsEqual($0)
          })
        else { continue }
        found.append(Placeless(inner: inner.path, outer: outer.path, emptied: emptied))
      }
    }
    return found
  }

  /// The excluded items the walk's threads found in one ROOT, sorted and
  /// once each: an entry that vanished and came back is visited again at
  /// the end of the walk.
  package static func hidden(_ found: [[UInt8]]) -> [[UInt8]] {
    var hidden: [[UInt8]] = []
    for path in found.sorted(by: { $0.lexicographicallyPrecedes($1) }) where hidden.last != path {
      hidden.append(path)
    }
    return hidden
  }

  /// The directories on another filesystem the -x walk met, shown empty,
  /// sorted and once each; a marked subvolume's placeholder is hidden, not
  /// emptied.
  package static func emptied(_ found: [[UInt8]], hidden: [[UInt8]]) -> [[UInt8]] {
    Set(found).filter { !hidden.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
  }

  /// The deepest of `roots` that `point` is below, and `point` relative to it.
  package static func owner(of point: [UInt8], in roots: [ViewRoot]) -> (
    Int, ArraySlice<UInt8>
  )? {
    guard
      let owner = roots.indices.filter({ path(point[...], below: roots[$0].pathBytes) != nil })
        .max(by: { roots[$0].pathBytes.count < roots[$1].pathBytes.count }),
      let inside = path(point[...], below: roots[owner].pathBytes)
    else { return nil }
    return (owner, inside)
  }

  /// The view whose view shows `point` (a mount point, a nested subvolume),
  /// and `point` relative to it; `nil` when none does: it is below no view,
  /// or hidden there, or inside a directory shown empty, or in the view of
  /// / where the kernel's directories are bound back. In a snapshot
  /// (`frozen`) a hidden item that is itself the mount point is judged
  /// again there.
  package static func showing(_ point: [UInt8], in roots: [ViewRoot], frozen: Bool = false)
    -> (Int, ArraySlice<UInt8>)?
  {
    guard let (owner, inside) = owner(of: point, in: roots),
      !roots[owner].hidden.contains(where: {
        path(inside, isOrIsBelow: $0) && !(frozen && inside.elementsEqual($0))
      }),
      !roots[owner].emptied.contains(where: { path(inside, isOrIsBelow: $0) }),
      !(roots[owner].isSystemRoot && SystemRoot.holds(Array(inside)))
    else { return nil }
    return (owner, inside)
  }

  /// What is mounted at a mount point in a live tree, as the mount table
  /// and `fstatat` tell it.
  package enum Mounted: Equatable {
    /// A file mounted on a file.
    case file
    /// A directory; `sameFilesystem` when its device is that of the view
    /// it is in (a bind mount from the ROOT's own filesystem).
    case directory(sameFilesystem: Bool)
  }

  /// Adds to `roots` what a live view does with `mounted`, mounted at
  /// `point`, `inside` the view `owner` (``showing(_:in:frozen:)``):
  /// a file bound over the view; without -x a view of its own; with -x
  /// the empty directory `list -x` lists. Returns `false` for what the
  /// view cannot show: with -x, a directory bind-mounted from the view's
  /// own filesystem, which `list -x` enters.
  package static func add(
    _ mounted: Mounted, at point: FilePath, inside: ArraySlice<UInt8>, of owner: Int,
    to roots: inout [ViewRoot], oneFileSystem: Bool
  ) -> Bool {
    switch mounted {
    case .file:
      roots[owner].fileMounts.append(Array(inside))
    case .directory(let sameFilesystem) where oneFileSystem:
      guard !sameFilesystem else { return false }
      roots[owner].emptied.append(Array(inside))
    case .directory:
      split(&roots, owner, at: inside, as: point)
    }
    return true
  }

  /// Adds the view of `path`, `inside` the view `roots[owner]`, to be
  /// mounted inside it: what the outer view hides below it moves to it.
  package static func split(
    _ roots: inout [ViewRoot], _ owner: Int, at inside: ArraySlice<UInt8>, as path: FilePath
  ) {
    let prefix = Array(inside)
    var mine: [[UInt8]] = []
    roots[owner].hidden.removeAll { hidden in
      guard let below = SkipBackupCore.path(hidden[...], below: prefix) else { return false }
      mine.append(Array(below))
      return true
    }
    roots.append(ViewRoot(path: path, hidden: mine))
  }
}
