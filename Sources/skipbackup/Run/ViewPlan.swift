import SkipBackupCore
import SystemPackage

/// What one ROOT's view hides: the topmost excluded items under it, as
/// `list --excluded` finds them, by their path relative to the ROOT. The
/// view is built from these alone, so that its cost beyond the one walk
/// grows with the marks, not with the entries.
struct ViewRoot {
  /// The ROOT's canonical path, where the view is mounted.
  let path: FilePath
  /// Where the ROOT's items are read: the ROOT itself, or its copy in a
  /// snapshot (`run --snapshot`).
  var real: FilePath
  /// The topmost excluded items, relative to ``path`` ("a/b"), sorted.
  var hidden: [[UInt8]]

  init(path: FilePath, hidden: [[UInt8]]) {
    self.path = path
    self.real = path
    self.hidden = hidden
  }
}

/// The walk of one ROOT for `run`: `list --excluded`'s visitor, which keeps
/// the paths instead of printing them.
final class ViewVisitor: ReportingVisitor {
  let reporter: Reporter
  private let mechanisms: MechanismSet
  /// The length of the walked root's path, which every kept path leaves out.
  var rootLength = 0
  /// What this thread found excluded, relative to the root.
  var hidden: [[UInt8]] = []

  init(mechanisms: MechanismSet, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.reporter = reporter
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
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
