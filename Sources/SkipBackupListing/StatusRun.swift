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
        let item = FileItem(path: path, followSymbolicLinks: items.dereference)
        let read = try report.read(item, mechanisms, strict: true)
        let above = try mechanisms.markedAncestor(of: path, followSymbolicLinks: items.dereference)
        report.write(
          path.bytes, marks: read.marks, inheritedFrom: above?.bytes, sweepRule: read.rule,
          forms: read.forms)
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
    let read: StatusReport.Reading
    do throws(SkipBackupError) {
      // A symbolic link or special file keeps no marks: not even listed.
      read =
        entry.type.isRegularOrDirectory
        ? try report.read(entry.item, mechanisms) : StatusReport.Reading(marks: [])
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    // The rules the Swift sequence `MechanismSet.statuses(under:)` follows too.
    report.write(
      entry.pathBytes, marks: read.marks, inheritedFrom: entry.inheritedFrom(above: above),
      sweepRule: read.rule, forms: read.forms)
    return statusDecision(marks: read.marks)
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

  /// What a line says of an item beyond its state.
  struct Reading {
    var marks: MechanismSet
    /// The rule behind a sweep's mark (-v and JSON, marked items only).
    var rule: [UInt8]? = nil
    /// Where a Mac's mark is kept when a Samba stream holds it (MarkForm),
    /// for -v's text, marked items only; `nil` for every other line: an
    /// empty array made and released for each of them cost 0.8 % of
    /// `status -R`'s instructions on the 200,000-file tree.
    var forms: [String]? = nil
  }

  /// The marks of `item` among `mechanisms`, and what -v and JSON add for
  /// a marked one, all from one listing of its names (``SweepListing``):
  /// the marks, the sweep's record and the Samba streams each listed the
  /// item's names again, three listings for each marked item.
  /// A record that cannot be read fails the item when `strict` (a PATH
  /// given), and is no rule in a walk.
  func read(
    _ item: FileItem, _ mechanisms: MechanismSet, strict: Bool = false
  ) throws(SkipBackupError) -> Reading {
    guard verbose || format == .json else { return Reading(marks: try mechanisms.marks(on: item)) }
    func rule(_ listing: SweepListing?) throws(SkipBackupError) -> [UInt8]? {
      do {
        if let listing { return try SweepRecord.read(from: item, listed: listing)?.rule }
        return try SweepRecord.read(from: item)?.rule
      } catch {
        if strict { throw error }
        return nil
      }
    }
    // Marks kept in no attribute (nodump, cachedir) need no listing; a
    // marked item's record does.
    guard !mechanisms.isDisjoint(with: .attributes) else {
      var read = Reading(marks: try mechanisms.marks(on: item))
      if !read.marks.isEmpty { read.rule = try rule(nil) }
      return read
    }
    let listing = try SweepListing(of: item)
    var read = Reading(marks: try mechanisms.marks(on: item, listed: listing.attributes))
    guard !read.marks.isEmpty else { return read }
    read.rule = try rule(listing)
    if verbose && format == .text && !read.marks.isDisjoint(with: .apple) {
      read.forms = try? MarkForm.labels(
        of: item, listed: listing.attributes, mechanisms: read.marks)
    }
    return read
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
