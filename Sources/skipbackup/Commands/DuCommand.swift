import ArgumentParser
import SkipBackupCore
import SkipBackupReport
import SystemPackage
import SkipBackupUsage

struct DuCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "du",
    abstract: "Count what the marks keep out of backups under each ROOT, and what stays in.",
    discussion: """
      Walks each ROOT once, on every core, and counts files (every item that is not a \
      directory, symbolic links among them), directories (ROOT included) and bytes, included \
      and excluded; the bytes excluded by each mechanism and by each sweep rule where a sweep \
      made the mark; the --top N largest excluded items (topmost: a marked directory with \
      everything under it) and the N largest included directories below ROOT, by the included \
      bytes under them. Bytes count as GNU du counts them: disk usage (st_blocks x 512), or \
      st_size with --apparent-size, each hard-linked inode once, on the side where it is met \
      first, and with several ROOTs under the first ROOT that holds it. So included plus \
      excluded is what du -s -B1 ROOT... (du -s -b ROOT...) and du -s --inodes ROOT... print \
      for each ROOT, and the text total is each inode once. An item marked by several mechanisms counts under each, and \
      what lies under a marked directory counts under that directory's mechanisms. \
      \(MechanismHelp.byDefault); -m \(MechanismHelp.everyValue) \
      counts all \(MechanismHelp.everyCount). With --format json each ROOT is one JSON object on a line of its own:

        {"root": "r", "included": {"files": 3, "directories": 2, "bytes": 16384}, \
      "excluded": {...}, "by_mechanism": {"legacy": 0, ...}, "by_rule": {}, \
      "top_excluded": [{"path": "r/c", "bytes": 8192}], "top_included_directories": [...]}

      A path that is not valid UTF-8 (the root or a listed one) also gets "path_base64" \
      with its exact bytes.

      Exit status: 0 when every item was read, 1 when a ROOT or an item could not be (it is \
      reported and the rest is counted), 64 for a usage error.
      """)

  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on each ROOT's filesystem: directories where another filesystem is mounted are left out, as du -x leaves them."
  )
  var oneFileSystem = false

  @Flag(help: "Count apparent sizes (st_size), as du --apparent-size, rather than disk usage.")
  var apparentSize = false

  // Unconditional: `--top -1` is then a value the check below refuses,
  // not an option the parser looks for.
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "How many of the largest excluded items and included directories to name.",
      valueName: "N"))
  var top = 10

  @Option(
    help: ArgumentHelp(
      "How to print: text, for a person, or json, one JSON object a ROOT.",
      valueName: "text|json"))
  var format: OutputFormat = .text

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp(
      "The directories to count (default: the current directory).", valueName: "ROOT"),
    completion: .directory)
  var roots: [String] = []

  func validate() throws {
    if top < 0 { throw ValidationError("--top must be 0 or more, not \(top)") }
  }

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: UsageRun {
    get throws {
      UsageRun(
        roots: (roots.isEmpty ? ["."] : roots).map(RawArguments.path),
        mechanisms: try mechanismOptions.mechanisms(default: .all), apparentSize: apparentSize,
        top: top, format: format, oneFileSystem: oneFileSystem, quiet: quiet.quiet)
    }
  }
}
