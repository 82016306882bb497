import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupExplain
import SkipBackupReport

struct ExplainCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "explain",
    abstract: "Say why each item is in or out of backups, and what each backup tool does with it.",
    discussion: """
      For each PATH: excluded or included, reading all \(MechanismHelp.everyCount) mechanisms \
      (\(MechanismHelp.everyNames)) whatever the defaults of other commands; the item's own marks; the \
      nearest marked directory above it and its marks; the sweep rule behind the mark, where a \
      sweep made it; and for each backup tool, whether a run with exactly these options and no \
      exclusion file leaves the item out (for a directory: its contents), and if not, the one \
      thing to do: the mark to add, or the export recipe.

        borg2        borg create (borg 2: user.xdg.robots.backup = false, nodump)
        borg1        borg create --exclude-nodump --exclude-caches (borg 1.2)
        restic       restic backup --exclude-caches (keeps a tagged directory and its tag)
        tar          tar --create --exclude-caches (GNU tar; keeps them too)
        rsync        rsync -a (reads no mark)
        timemachine  Time Machine on a Mac after rsync -aX: the resource value, own or inherited

      With --format json each PATH is one JSON object on a line of its own:

        {"path": "p", "excluded": true, "marks": ["xdg"], "inherited_from": null, \
      "inherited_marks": [], "rule": null, "tools": {"borg2": {"skips": true, "needs": ""}, ...}}

      Nothing is changed: explain only reads.

      Exit status: 0 when every PATH was explained, 1 when any could not be read (it is \
      reported and the others are still explained), 64 for a usage error.
      """)

  @Flag(
    name: [.customShort("L"), .customLong("dereference")],
    help: "Follow a symbolic link given as a PATH and explain its target.")
  var dereference = false

  @Option(
    help: ArgumentHelp(
      "How to print: text, for a person, or json, one JSON object a PATH.",
      valueName: "text|json"))
  var format: OutputFormat = .text

  @Argument(help: ArgumentHelp("The items to explain.", valueName: "PATH"), completion: .file())
  var paths: [String]

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: ExplainRun {
    ExplainRun(paths: paths.map(RawArguments.path), dereference: dereference, format: format)
  }
}
