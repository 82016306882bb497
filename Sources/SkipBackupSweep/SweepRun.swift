import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `sweep`: marks what can be downloaded or built again, by rule, each mark
/// with its record, and takes back its own marks when their rule no longer
/// applies (or all of them with `--undo`).
package struct SweepRun: Sendable, Equatable {
  /// The directories to sweep; none for $HOME.
  package var roots: [FilePath]
  /// Take back every mark a sweep made (`--undo`).
  package var undo = false
  /// Print every effective rule instead of sweeping (`--list-rules`).
  package var listRules = false
  /// The rules file named with `--rules`; `nil` for the user's own.
  package var rulesFile: FilePath?
  /// Whether the built-in rules apply (not `--no-builtin-rules`).
  package var builtInRules = true
  /// What the sweep writes (`-m`); `nil` for the rules file's, or resource.
  package var mechanisms: MechanismSet?
  /// Stay on each ROOT's filesystem (`-x`).
  package var oneFileSystem = false
  /// Say what would change and change nothing (`-n`).
  package var dryRun = false
  /// Print each change and end with a summary (`-v`).
  package var verbose = false
  /// Show no progress line (`-q`).
  package var quiet = false
  package var format: OutputFormat = .text
  /// Where the report and the diagnostics go.
  package var streams: Streams = .standard

  package init(
    roots: [FilePath], undo: Bool = false, listRules: Bool = false, rulesFile: FilePath? = nil,
    builtInRules: Bool = true, mechanisms: MechanismSet? = nil, oneFileSystem: Bool = false,
    dryRun: Bool = false, verbose: Bool = false, quiet: Bool = false, format: OutputFormat = .text,
    streams: Streams = .standard
  ) {
    self.roots = roots
    self.undo = undo
    self.listRules = listRules
    self.rulesFile = rulesFile
    self.builtInRules = builtInRules
    self.mechanisms = mechanisms
    self.oneFileSystem = oneFileSystem
    self.dryRun = dryRun
    self.verbose = verbose
    self.quiet = quiet
    self.format = format
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let environment = SweepRules.Environment.canonical
    // What is wrong before the walk (the rules, git) ends the run at once.
    let diagnostics = Diagnostics()
    var roots = roots
    if roots.isEmpty {
      guard let home = SweepRules.Environment.variable("HOME") else {
        diagnostics.report("HOME is not set: give a ROOT.")
        throw .usage
      }
      roots = [FilePath(bytes: home)]
    }

    var rules = SweepRules.empty
    if !undo {
      rules = try loadRules(environment, diagnostics)
    }
    if listRules {
      printRules(rules)
      return
    }
    let table = RuleTable(rules)
    let written = mechanisms ?? rules.mechanisms ?? MechanismSet([.resource])

    var git: GitIgnored?
    if !undo, let index = table.gitignoreRule {
      guard let program = findProgram(Array("git".utf8)) else {
        diagnostics.report(
          "gitignore (\(table.rules[index].origin)): git is not on PATH, and this rule asks git what it ignores; nothing was changed"
        )
        throw .failure
      }
      git = GitIgnored(git: program)
    }

    let sweep = SweepPlan(
      mode: undo ? .undo : .sweep, table: table, mechanisms: written, dryRun: dryRun,
      verbose: verbose, format: format, git: git, oneFileSystem: oneFileSystem)
    let run = WalkRun(streams: streams, showsProgress: !quiet) { diagnostics, progress in
      SweepVisitor(
        run: sweep,
        reporter: Reporter(diagnostics: diagnostics, progress: progress)
      )
    }
    // A ROOT (or $HOME) that is a link to a directory is what the user means
    // to sweep: followed, as du -D and find -H do; nothing below it is.
    let options = TreeWalkOptions(
      oneFileSystem: oneFileSystem, followRootSymbolicLink: true, wholeListings: !undo)
    for root in roots {
      let walked = root.bytes
      guard let canonical = canonicalPath(walked) else {
        do throws(SkipBackupError) {
          _ = try FileItem(path: root, followSymbolicLinks: false).status()
          run.diagnostics.report(
            "\(root.escapedDescription): cannot be resolved to a canonical path")
        } catch {
          run.diagnostics.report(error)
        }
        continue
      }
      if !undo {
        switch run.placement(of: root, sweep.reader.mechanisms) {
        case .unmarked: break
        case .below(let above):
          // Below a marked directory, everything is excluded already.
          if verbose {
            run.diagnostics.note(
              "\(root.escapedDescription): not swept: \(above.escapedDescription) above it is excluded"
            )
          }
          continue
        case .unreadable: continue
        }
      }
      let sweepRoot = SweepRoot(
        walked: walked, canonical: canonical, table: table,
        insideWorkTree: git != nil && GitIgnored.isInsideWorkTree(canonical))
      for visitor in run.visitors { visitor.root = sweepRoot }
      run.walk(root, options: options)
    }
    try run.finish {
      var total = run.visitors.reduce(MarkingCounts()) { $0 + $1.counts }
      total.vanished += run.vanished
      summarize(total, output: run.visitors[0].output, diagnostics: run.diagnostics)
    }
  }

  /// The total line of a text report, and -v's summary.
  private func summarize(_ total: MarkingCounts, output: Output, diagnostics: Diagnostics) {
    if dryRun && format == .text {
      let what = undo ? "would take back" : "would exclude"
      var summary = "total: \(what) \(total.marked + (undo ? total.cleared : 0)) "
      summary += (total.marked + (undo ? total.cleared : 0)) == 1 ? "item" : "items"
      if !undo {
        summary += " (\(humanSize(total.bytes)) kept out of backups)"
        summary += ", would include \(total.cleared)"
      }
      summary += "; nothing was changed\n"
      output.write(summary)
    } else if format == .text && total.marked + total.cleared > 0 {
      // A run that changed something says how much, as a dry run does (it
      // printed no total without -v); one that changed nothing stays silent.
      let changed = total.marked + (undo ? total.cleared : 0)
      var summary = "total: \(undo ? "took back" : "excluded") \(changed) "
      summary += changed == 1 ? "item" : "items"
      if !undo { summary += ", included \(total.cleared)" }
      output.write(summary + "\n")
    }
    output.flush()
    if verbose {
      let parts =
        undo
        ? ["\(dryRun ? "would take back" : "took back") \(total.cleared)"]
        : [
          "\(dryRun ? "would mark" : "marked") \(total.marked)",
          "\(dryRun ? "would clear" : "cleared") \(total.cleared)",
          "already marked \(total.alreadyMarked)",
          "skipped \(total.skipped) (kept by a keep rule, or no mark applies)",
        ]
      diagnostics.summarize(
        parts, notEntered: oneFileSystem ? total.otherFilesystem : nil,
        vanished: total.vanished,
        // Only what this run marked: "bytes kept out 0" on a swept home
        // read as if nothing were kept out.
        trailer: undo
          ? [] : ["newly kept out \(total.bytes) bytes (\(humanSize(total.bytes)))"])
    }
  }

  /// The built-in rules and the rules file's; a file that cannot be read
  /// or a line that does not parse ends the run here, before anything changes.
  private func loadRules(
    _ environment: SweepRules.Environment, _ diagnostics: Diagnostics
  ) throws(ReportedFailure) -> SweepRules {
    let file: FilePath
    if let rulesFile {
      file = rulesFile
    } else if let config = SweepRules.Environment.variable("XDG_CONFIG_HOME") {
      file = FilePath(platformString: config.map { CChar(bitPattern: $0) } + [0])
        .appending("skipbackup/rules")
    } else if let home = environment.home {
      file = FilePath(platformString: home.map { CChar(bitPattern: $0) } + [0])
        .appending(".config/skipbackup/rules")
    } else {
      file = FilePath()
    }
    var text: [UInt8]?
    if !file.isEmpty {
      do {
        text = try readWholeFile(file)
      } catch .noSuchFileOrDirectory where rulesFile == nil {
        text = nil  // no rules file of one's own: the built-in rules alone
      } catch .fileTooLarge {
        diagnostics.report(
          "\(file.escapedDescription): cannot read the rules file: larger than 1 MiB, which no rules file is"
        )
        throw .usage
      } catch {
        diagnostics.report(
          "\(file.escapedDescription): cannot read the rules file: \(error.description.lowercased())"
        )
        throw .usage
      }
    }
    do {
      return try SweepRules(
        builtIn: builtInRules, fileText: text, fileName: file.escapedDescription,
        environment: environment)
    } catch {
      diagnostics.report(error.description)
      throw .usage
    }
  }

  private func printRules(_ rules: SweepRules) {
    let output = Output(streams: streams)
    let rows =
      rules.rules.map { ($0.name, $0.definition, $0.origin) }
      + rules.keeps.map { ($0.argument, $0.definition, $0.origin) }
    for (name, definition, origin) in rows {
      output.write(name)
      output.write(UInt8(ascii: "\t"))
      output.write(definition)
      output.write("\t" + origin + "\n")
      output.endRecord()
    }
    output.flush()
  }
}
