import ArgumentParser
import SkipBackupCore
import SystemPackage

/// What every command that walks a tree does the same way, so that the
/// command supplies only its visitor and its summary: the progress line,
/// the diagnostics, one visitor per walk thread, the check for a marked
/// directory above a ROOT, the count of what vanished, flushing, and the
/// exit status.
///
/// One policy for an entry gone since its directory was listed holds in
/// every command: its visitor says ``TreeVisit/vanished`` (through
/// ``Reporter/unreadable(_:at:)``), the walk looks it up again at its end,
/// and ``vanished`` counts it only if it is still gone. A vanished entry is
/// no failure: nothing that exists was left unread.
final class WalkRun<Visitor: ReportingVisitor> {
  let progress: Progress
  let diagnostics: Diagnostics
  let visitors: [Visitor]
  /// Entries that vanished during the walks so far, and were still gone at
  /// the end of theirs.
  private(set) var vanished = 0

  /// A run of `threads` visitors, each made with the run's diagnostics and
  /// progress line (shown only when `showsProgress` and standard error is a
  /// terminal).
  init(
    showsProgress: Bool, threads: Int = walkThreads,
    visitor makeVisitor: (Diagnostics, Progress) -> Visitor
  ) {
    progress = Progress(enabled: showsProgress)
    diagnostics = Diagnostics(progress: progress)
    let (progress, diagnostics) = (progress, diagnostics)
    visitors = (0..<threads).map { _ in makeVisitor(diagnostics, progress) }
  }

  /// Where `root` stands against `mechanisms`.
  enum Placement {
    /// No marked directory is above `root`.
    case unmarked
    /// The nearest marked directory above `root` excludes it as a whole.
    case below(FilePath)
    /// The directories above `root` could not be read; the failure is reported.
    case unreadable
  }

  /// Whether a marked directory above `root` excludes it as a whole.
  func placement(
    of root: FilePath, _ mechanisms: MechanismSet, followSymbolicLinks: Bool = false
  ) -> Placement {
    do throws(SkipBackupError) {
      let above = try mechanisms.markedAncestor(of: root, followSymbolicLinks: followSymbolicLinks)
      return above.map(Placement.below) ?? .unmarked
    } catch {
      diagnostics.report(error, after: visitors[0].reporter.output)
      return .unreadable
    }
  }

  /// Walks `root` with the run's visitors.
  func walk(_ root: FilePath, options: TreeWalkOptions) {
    vanished += walkTree(root: root, options: options, visitors: visitors).vanished
  }

  /// Writes what each visitor holds, erases the progress line, takes the
  /// command's `last` step (export commits its file there), and ends the
  /// run: `ExitCode.failure` when anything could not be read or written.
  func finish(_ last: () -> Void = {}) throws {
    for visitor in visitors { visitor.reporter.output.flush() }
    progress.erase()
    last()
    if diagnostics.failures > 0 { throw ExitCode.failure }
  }
}

/// Runs `body`, and once more after an `EPERM` on what the look that
/// explains it found to be a file or directory: a name that a symbolic link
/// held for a moment and that a directory or file holds again (a swap under
/// way: scripts/torture's swap rounds) writes now, while an item that
/// refuses for good (immutable, a filesystem or security module that says
/// no) refuses again and is reported. One try more, not a loop: `mark -R`
/// and `sweep` both write through it.
func retryingAMomentaryRefusal<R>(
  at depth: Int, _ body: () throws(SkipBackupError) -> R
) throws(SkipBackupError) -> R {
  do {
    return try body()
  } catch  where depth > 0 && error.errno == .notPermitted && !error.isRefusedForFileType {
    return try body()
  }
}
