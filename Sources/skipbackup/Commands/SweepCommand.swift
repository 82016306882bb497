import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupSweep
import SkipBackupUsage

struct SweepCommand: ParsableCommand {
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

  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on each ROOT's filesystem: directories where another filesystem is mounted are not entered."
  )
  var oneFileSystem = false

  @Flag(
    name: [.customShort("n"), .long],
    help:
      "Show what would change and how much each item would keep out of backups, with a total; change nothing."
  )
  var dryRun = false

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
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: SweepRun {
    get throws {
      SweepRun(
        roots: roots.map(RawArguments.path), undo: undo, listRules: listRules,
        rulesFile: rulesFile.map(RawArguments.path), builtInRules: !noBuiltinRules,
        mechanisms: mechanismOptions.mechanism.isEmpty
          ? nil : try mechanismOptions.mechanisms(default: []),
        oneFileSystem: oneFileSystem, dryRun: dryRun, verbose: reporting.verbose,
        quiet: reporting.quiet, format: format)
    }
  }
}
