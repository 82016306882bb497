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
  /// Where the ROOT's items are read: the ROOT itself, or its copy in a
  /// snapshot (`run --snapshot`).
  package var real: FilePath
  /// The topmost excluded items, relative to ``path`` ("a/b"), sorted.
  package var hidden: [[UInt8]]

  package init(path: FilePath, hidden: [[UInt8]]) {
    self.path = path
    self.real = path
    self.hidden = hidden
  }
}

/// The walk of one ROOT for `run`: `list --excluded`'s visitor, which keeps
/// the paths instead of printing them.
package final class ViewVisitor: ReportingVisitor {
  package let reporter: Reporter
  private let mechanisms: MechanismSet
  /// The length of the walked root's path, which every kept path leaves out.
  package var rootLength = 0
  /// What this thread found excluded, relative to the root.
  package var hidden: [[UInt8]] = []

  package init(mechanisms: MechanismSet, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.reporter = reporter
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.depth == 0 { return .descend }
    let marks: MechanismSet
    do {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    guard !marks.isEmpty else { return .descend }
    // "/" walks as "/a"; any other root as "ROOT/a".
    let start = rootLength == 1 ? 1 : rootLength + 1
    hidden.append(Array(entry.pathBytes[start...]))
    return .skipChildren
  }
}
