import ArgumentParser
import SkipBackupCore
import SystemPackage

/// `mark` or `clear`: the command's help, its action and the mechanisms it
/// acts on without `-m`; the options and the run are the same.
protocol MarkingCommand: ParsableCommand, DryRunHelp {
  static var action: MarkingRun.Action { get }
  static var defaultMechanisms: MechanismSet { get }
  var options: MarkingOptions<Self> { get }
  /// The form legacy and resource marks are written in: `mark --form`.
  var form: MarkForm { get }
}

extension MarkingCommand {
  static var dryRunHelp: String { "Show what would be \(action.past), and change nothing." }

  func run() throws {
    try MarkingRun(
      action: Self.action,
      mechanisms: options.mechanisms.mechanisms(default: Self.defaultMechanisms),
      items: options.items, reporting: options.reporting, dryRun: options.dryRun, form: form
    ).run(on: options.paths)
  }
}

/// The options of `mark` and `clear`, in the order their help lists them.
struct MarkingOptions<Command: MarkingCommand>: ParsableArguments {
  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @OptionGroup var dryRunOption: DryRunOption<Command>
  @OptionGroup var reporting: ReportingOptions
  @OptionGroup var paths: PathArguments

  var dryRun: Bool { dryRunOption.dryRun }

  func validate() throws {
    try items.validate(paths)
  }
}

/// What `mark` and `clear` share: going through the items, writing or
/// removing marks, saying what changed, and the exit status. Like
/// `SweepRun`, it holds how to act, which every walk thread reads; the
/// PATHs, which only `run(on:)` goes through, are its argument.
struct MarkingRun {
  enum Action: Sendable {
    case mark, clear

    var verb: String { self == .mark ? "mark" : "clear" }
    var past: String { self == .mark ? "marked" : "cleared" }
    var unchanged: String { self == .mark ? "already marked" : "not marked" }
  }

  let action: Action
  let mechanisms: MechanismSet
  let items: ItemOptions
  let reporting: ReportingOptions
  let dryRun: Bool
  let form: MarkForm

  func run(on paths: PathArguments) throws {
    let run = WalkRun(
      showsProgress: items.recursive && !reporting.quiet,
      threads: items.recursive ? walkThreads : 1
    ) { diagnostics, progress in
      MarkingWorker(run: self, reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    items.forEachPath(paths, run.diagnostics) { path in
      if items.recursive {
        run.walk(path, options: items.walkOptions)
      } else {
        run.visitors[0].applyToPath(path)
      }
    }
    try run.finish {
      if reporting.verbose {
        var counts = run.visitors.reduce(MarkingCounts()) { $0 + $1.counts }
        counts.vanished += run.vanished
        summarize(counts, run.diagnostics)
      }
    }
  }

  private func summarize(_ counts: MarkingCounts, _ diagnostics: Diagnostics) {
    let (changed, unchanged) =
      action == .mark ? (counts.marked, counts.alreadyMarked) : (counts.cleared, counts.notMarked)
    diagnostics.summarize(
      [
        "\(dryRun ? "would \(action.verb)" : action.past) \(changed)",
        "\(action.unchanged) \(unchanged)",
        "skipped \(counts.skipped) (symbolic links, devices, FIFOs and sockets)",
      ], notEntered: items.oneFileSystem ? counts.otherFilesystem : nil, vanished: counts.vanished)
  }
}

/// What a run that writes marks (mark, clear, sweep) did, counted by each
/// walk thread for itself and added up when the walk is over.
struct MarkingCounts {
  /// Items marked, and items already marked.
  var marked = 0
  var alreadyMarked = 0
  /// What the items sweep marked hold on disk, in bytes (worked out only
  /// where it is shown, with `--dry-run` or `-v`).
  var bytes: Int64 = 0
  /// Items cleared (by clear, or by sweep taking its marks back), and items
  /// clear found without a mark.
  var cleared = 0
  var notMarked = 0
  /// Items passed over, mount points not entered (`-x`), and items gone
  /// before they could be handled.
  var skipped = 0
  var otherFilesystem = 0
  var vanished = 0

  static func + (lhs: Self, rhs: Self) -> Self {
    Self(
      marked: lhs.marked + rhs.marked, alreadyMarked: lhs.alreadyMarked + rhs.alreadyMarked,
      bytes: lhs.bytes + rhs.bytes, cleared: lhs.cleared + rhs.cleared,
      notMarked: lhs.notMarked + rhs.notMarked, skipped: lhs.skipped + rhs.skipped,
      otherFilesystem: lhs.otherFilesystem + rhs.otherFilesystem,
      vanished: lhs.vanished + rhs.vanished)
  }
}

/// One walk thread's part of `mark -R` or `clear -R` (and the whole of a run
/// without `-R`): its own output buffer, counts and progress count.
final class MarkingWorker: ReportingVisitor {
  let reporter: Reporter
  var counts = MarkingCounts()
  private let run: MarkingRun
  private let fileMechanisms: MechanismSet

  init(run: MarkingRun, reporter: Reporter) {
    self.run = run
    self.fileMechanisms = run.mechanisms.applicableToFiles
    self.reporter = reporter
  }

  /// One PATH, not recursive: a symbolic link is refused unless `-L`.
  func applyToPath(_ path: FilePath) {
    do {
      try applyThrowing(FileItem(path: path, followSymbolicLinks: run.items.dereference))
    } catch {
      reporter.report(error)
    }
  }

  /// Marks or clears one item, not recursive, with the failure thrown, not
  /// reported: ``applyToPath(_:)``'s, and `browse`'s, which reaches the item
  /// by name in its open parent and shows a failure on its screen. A
  /// symbolic link is refused unless the item follows it (`-L`).
  func applyThrowing(_ item: FileItem) throws(SkipBackupError) {
    if !item.followsSymbolicLinks, let refusal = symbolicLinkRefusal(item) { throw refusal }
    try apply(item, with: run.mechanisms) { item.displayPath }
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.isOnOtherFilesystem {
      counts.otherFilesystem += 1
      return .skipChildren
    }
    switch entry.type {
    case .regular, .directory:
      return apply(entry)
    case .symbolicLink where entry.depth == 0:
      reporter.report(symbolicLinkError(entry.item))
    case _ where entry.depth == 0:
      // A device, FIFO or socket given as PATH is handled as without -R:
      // the kernel's refusal is reported, not counted as skipped.
      return apply(entry)
    default:
      counts.skipped += 1  // links, devices, FIFOs and sockets keep no user attributes
    }
    return .descend
  }

  /// Marks or clears an entry of a walk; says whether the walk may go on
  /// into it: not when it has been replaced by a symbolic link or a special
  /// file since its directory was listed, and not yet when it is gone (the
  /// walk looks for it again at its end: renamed away and straight back, it
  /// is handled then).
  private func apply(_ entry: borrowing TreeEntry) -> TreeVisit {
    // A file met on the way gets the marks files can carry (no CACHEDIR.TAG).
    let mechanisms = entry.depth > 0 && !entry.type.isDirectory ? fileMechanisms : run.mechanisms
    if mechanisms.isEmpty { return .descend }
    let pathBytes = entry.pathBytes
    let item = entry.item
    do {
      try retryingAMomentaryRefusal(at: entry.depth) { () throws(SkipBackupError) in
        try apply(item, with: mechanisms) { FilePath(bytes: Array(pathBytes)) }
      }
    } catch  where error.isNoSuchFile && entry.depth > 0 {
      return .vanished
    } catch  where entry.depth > 0 && error.isSwappedInDuringWalk {
      // Swapped in during the walk: skipped as if met on the way, and not
      // followed, as the sweep skips it.
      counts.skipped += 1
      return .skipChildren
    } catch {
      reporter.report(error, at: entry)
    }
    return .descend
  }

  /// Marks or clears `item`, or with `--dry-run` says whether it would.
  private func apply(
    _ item: FileItem, with mechanisms: MechanismSet, path: () -> FilePath
  ) throws(SkipBackupError) {
    let changed: Bool
    if run.dryRun {
      let pending: MechanismSet
      if run.action == .mark && run.form != .local {
        pending = try mechanisms.isMarked(item, in: run.form) ? [] : mechanisms
      } else {
        let marks = try mechanisms.marks(on: item)
        pending = run.action == .mark ? mechanisms.subtracting(marks) : marks
      }
      changed = !pending.isEmpty
      // What the run would fail with, found without writing.
      if changed { try pending.check(item) }
    } else {
      changed =
        run.action == .mark
        ? try mechanisms.mark(item, form: run.form) : try mechanisms.clear(item)
      // A mark a person makes again becomes theirs: the sweep's record
      // goes, and no sweep removes the mark later. A mark cleared leaves
      // the record's other mechanisms to the sweep (docs/sweep.md): the
      // record went whole, and a sweep's `resource` mark left after
      // `clear -m xdg` became a hand mark no `--undo` took back (issue 24,
      // 7). In a recursive run, only where the mark was there already or
      // was removed (a call per item otherwise costs every item of the tree).
      if !run.items.recursive || (run.action == .mark) != changed {
        // A record others may have written is never written again as this
        // user's: it goes, as a sweep would not trust it either.
        if run.action == .clear, let record = try SweepProvenance.read(from: item),
          !record.mechanisms.subtracting(mechanisms).isEmpty,
          SweepStateReader.recordIsTrusted(on: item)
        {
          try SweepProvenance(
            mechanisms: record.mechanisms.subtracting(mechanisms), rule: record.rule
          ).write(to: item)
        } else {
          try SweepProvenance.remove(from: item)
        }
      }
    }
    switch (run.action, changed) {
    case (.mark, true): counts.marked += 1
    case (.mark, false): counts.alreadyMarked += 1
    case (.clear, true): counts.cleared += 1
    case (.clear, false): counts.notMarked += 1
    }
    guard changed else { return }
    if run.dryRun {
      reporter.output.write("would \(run.action.verb) ")
      reporter.output.write(path(), terminator: UInt8(ascii: "\n"))
    } else if run.reporting.verbose {
      reporter.output.write("\(run.action.past) ")
      reporter.output.write(path(), terminator: UInt8(ascii: "\n"))
    }
  }

  private func symbolicLinkRefusal(_ item: FileItem) -> SkipBackupError? {
    guard let status = try? item.status(), status.st_mode & S_IFMT == S_IFLNK else { return nil }
    return symbolicLinkError(item)
  }

  private func symbolicLinkError(_ item: FileItem) -> SkipBackupError {
    SkipBackupError(
      refusing: .symbolicLinkNotFollowed, path: item.displayPath, fileType: .symbolicLink)
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
