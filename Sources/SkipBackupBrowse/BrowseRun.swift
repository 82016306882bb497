import CNcurses
import SkipBackupCore
import SkipBackupMarking
import SkipBackupReport
import SkipBackupSizes
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `browse`: one walk of ROOT, then the full-screen browser, where marks
/// change in place.
package struct BrowseRun: Sendable, Equatable {
  package var root: FilePath
  /// The mechanisms `-m` names, or `nil`: then every mechanism of the default
  /// set counts, and `m` and `c` write and remove what `mark` and `clear` do.
  package var mechanisms: MechanismSet?
  /// Leave filesystems mounted below ROOT out (`-x`).
  package var oneFileSystem = false
  /// Ask before `m` marks a directory with more backed-up bytes than this.
  package var confirmAbove: Int64

  package init(
    root: FilePath, mechanisms: MechanismSet? = nil, oneFileSystem: Bool = false,
    confirmAbove: Int64
  ) {
    self.root = root
    self.mechanisms = mechanisms
    self.oneFileSystem = oneFileSystem
    self.confirmAbove = confirmAbove
  }

  /// The marks that count.
  package var counted: MechanismSet { mechanisms ?? .all }
  /// What `m` writes.
  package var marking: MechanismSet { mechanisms ?? MarkingRun.Action.mark.defaultMechanisms }
  /// What `c` removes.
  package var clearing: MechanismSet { mechanisms ?? MarkingRun.Action.clear.defaultMechanisms }

  package func run() throws(ReportedFailure) {
    let diagnostics = Diagnostics()
    guard system_isatty(STDOUT_FILENO) == 1, system_isatty(STDIN_FILENO) == 1 else {
      diagnostics.report(
        "browse needs a terminal: standard \(system_isatty(STDOUT_FILENO) == 1 ? "input" : "output") is not a terminal (skipbackup du prints the same sizes as text)"
      )
      throw .failure
    }
    let rootPath = root
    // ROOT is opened before the walk, so that marks go into the tree that
    // was walked; O_PATH, since a ROOT that is no directory (refused after
    // the walk, which says why) must not block.
    var opened: Descriptor?
    var openFailure: SkipBackupError?
    do throws(SkipBackupError) {
      opened = try Descriptor.open(rootPath, .pathOnly)
    } catch {
      openFailure = error
    }
    guard var browseTree = walk(rootPath, counted, diagnostics) else { throw .failure }
    guard let rootDescriptor = opened.take() else {
      if let openFailure { diagnostics.report(openFailure) }
      throw .failure
    }
    let editor = MarkEditor(
      counted: counted, marking: marking, clearing: clearing, root: rootDescriptor,
      rootPath: FilePath(bytes: browseTree.rootPath))
    let utf8 = cncurses_use_locale() == 1
    guard cncurses_guard_terminal() == 0, cncurses_begin() == 0 else {
      diagnostics.report(
        "browse cannot drive this terminal: terminfo does not know its type (TERM), or it cannot move the cursor"
      )
      throw .failure
    }
    browseTree.computeSums()
    let failures = browseTree.problems.count
    var screen = BrowseScreen(
      tree: browseTree, editor: editor, confirmAbove: confirmAbove, utf8: utf8,
      message: failures > 0
        ? "\(failures) item\(failures == 1 ? "" : "s") could not be read (! in Why)" : nil)
    screen.run()
    // Nothing above throws while ncurses runs; the terminal is put back
    // before the last word, so that it stays on the screen.
    cncurses_end()
    if editor.failures > 0 {
      diagnostics.report(
        "\(editor.failures) change\(editor.failures == 1 ? "" : "s") of marks failed in browse (the screen said why)"
      )
      throw .failure
    }
  }

  /// The walk: every item under ROOT with its own bytes and marks, on every
  /// core, with a progress line on standard error (when it is a terminal)
  /// after the first second.
  private func walk(
    _ root: FilePath, _ mechanisms: MechanismSet, _ diagnostics: Diagnostics
  ) -> BrowseTree? {
    var rootBytes = root.bytes
    while rootBytes.count > 1 && rootBytes.last == 0x2F { rootBytes.removeLast() }
    let exclusion: BrowseTree.RootExclusion?
    do throws(SkipBackupError) {
      exclusion = try rootExclusion(of: root, mechanisms)
    } catch {
      diagnostics.report(error)
      return nil
    }
    let progress = Progress(enabled: true)
    let links = SharedLinks()
    let builders = (0..<walkThreads).map { _ in
      TreeBuilder(
        mechanisms: mechanisms, rootLength: rootBytes.count, links: links,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    _ = walkTree(
      root: root, options: TreeWalkOptions(oneFileSystem: oneFileSystem), visitors: builders)
    progress.erase()
    let parts = builders.map { $0.takePart() }
    guard parts[0].nodes.count > 0 else {
      // ROOT itself could not be looked at.
      if let failure = parts[0].failedPaths.first {
        diagnostics.report(failure.1)
      } else {
        diagnostics.report("\(root.escapedDescription): cannot be read")
      }
      return nil
    }
    guard parts[0].nodes.flags[0].contains(.directory) else {
      diagnostics.report(
        "\(root.escapedDescription): not a directory; browse shows a directory's entries")
      return nil
    }
    var result = BrowseTree(rootPath: rootBytes, parts: parts)
    result.rootExclusion = exclusion
    return result
  }

  /// A marked directory above `root`, which leaves all of it out.
  private func rootExclusion(
    of root: FilePath, _ mechanisms: MechanismSet
  ) throws(SkipBackupError) -> BrowseTree.RootExclusion? {
    try mechanisms.markedAncestor(of: root).map { BrowseTree.RootExclusion(path: $0.bytes) }
  }
}
