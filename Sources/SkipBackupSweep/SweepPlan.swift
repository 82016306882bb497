import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// What every walk thread of a sweep shares: the rules, what to write, how
/// to report. Nothing in it changes during the walk but the git index,
/// which has its own lock.
package final class SweepPlan: Sendable {
  package enum Mode { case sweep, undo }

  package let mode: Mode
  package let table: RuleTable
  /// What a sweep writes on a directory, and on a file (no CACHEDIR.TAG).
  package let mechanisms: MechanismSet
  package let fileMechanisms: MechanismSet
  /// What counts as "already excluded": every attribute mark and what the
  /// sweep writes.
  package let reader: SweepStateReader
  package let dryRun: Bool
  package let verbose: Bool
  package let format: OutputFormat
  package let git: GitIgnored?
  /// How the sizes shown are counted: disk usage, each inode with several
  /// links once in the whole run, staying on each ROOT's filesystem with
  /// `-x`, so that the total is what `du -sc [-x]` says of what was marked.
  package let sizes: SizeRule
  package let oneFileSystem: Bool

  package init(
    mode: Mode, table: RuleTable, mechanisms: MechanismSet, dryRun: Bool, verbose: Bool,
    format: OutputFormat, git: GitIgnored?, oneFileSystem: Bool = false
  ) {
    self.mode = mode
    self.table = table
    self.mechanisms = mechanisms
    self.fileMechanisms = mechanisms.applicableToFiles
    self.reader = SweepStateReader(mechanisms: mechanisms.union(.all))
    self.dryRun = dryRun
    self.verbose = verbose
    self.format = format
    self.git = git
    self.sizes = SizeRule()
    self.oneFileSystem = oneFileSystem
  }

  /// Sizes are worked out (a walk of what is marked) only when shown.
  package var wantsSizes: Bool { dryRun || verbose }
}

/// One ROOT as the rules see it: how a walked path becomes an absolute
/// one, and the path rules that fall under it, by the directory that holds them.
/// A class, so that the visitor reads it per directory without copying (and
/// retaining) each of its collections.
package final class SweepRoot: Sendable {
  /// The walked path's first bytes that stand for the ROOT (0 for `/`).
  package let walkedLength: Int
  /// The ROOT's canonical path ("" for `/`), which replaces them.
  package let canonicalPrefix: [UInt8]
  /// Path rules under the ROOT, by their directory relative to it ("" for
  /// the ROOT itself, else "/a/b"), with the name each matches.
  package let pathRules: [[UInt8]: [(name: [UInt8], rule: Int)]]
  /// Whether a directory path of this length (relative, as the keys of
  /// `pathRules`) holds path rules: looked at for every directory, so by
  /// index, without hashing.
  package let pathRuleDirectoryLengths: [Bool]
  /// A path rule that names the ROOT itself.
  package let rootRule: Int?
  /// Whether the ROOT lies inside a git work tree whose top is above it.
  package let insideWorkTree: Bool

  package init(walked: [UInt8], canonical: [UInt8], table: RuleTable, insideWorkTree: Bool = false)
  {
    self.insideWorkTree = insideWorkTree
    walkedLength = walked == [UInt8(ascii: "/")] ? 0 : walked.count
    canonicalPrefix = canonical == [UInt8(ascii: "/")] ? [] : canonical
    var byDirectory: [[UInt8]: [(name: [UInt8], rule: Int)]] = [:]
    var root: Int?
    for index in table.pathRules {
      guard case .path(let path) = table.rules[index].kind else { continue }
      if path == canonical || (canonical == [UInt8(ascii: "/")] && path == canonical) {
        if root == nil { root = index }
        continue
      }
      guard path.count > canonicalPrefix.count + 1, path.starts(with: canonicalPrefix),
        path[canonicalPrefix.count] == UInt8(ascii: "/")
      else { continue }
      let relative = path[canonicalPrefix.count...]
      let slash = relative.lastIndex(of: UInt8(ascii: "/"))!
      byDirectory[Array(relative[..<slash]), default: []].append(
        (Array(relative[(slash + 1)...]), index))
    }
    pathRules = byDirectory
    var lengths = [Bool](repeating: false, count: (byDirectory.keys.map(\.count).max() ?? -1) + 1)
    for key in byDirectory.keys { lengths[key.count] = true }
    pathRuleDirectoryLengths = lengths
    rootRule = root
  }

  /// The absolute path of a walked path.
  package func absolute(_ walked: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    canonicalPrefix + walked[walkedLength...]
  }
}

/// One walk thread's part of a sweep: its output, counts, and what it
/// knows of each open directory (the listing, the path rules and the names
/// git ignores in it), by the depth of the directory's entries.
package final class SweepVisitor: ReportingVisitor {
  package let reporter: Reporter
  package let output: Output
  package var counts = MarkingCounts()
  package var root: SweepRoot?
  private let run: SweepPlan
  private let table: RuleTable
  private let reader: SweepStateReader
  private var line = JSONLine()
  /// Read for every entry: a checked access (`swift_beginAccess`) costs
  /// more than the rest of a visit to a file. Only this visitor's own
  /// thread touches it, and no access overlaps another.
  @exclusivity(unchecked) private var directories: [Directory] = []
  /// By depth, as `directories`: whether a path rule or git names an entry
  /// of the directory. A plain `Bool` for the check every file makes, where
  /// reaching into a `Directory` retains its arrays (`swift_retain` is then
  /// 9 % of a repeat sweep's user time, against 3 % in `list`;
  /// docs/performance.md).
  @exclusivity(unchecked) private var entriesNamed: [Bool] = []

  private struct Directory {
    package var listing: DirectoryListing?
    package var pathRules: [(name: [UInt8], rule: Int)] = []
    package var ignored: Set<[UInt8]>?
    /// git was asked about this directory (or one above) and gave no answer.
    package var gitUnanswered = false
  }

  package init(run: SweepPlan, reporter: Reporter) {
    self.run = run
    self.table = run.table
    self.reader = run.reader
    self.reporter = reporter
    self.output = reporter.output
  }

  package func enterDirectory(
    _ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int
  ) {
    while directories.count <= depth {
      directories.append(Directory())
      entriesNamed.append(false)
    }
    var directory = Directory(listing: listing)
    if let root, !root.pathRules.isEmpty {
      let relative = path[root.walkedLength...]
      if relative.count < root.pathRuleDirectoryLengths.count,
        root.pathRuleDirectoryLengths[relative.count]
      {
        directory.pathRules = root.pathRules[Array(relative)] ?? []
      }
    }
    if let git = run.git {
      // Depth 1: the ROOT's own entries.
      let asks = listing.contains(Self.gitDirectory) || (depth == 1 && root?.insideWorkTree == true)
      if asks, let failure = git.scan(workTree: Array(path)) {
        reporter.report(
          "\(failure); the gitignore rule is left out there, and its marks are left as they are")
      }
      directory.ignored = git.ignored(in: path)
      directory.gitUnanswered = git.isUnanswered(path)
    }
    entriesNamed[depth] = !directory.pathRules.isEmpty || directory.ignored != nil
    directories[depth] = directory
  }

  private static let gitDirectory = Array(".git".utf8)

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.isOnOtherFilesystem {
      counts.otherFilesystem += 1
      return .skipChildren
    }
    guard entry.type.isRegularOrDirectory else { return .descend }
    switch run.mode {
    case .sweep: return sweep(entry)
    case .undo: return undo(entry)
    }
  }

  // MARK: - Sweep

  private func sweep(_ entry: borrowing TreeEntry) -> TreeVisit {
    let isDirectory = entry.type.isDirectory
    let path = entry.pathBytes
    let name = entry.name
    // The fields of the parent's record are read in place: a copy of it
    // per entry (its arrays retained and released) was a visible part of a
    // repeat sweep's time.
    let depth = entry.depth
    var candidate: Int?
    if depth > 0 {
      if isDirectory {
        candidate = table.directoryRule(
          named: name, siblings: directories[depth].listing, item: entry.item)
      }
      if candidate == nil, entriesNamed[depth] { candidate = namedRule(name, depth: depth) }
    } else {
      candidate = root?.rootRule
    }

    let state: SweepItemState
    do throws(SkipBackupError) {
      state = try reader.state(of: entry.item)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    // A record on an item others may write may be forged: the state counts
    // it as none, its marks as hand marks (docs/sweep.md, "What a record
    // proves").
    let hasRecord = state.hasRecord
    // Nearly every item: no rule, no record.
    if !hasRecord && candidate == nil {
      return state.marks.isEmpty ? .descend : .skipChildren
    }

    let keep =
      table.keeps.isEmpty
      ? nil : table.keep(covering: absolutePath(path), isDirectory: isDirectory)
    var marks = state.marks
    if hasRecord {
      let record: SweepRecord?
      do {
        // The record came with the names, but for one in a value (the
        // first form, or a long path rule's).
        if let listed = state.record {
          record = listed
        } else {
          record = try SweepRecord.readValue(from: entry.item)
        }
      } catch {
        return reporter.unreadable(error, at: entry)
      }
      if let record {
        let applies: Bool
        var reason = ""
        if keep != nil {
          applies = false
        } else if let candidate, table.rules[candidate].name == record.rule {
          // The rule that matched just now is the record's: it applies (a
          // repeat sweep's usual case, settled without looking again).
          applies = true
        } else {
          let facts = ItemFacts(
            item: entry.item, isDirectory: isDirectory, name: name,
            siblings: depth > 0 ? directories[depth].listing : nil,
            absolutePath: absolutePath(path),
            // A ROOT's parent is not asked, nor a directory git gave no answer for.
            isIgnored: depth == 0 || directories[depth].gitUnanswered
              ? nil : directories[depth].ignored?.contains(Array(name)) == true)
          (applies, reason) = table.applies(ruleNamed: record.rule, to: facts)
        }
        if applies {
          // What the record names and what this run writes: a sweep with
          // more mechanisms than the one that marked the item adds them
          // (`sweep -m resource,xdg` said "already marked" on a swept
          // home). Only what this run reads can be seen.
          let wanted = record.mechanisms.union(isDirectory ? run.mechanisms : run.fileMechanisms)
          if marks.isSuperset(of: wanted.intersection(reader.mechanisms)) {
            counts.alreadyMarked += 1
            return .skipChildren
          }
          // Its marks were taken off by hand (the record left), or this
          // run writes more: mark again, the record naming them all.
          let again = candidate ?? table.rules.firstIndex { $0.name == record.rule }
          if let again {
            return mark(entry, rule: again, isDirectory: isDirectory, keeping: record.mechanisms)
          }
        } else if let candidate, keep == nil {
          // Another rule now accounts for it: the record names that one.
          return mark(entry, rule: candidate, isDirectory: isDirectory, marksMissing: false)
        } else {
          let why =
            keep.map {
              "kept by keep \(String(escapingForDisplay: $0.argument)) (\($0.origin))"
            } ?? reason
          if let failure = takeBack(
            entry, record, because: "rule gone: \(record.ruleName): \(why)")
          {
            return failure
          }
          marks.subtract(record.mechanisms)
          return marks.isEmpty ? .descend : .skipChildren
        }
      }
    }
    guard let candidate else { return marks.isEmpty ? .descend : .skipChildren }
    if keep != nil {
      counts.skipped += 1
      return marks.isEmpty ? .descend : .skipChildren
    }
    if !marks.isEmpty {
      counts.alreadyMarked += 1
      return .skipChildren
    }
    // An untrusted record is still there, and the sweep's own replaces it.
    return mark(
      entry, rule: candidate, isDirectory: isDirectory,
      holdingNoRecord: !state.listing.hasRecord)
  }

  /// The path rule, or else the gitignore rule, that names the entry
  /// `name` of the directory at `depth`.
  private func namedRule(_ name: UnsafeRawBufferPointer, depth: Int) -> Int? {
    if let rule = directories[depth].pathRules.first(where: { name.elementsEqual($0.name) }) {
      return rule.rule
    }
    return directories[depth].ignored?.contains(Array(name)) == true ? table.gitignoreRule : nil
  }

  /// The absolute path of a walked path, for path and keep rules.
  private func absolutePath(_ path: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    root?.absolute(path) ?? Array(path)
  }

  /// Marks `entry` by `rule`: the record first, then the marks, so that an
  /// interrupted sweep never leaves a mark that looks like a hand mark.
  /// `holdingNoRecord`: the entry's state, just read, shows no record.
  /// `recorded`: the mechanisms its record names already, which stay.
  /// Returns what the visit says of the entry.
  private func mark(
    _ entry: borrowing TreeEntry, rule index: Int, isDirectory: Bool, holdingNoRecord: Bool = false,
    keeping recorded: MechanismSet = [], marksMissing: Bool = true
  ) -> TreeVisit {
    let mechanisms = (isDirectory ? run.mechanisms : run.fileMechanisms).union(recorded)
    guard !mechanisms.isEmpty else {
      counts.skipped += 1
      return .skipChildren
    }
    let rule = table.rules[index]
    let item = entry.item
    let handMarked: Bool
    do throws(SkipBackupError) {
      handMarked = try retryingAMomentaryRefusal(at: entry.depth) { () throws(SkipBackupError) in
        if run.dryRun {
          // What the run would fail with, found without writing.
          try mechanisms.check(item)
          return false
        }
        let record = SweepRecord(mechanisms: mechanisms, rule: rule.name)
        try record.write(to: item, holdingNoRecord: holdingNoRecord)
        let wrote = try mechanisms.mark(item)
        // Races with a person's mark and clear, item by item
        // (scripts/torture's sweeprace). The item had none of these marks
        // when its state was read and has them all now: `mark` put them
        // there meanwhile, and they are its hand marks, not the sweep's.
        if marksMissing && !wrote {
          try SweepRecord.remove(from: item)
          return true
        }
        // A record gone by now went with this mark (`clear` takes both,
        // the record first, and leaves a record whose marks are not there
        // yet), or `mark` made the mark a person's: either way it stays gone.
        return false
      }
    } catch {
      return failed(entry, error)
    }
    if handMarked {
      counts.alreadyMarked += 1
      return .skipChildren
    }
    counts.marked += 1
    let size =
      run.wantsSizes
      ? subtreeBytes(at: entry.path, rule: run.sizes, oneFileSystem: run.oneFileSystem) : nil
    if let size { counts.bytes += size }
    report(
      entry.pathBytes, excluded: true, marks: mechanisms, rule: rule.name, reason: nil, size: size)
    return .skipChildren
  }

  /// What the visit says of an entry the sweep could not read, mark or
  /// clear. Swapped in during the walk: skipped and counted, as mark -R
  /// does, not an error (the next sweep marks what is a directory again).
  /// Gone: the walk's one policy (``Reporter/unreadable(_:at:)``), which
  /// looks it up again at the walk's end and sweeps it if it is there
  /// again, or counts it vanished. Else the failure is reported, and the
  /// visit says `reported`.
  private func failed(
    _ entry: borrowing TreeEntry, _ error: SkipBackupError,
    reported: TreeVisit = .skipChildren
  ) -> TreeVisit {
    if entry.depth > 0 && error.isSwappedInDuringWalk {
      counts.skipped += 1
      return .skipChildren
    }
    let visit = reporter.unreadable(error, at: entry)
    return visit == .vanished ? visit : reported
  }

  /// Takes a sweep's marks off `entry` and then its record, and says why;
  /// returns `nil` when that worked, else what the visit says of the entry.
  private func takeBack(
    _ entry: borrowing TreeEntry, _ record: SweepRecord, because reason: String,
    reported: TreeVisit = .skipChildren
  ) -> TreeVisit? {
    let item = entry.item
    do throws(SkipBackupError) {
      try retryingAMomentaryRefusal(at: entry.depth) { () throws(SkipBackupError) in
        if run.dryRun {
          try record.mechanisms.check(item)
        } else {
          try record.mechanisms.clear(item)
          try SweepRecord.remove(from: item)
        }
      }
    } catch {
      return failed(entry, error, reported: reported)
    }
    counts.cleared += 1
    report(
      entry.pathBytes, excluded: false, marks: record.mechanisms, rule: record.rule,
      reason: reason, size: nil)
    return nil
  }

  // MARK: - Undo

  private func undo(_ entry: borrowing TreeEntry) -> TreeVisit {
    let record: SweepRecord?
    do throws(SkipBackupError) {
      record = try SweepRecord.read(from: entry.item)
    } catch {
      // What cannot be read may still hold sweep marks below it: walk on,
      // unless it is gone or no directory now.
      return failed(entry, error, reported: .descend)
    }
    guard let record else { return .descend }
    guard SweepRecord.isTrusted(on: entry.item) else {
      counts.skipped += 1
      report(
        entry.pathBytes, excluded: true, marks: record.mechanisms, rule: record.rule,
        reason: "left as it is: others may write it, so its record may not be a sweep's",
        size: nil)
      return .descend
    }
    // What is in it may hold sweep marks, whether or not this one came off.
    return takeBack(
      entry, record, because: "sweep undone: rule \(record.ruleName)", reported: .descend)
      ?? .descend
  }

  // MARK: - Output

  private func report(
    _ path: UnsafeBufferPointer<UInt8>, excluded: Bool, marks: MechanismSet, rule: [UInt8],
    reason: String?, size: Int64?
  ) {
    switch run.format {
    case .json:
      line.reset()
      line.path("path", path)
      line.bool("excluded", excluded)
      line.strings("marks", marks.names)
      line.path("rule", rule)
      if let reason { line.string("reason", reason) } else { line.null("reason") }
      if let size { line.number("bytes", size) }
      line.bool("dry_run", run.dryRun)
      output.write(line.finish())
    case .text:
      output.write(excluded ? "[Excluded]    " : "[Included]    ")
      output.writeName(path)
      output.write("    (")
      if let reason {
        output.write(reason)
      } else {
        output.write("rule ")
        // A rule's name is a rules-file word or a path rule's path: bytes
        // from the user, escaped on a terminal as the path before it is.
        output.writeName(rule)
      }
      output.write(")")
      if let size, run.dryRun {
        output.write("    ")
        output.write(humanSize(size))
      }
      output.write(UInt8(ascii: "\n"))
    }
    output.endRecord()
  }
}
