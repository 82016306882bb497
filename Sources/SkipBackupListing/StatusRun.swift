import SkipBackupCore
import SkipBackupReport
import SkipBackupSweep
import SystemPackage

/// `status`: whether each item is excluded, one line (or JSON object) an
/// item, as `tmutil isexcluded` prints it.
package struct StatusRun: Sendable, Equatable {
  package var items: ItemSelection
  package var mechanisms: MechanismSet
  package var format: OutputFormat = .text
  /// Also say which marks each item carries and where an inherited
  /// exclusion comes from (`-v`).
  package var verbose = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// Where the lines are printed, and the failures.
  package var streams: Streams = .standard

  package init(
    items: ItemSelection, mechanisms: MechanismSet, format: OutputFormat = .text,
    verbose: Bool = false, quiet: Bool = false, streams: Streams = .standard
  ) {
    self.items = items
    self.mechanisms = mechanisms
    self.format = format
    self.verbose = verbose
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let (mechanisms, format, verbose) = (mechanisms, format, verbose)
    let run = WalkRun(
      streams: streams, showsProgress: items.recursive && !quiet,
      threads: items.recursive ? walkThreads : 1
    ) { diagnostics, progress in
      StatusVisitor(
        mechanisms: mechanisms,
        report: StatusReport(
          format: format, verbose: verbose, output: Output(sink: diagnostics.outputSink)),
        diagnostics: diagnostics, progress: progress)
    }
    let report = run.visitors[0].report
    items.forEachPath(run.diagnostics) { path in
      if items.recursive {
        let above: FilePath?
        switch run.placement(of: path, mechanisms, followSymbolicLinks: items.dereference) {
        case .unmarked: above = nil
        case .below(let directory): above = directory
        case .unreadable: return
        }
        for visitor in run.visitors { visitor.above = above?.bytes }
        run.walk(path, options: items.walkOptions)
        return
      }
      do throws(SkipBackupError) {
        let status = try mechanisms.status(of: path, followSymbolicLinks: items.dereference)
        let rule =
          status.marks.isEmpty
          ? nil
          : try SweepRecord.read(
            from: FileItem(path: path, followSymbolicLinks: items.dereference))?.rule
        report.write(
          path.bytes, marks: status.marks, inheritedFrom: status.inheritedFrom?.bytes,
          sweepRule: rule,
          forms: report.forms(
            of: FileItem(path: path, followSymbolicLinks: items.dereference),
            marks: status.marks))
      } catch {
        run.diagnostics.report(error, after: report.output)
      }
    }
    try run.finish()
  }
}

/// One walk thread's part of `status -R`: its own report, and a reporter
/// on the report's output.
private final class StatusVisitor: ReportingVisitor {
  let report: StatusReport
  let reporter: Reporter
  /// The nearest marked directory above the walk's root, if any.
  var above: [UInt8]?
  private let mechanisms: MechanismSet

  init(
    mechanisms: MechanismSet, report: StatusReport, diagnostics: Diagnostics, progress: Progress
  ) {
    self.mechanisms = mechanisms
    self.report = report
    self.reporter = Reporter(output: report.output, diagnostics: diagnostics, progress: progress)
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    // Below a marked directory a plain text line is "[Excluded]    PATH"
    // whatever the item's own marks, which only -v and JSON show: they are
    // not read there (4,000 of the 202,101 `listxattrat` on the 200,000-file
    // tree, and the values behind them).
    if report.format == .text && !report.verbose
      && (entry.markedAncestorLength != nil || above != nil)
    {
      report.writeExcluded(entry.pathBytes)
      return .descend
    }
    let marks: MechanismSet
    do throws(SkipBackupError) {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    // The nearest marked directory: one in the walk, or else one above the root.
    let inheritedFrom = entry.markedAncestorLength.map { Array(entry.pathBytes[..<$0]) } ?? above
    // The rule behind a sweep's mark: read only for marked items.
    let rule =
      marks.isEmpty || !(report.verbose || report.format == .json)
      ? nil : (try? SweepRecord.read(from: entry.item))?.rule
    report.write(
      entry.pathBytes, marks: marks, inheritedFrom: inheritedFrom, sweepRule: rule,
      forms: report.forms(of: entry.item, marks: marks))
    return marks.isEmpty ? .descend : .descendMarked
  }
}

/// Prints status lines, as text or JSON Lines.
final class StatusReport {
  let format: OutputFormat
  let verbose: Bool
  let output: Output
  private var line = JSONLine()

  init(format: OutputFormat, verbose: Bool, output: Output) {
    self.format = format
    self.verbose = verbose
    self.output = output
  }

  func write(
    _ path: some Collection<UInt8>, marks: MechanismSet, inheritedFrom: [UInt8]?,
    sweepRule: [UInt8]? = nil, forms: [String]? = nil
  ) {
    let excluded = !marks.isEmpty || inheritedFrom != nil
    switch format {
    case .json:
      line.reset()
      line.exclusion(
        path: path, excluded: excluded, marks: marks.names, inheritedFrom: inheritedFrom)
      if let sweepRule { line.path("sweep_rule", sweepRule) }
      output.write(line.finish())
    case .text:
      writeState(of: path, excluded: excluded)
      if verbose {
        var details: [String] = []
        if !marks.isEmpty { details.append("marked: " + marks.names.joined(separator: ", ")) }
        if let forms, !forms.isEmpty {
          details.append("found as " + forms.joined(separator: " and "))
        }
        if let sweepRule {
          details.append("by sweep rule " + String(escapingForDisplay: sweepRule))
        }
        if let inheritedFrom {
          details.append("inherited from " + String(escapingForDisplay: inheritedFrom))
        }
        if !details.isEmpty { output.write("    (" + details.joined(separator: "; ") + ")") }
      }
      output.write(UInt8(ascii: "\n"))
    }
    output.endRecord()
  }

  /// Where a Mac's mark on `item` is kept when a Samba stream holds it
  /// (MarkForm), for -v's text: read for marked items only.
  ///
  /// `nil` for every other line: an empty array made and released for each
  /// of them cost 0.8 % of `status -R`'s instructions on the 200,000-file tree.
  func forms(of item: FileItem, marks: MechanismSet) -> [String]? {
    guard verbose && format == .text && !marks.isDisjoint(with: .apple) else { return nil }
    return try? MarkForm.labels(of: item, mechanisms: marks)
  }

  /// The plain text line of an excluded item: what ``write(_:marks:inheritedFrom:sweepRule:)``
  /// prints for one without `-v`, whatever its marks.
  func writeExcluded(_ path: UnsafeBufferPointer<UInt8>) {
    writeState(of: path, excluded: true)
    output.write(UInt8(ascii: "\n"))
    output.endRecord()
  }

  /// `[Excluded]    PATH` or `[Included]    PATH`, the start of a text line.
  @inline(__always)
  private func writeState(of path: some Collection<UInt8>, excluded: Bool) {
    // A StaticString: its bytes are copied at once, with no String to read.
    let state: StaticString = excluded ? "[Excluded]    " : "[Included]    "
    output.write(state)
    // The buffer, not the collection: Output is another module, where a
    // generic call is not specialized (7 % of status -R's instructions).
    let written: Void? = path.withContiguousStorageIfAvailable { output.writeName($0) }
    if written == nil { Array(path).withUnsafeBufferPointer { output.writeName($0) } }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
