import SkipBackupCore
import SkipBackupReport
import SkipBackupSweep
import SystemPackage

/// What `mark` and `clear` share: going through the items, writing or
/// removing marks, saying what changed, and the exit status. Like
/// `SweepPlan`, it holds how to act, which every walk thread reads; the
/// PATHs, which only `run(on:)` goes through, are its argument.
package struct MarkingRun: Sendable, Equatable {
  package enum Action: Sendable, Equatable {
    case mark, clear

    package var verb: String { self == .mark ? "mark" : "clear" }
    package var past: String { self == .mark ? "marked" : "cleared" }
    package var unchanged: String { self == .mark ? "already marked" : "not marked" }

    /// What is written or removed when no `-m` names it, for `mark`,
    /// `clear` and browse's `m` and `c` alike: a mark is the resource
    /// value, as iOS 5.1's `isExcludedFromBackup` sets it; a clear removes
    /// the default set, whichever of them made the item excluded.
    package var defaultMechanisms: MechanismSet { self == .mark ? [.resource] : .all }
  }

  package var action: Action
  package var mechanisms: MechanismSet
  package var items: ItemSelection
  /// Print each item that changes, and end with a summary (`-v`).
  package var verbose = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// Say what would change, and change nothing (`-n`).
  package var dryRun = false
  /// Where legacy and resource marks are written (`mark --form`).
  package var form: MarkForm = .local
  /// Where what changed is printed, and the failures.
  package var streams: Streams = .standard

  package init(
    action: Action, mechanisms: MechanismSet, items: ItemSelection, verbose: Bool = false,
    quiet: Bool = false, dryRun: Bool = false, form: MarkForm = .local,
    streams: Streams = .standard
  ) {
    self.action = action
    self.mechanisms = mechanisms
    self.items = items
    self.verbose = verbose
    self.quiet = quiet
    self.dryRun = dryRun
    self.form = form
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let run = WalkRun(
      streams: streams, showsProgress: items.recursive && !quiet,
      threads: items.recursive ? walkThreads : 1
    ) { diagnostics, progress in
      MarkingWorker(run: self, reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    items.forEachPath(run.diagnostics) { path in
      if items.recursive {
        run.walk(path, options: items.walkOptions)
      } else {
        run.visitors[0].applyToPath(path)
      }
    }
    try run.finish {
      if verbose {
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

/// One walk thread's part of `mark -R` or `clear -R` (and the whole of a run
/// without `-R`): its own output buffer, counts and progress count.
package final class MarkingWorker: ReportingVisitor {
  package let reporter: Reporter
  package var counts = MarkingCounts()
  private let run: MarkingRun
  private let fileMechanisms: MechanismSet

  package init(run: MarkingRun, reporter: Reporter) {
    self.run = run
    self.fileMechanisms = run.mechanisms.applicableToFiles
    self.reporter = reporter
  }

  /// One PATH, not recursive: a symbolic link is refused unless `-L`.
  package func applyToPath(_ path: FilePath) {
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
  package func applyThrowing(_ item: FileItem) throws(SkipBackupError) {
    if !item.followsSymbolicLinks, let refusal = symbolicLinkRefusal(item) { throw refusal }
    try apply(item, with: run.mechanisms) { item.displayPath }
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
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
    } else if run.action == .mark {
      changed = try mechanisms.mark(item, form: run.form)
      // In a recursive run, only where the mark was there already: a call
      // per item otherwise costs every item of the tree.
      if !run.items.recursive || !changed { try SweepRecord.handOver(item) }
    } else {
      changed = try clear(item, mechanisms)
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
    } else if run.verbose {
      reporter.output.write("\(run.action.past) ")
      reporter.output.write(path(), terminator: UInt8(ascii: "\n"))
    }
  }

  /// Clears `mechanisms` on `item`: a sweep's record first, then the marks
  /// it names, and the record only where the one listing shows both. A
  /// sweep that looks between the two sees a mark without a record, a hand
  /// mark it leaves, which this clear then removes. Marks first, a sweep
  /// looking between the two sees its record without the marks, marks
  /// again, and loses the record to this clear: a sweep's mark no undo
  /// takes back (RaceTests makes the sweep look at that exact call). A
  /// record without these marks (a sweep that has written its record and
  /// not yet its marks) is left to that sweep.
  private func clear(_ item: FileItem, _ mechanisms: MechanismSet) throws(SkipBackupError) -> Bool {
    let listing: SweepListing
    do {
      listing = try SweepListing(of: item)
    } catch {
      // What the clear's own calls say of the item, as without a record.
      return try mechanisms.clear(item)
    }
    let listed = listing.attributes
    // Flags and files are not in the listing: they may be there.
    let mayHoldMarks =
      !mechanisms.subtracting(.attributes).isEmpty || !listed.listed.isDisjoint(with: mechanisms)
      || (!listed.streams.isEmpty && !mechanisms.isDisjoint(with: .apple))
    if listing.hasRecord && mayHoldMarks {
      try SweepRecord.handOver(item, cleared: mechanisms, listed: listing)
    }
    return try mechanisms.clear(item, listed: listed)
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
