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
package final class WalkRun<Visitor: ReportingVisitor> {
  package let progress: Progress
  package let diagnostics: Diagnostics
  package let visitors: [Visitor]
  /// Entries that vanished during the walks so far, and were still gone at
  /// the end of theirs.
  package private(set) var vanished = 0

  /// A run of `threads` visitors on `streams`, each made with the run's
  /// diagnostics and progress line (shown only when `showsProgress` and the
  /// errors stream is a terminal).
  package init(
    streams: Streams = .standard, showsProgress: Bool, threads: Int = walkThreads,
    visitor makeVisitor: (Diagnostics, Progress) -> Visitor
  ) {
    progress = Progress(enabled: showsProgress, streams: streams)
    diagnostics = Diagnostics(streams: streams, progress: progress)
    let (progress, diagnostics) = (progress, diagnostics)
    visitors = (0..<threads).map { _ in makeVisitor(diagnostics, progress) }
  }

  /// Where `root` stands against `mechanisms`.
  package enum Placement {
    /// No marked directory is above `root`.
    case unmarked
    /// The nearest marked directory above `root` excludes it as a whole.
    case below(FilePath)
    /// The directories above `root` could not be read; the failure is reported.
    case unreadable
  }

  /// Whether a marked directory above `root` excludes it as a whole.
  package func placement(
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
  package func walk(_ root: FilePath, options: TreeWalkOptions) {
    vanished += walkTree(root: root, options: options, visitors: visitors).vanished
  }

  /// Writes what each visitor holds, erases the progress line, takes the
  /// command's `last` step (export commits its file there), and ends the
  /// run: ``ReportedFailure/failure`` when anything could not be read or
  /// written.
  package func finish(_ last: () -> Void = {}) throws(ReportedFailure) {
    for visitor in visitors { visitor.reporter.output.flush() }
    progress.erase()
    last()
    if diagnostics.failures > 0 { throw .failure }
  }
}

/// A run that ended without doing all its work: every cause has been
/// reported on standard error, and the process exits with ``status``. The
/// engines' one error; the executable turns it into its exit.
package struct ReportedFailure: Error, Equatable, Sendable {
  /// The exit status: 1 for work not done, 64 for what the user must
  /// change first (a usage error, a rules file that does not parse).
  package let status: Int32

  package init(status: Int32) {
    self.status = status
  }

  package static let failure = ReportedFailure(status: 1)
  package static let usage = ReportedFailure(status: 64)
}
