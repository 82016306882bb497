import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupSweep
import SkipBackupUsage

struct SweepCommand: ParsableCommand, MountPointHelp, DryRunHelp {
  static let configuration = CommandConfiguration(
    commandName: "sweep",
    abstract: "Mark what can be downloaded or built again, by rule, and keep those marks current.",
    discussion: """
      Walks each ROOT (by default $HOME) once and marks, with the resource mark unless -m or the \
      rules file says otherwise, every item a rule matches: node_modules beside a package.json, \
      target beside a Cargo.toml, Python's __pycache__, the XDG cache directory, the package \
      managers' caches, and what the rules file adds. It never enters a directory that it marks \
      or finds excluded, and never follows a symbolic link. Each mark it makes carries a record \
      (user.skipbackup.sweep.MECHANISMS:RULE) of the rule behind it, so that a later sweep takes back its own \
      marks when their rule no longer applies (the sentinel is gone, the rule was removed, or a \
      keep rule now covers the item), and --undo takes back every mark a sweep made under ROOT. \
      Marks made by mark, by setfattr or by another program are never touched.

      The rules file is --rules FILE, or else $XDG_CONFIG_HOME/skipbackup/rules, or else \
      ~/.config/skipbackup/rules. Its lines: sentinel NAME SENTINEL..., name NAME, path PATH, \
      keep PATH-OR-GLOB, gitignore, mechanisms M[,M...] and disable RULE (see docs/sweep.md). \
      --list-rules prints every effective rule with its name and origin.

      Exit status: 0 when every item was handled, 1 when any failed (each failure is reported \
      and the rest is still swept), 64 for a usage error or a rules file line that does not parse.
      """)

  @Flag(help: "Take back every mark a sweep made under each ROOT, and only those.")
  var undo = false

  @Flag(
    help: "Print every effective rule, one a line: its name, the rule, and where it comes from.")
  var listRules = false

  @Option(
    name: .customLong("rules"),
    help: ArgumentHelp(
      "Read the rules from FILE instead of $XDG_CONFIG_HOME/skipbackup/rules (or ~/.config/skipbackup/rules).",
      valueName: "FILE"), completion: .file())
  var rulesFile: String?

  @Flag(name: .customLong("no-builtin-rules"), help: "Apply only the rules file's rules.")
  var noBuiltinRules = false

  static let oneFileSystemHelp =
    "Stay on each ROOT's filesystem: directories where another filesystem is mounted are not entered."
  @OptionGroup var tree: TreeOptions<SweepCommand>

  static let dryRunHelp =
    "Show what would change and how much each item would keep out of backups, with a total; change nothing."
  @OptionGroup var dryRunOption: DryRunOption<SweepCommand>
  var dryRun: Bool { dryRunOption.dryRun }

  @OptionGroup var reporting: ReportingOptions

  @Option(
    help: ArgumentHelp(
      "How to print each change: text, one line each, or json, one JSON object a line.",
      valueName: "text|json"))
  var format: OutputFormat = .text

  @Argument(
    help: ArgumentHelp("The directories to sweep (default: $HOME).", valueName: "ROOT"),
    completion: .directory)
  var roots: [String] = []

  func validate() throws {
    if undo && listRules { throw ValidationError("--undo and --list-rules cannot go together.") }
    // An empty name is no file; taken for "no rules file", it made
    // `--rules "" --no-builtin-rules` take back every sweep mark.
    if rulesFile == "" { throw ValidationError("--rules takes a file name, not an empty one.") }
  }

  func run() throws {
    let environment = SweepRules.Environment.canonical
    // What is wrong before the walk (the rules, git) ends the run at once.
    let diagnostics = Diagnostics()

    var rules = SweepRules.empty
    if !undo {
      rules = try loadRules(environment, diagnostics)
    }
    if listRules {
      printRules(rules)
      return
    }
    let table = RuleTable(rules)
    let written = try tree.mechanisms(default: rules.mechanisms ?? MechanismSet([.resource]))

    var git: GitIgnored?
    if !undo, let index = table.gitignoreRule {
      guard let program = findProgram("git") else {
        diagnostics.report(
          "gitignore (\(table.rules[index].origin)): git is not on PATH, and this rule asks git what it ignores; nothing was changed"
        )
        throw ExitCode.failure
      }
      git = GitIgnored(git: program)
    }

    var rootPaths = roots.map(RawArguments.path)
    if rootPaths.isEmpty {
      guard let home = SweepRules.Environment.variable("HOME") else {
        throw ValidationError("HOME is not set: give a ROOT.")
      }
      rootPaths = [FilePath(platformString: (home.map { CChar(bitPattern: $0) } + [0]))]
    }

    let sweep = SweepRun(
      mode: undo ? .undo : .sweep, table: table, mechanisms: written, dryRun: dryRun,
      verbose: reporting.verbose, format: format, git: git)
    let run = WalkRun(showsProgress: !reporting.quiet) { diagnostics, progress in
      SweepVisitor(run: sweep, reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    // A ROOT (or $HOME) that is a link to a directory is what the user means
    // to sweep: followed, as du -D and find -H do; nothing below it is.
    let options = TreeWalkOptions(
      oneFileSystem: tree.oneFileSystem, followRootSymbolicLink: true, wholeListings: !undo)
    for root in rootPaths {
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
          if reporting.verbose {
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
    if reporting.verbose {
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
        parts, notEntered: tree.oneFileSystem ? total.otherFilesystem : nil,
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
  ) throws -> SweepRules {
    let file: FilePath
    if let rulesFile {
      file = RawArguments.path(rulesFile)
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
        throw ExitCode(64)
      } catch {
        diagnostics.report(
          "\(file.escapedDescription): cannot read the rules file: \(error.description.lowercased())"
        )
        throw ExitCode(64)
      }
    }
    do {
      return try SweepRules(
        builtIn: !noBuiltinRules, fileText: text, fileName: file.escapedDescription,
        environment: environment)
    } catch {
      diagnostics.report(error.description)
      throw ExitCode(64)
    }
  }

  private func printRules(_ rules: SweepRules) {
    let output = Output()
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
