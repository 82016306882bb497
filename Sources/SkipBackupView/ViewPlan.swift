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
  /// The topmost excluded items, relative to ``path`` ("a/b"), sorted.
  package var hidden: [[UInt8]]
  /// With -x, the directories where another filesystem is mounted, which
  /// the view shows as the empty directory `list -x` lists (an opaque
  /// directory in the layer), relative to ``path``.
  package var emptied: [[UInt8]] = []
  /// The files on which another file is mounted, relative to ``path``:
  /// the overlay shows the file below, so the mounted one is bound over it.
  package var fileMounts: [[UInt8]] = []

  package init(path: FilePath, hidden: [[UInt8]]) {
    self.path = path
    self.hidden = hidden
  }

  /// Whether this is the view of `/`, which COMMAND enters as its root.
  package var isSystemRoot: Bool { path.bytes == [UInt8(ascii: "/")] }
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

  package init(mechanisms: MechanismSet, privilege: MountNamespace.Privilege, reporter: Reporter) {
    self.mechanisms = mechanisms
    overlayNamespace = privilege.overlayNamespace
    self.reporter = reporter
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.depth == 1, !pruned.isEmpty {
      let name = entry.name
      if pruned.contains(where: { $0.elementsEqual(name) }) { return .skipChildren }
    }
    var marks: MechanismSet = []
    do {
      // The one listing of names that the marks read anyway tells whether
      // the overlay would take an attribute for its own. A link or special
      // file keeps no user.* attribute, so only root, who may find a
      // trusted.overlay.* one on it, lists its names (one call each).
      if entry.type.isRegularOrDirectory || overlayNamespace == .trusted {
        let attributes = try ItemAttributes(of: entry.item)
        if entry.type.isRegularOrDirectory && entry.depth > 0 {
          marks = try mechanisms.marks(on: entry.item, listed: attributes)
        }
        if marks.isEmpty && attributes.overlayNames.contains(overlayNamespace) {
          // Each such item is named: a directory's entries are walked too.
          try refuseOverlayAttribute(entry)
          return .descend
        }
      }
      // A character device 0/0 is a whiteout to overlayfs: it would not show.
      if entry.type.isCharacterDevice, try entry.item.status().st_rdev == 0 {
        reporter.report(
          "\(entry.path.escapedDescription): a character device 0/0, which overlayfs takes "
            + "for a whiteout and would not show; \(Self.fallback)")
        return .skipChildren
      }
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    guard !marks.isEmpty else { return .descend }
    // "/" walks as "/a"; any other root as "ROOT/a".
    let start = rootLength == 1 ? 1 : rootLength + 1
    hidden.append(Array(entry.pathBytes[start...]))
    return .skipChildren
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
      "\(entry.path.escapedDescription): its attribute \(name.map { "\($0)" } ?? "") is "
        + "overlayfs's own, which an overlay obeys or hides; \(Self.fallback)")
  }
}
