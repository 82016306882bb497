import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `list`: walks each ROOT and prints the topmost excluded items, or every
/// included one, byte for byte.
package struct ListRun: Sendable, Equatable {
  /// Which items are printed.
  package enum Selection: String, CaseIterable, Sendable {
    /// The topmost excluded items: a marked directory, not what is under it.
    case excluded
    /// Every item that no mark excludes.
    case included
  }

  package var roots: [FilePath]
  package var mechanisms: MechanismSet
  package var selection: Selection = .excluded
  /// End each path with a NUL byte instead of a newline (`-0`).
  package var nullTerminated = false
  /// Stay on each ROOT's filesystem (`-x`): mount points are listed, not entered.
  package var oneFileSystem = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// Where the paths are printed, and the failures.
  package var streams: Streams = .standard

  package init(
    roots: [FilePath], mechanisms: MechanismSet, selection: Selection = .excluded,
    nullTerminated: Bool = false, oneFileSystem: Bool = false, quiet: Bool = false,
    streams: Streams = .standard
  ) {
    self.roots = roots
    self.mechanisms = mechanisms
    self.selection = selection
    self.nullTerminated = nullTerminated
    self.oneFileSystem = oneFileSystem
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let terminator = nullTerminated ? 0 : UInt8(ascii: "\n")
    let wantsExcluded = selection == .excluded
    let mechanisms = mechanisms
    let run = WalkRun(streams: streams, showsProgress: !quiet) { diagnostics, progress in
      ListVisitor(
        mechanisms: mechanisms, wantsExcluded: wantsExcluded, terminator: terminator,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    let output = run.visitors[0].reporter.output
    for root in roots {
      switch run.placement(of: root, mechanisms) {
      case .unmarked:
        run.walk(root, options: TreeWalkOptions(oneFileSystem: oneFileSystem))
      case .below:
        // Excluded as a whole.
        if wantsExcluded { output.write(root, terminator: terminator) }
      case .unreadable: continue
      }
    }
    try run.finish()
  }
}

/// One walk thread's part of `list`: its own reporter (output buffer and
/// progress count).
private final class ListVisitor: ReportingVisitor {
  let reporter: Reporter
  private let output: Output
  private let mechanisms: MechanismSet
  private let wantsExcluded: Bool
  private let terminator: UInt8

  init(mechanisms: MechanismSet, wantsExcluded: Bool, terminator: UInt8, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.wantsExcluded = wantsExcluded
    self.terminator = terminator
    self.reporter = reporter
    self.output = reporter.output
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    let marks: MechanismSet
    do throws(SkipBackupError) {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    // The rule the Swift sequence `MechanismSet.excludedItems(under:)` follows too.
    let (excluded, next) = excludedItemDecision(marks: marks)
    if excluded == wantsExcluded {
      if terminator == 0 {
        output.write(entry.pathBytes)
      } else {
        output.writeName(entry.pathBytes)
      }
      output.write(terminator)
      output.endRecord()
    }
    return next
  }
}
