import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupExport

struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract:
      "Write the excluded items under ROOT as an exclusion file for rsync, tar, restic or borg.",
    discussion: """
      Walks ROOT as the backup tool will read it and writes one rule for each topmost excluded \
      item (a marked directory stands for everything under it), in the tool's own syntax, \
      escaped so that each rule matches that item and nothing else: spaces anywhere, * ? [ ] \\, \
      leading # - ! ;, $ (restic expands variables), newlines and bytes that are not UTF-8. \
      By default every attribute mechanism counts (\(MechanismHelp.allSet)).

      The recommended recipes come first: for rsync and tar an include list from \
      skipbackup list --included, whose cost does not grow with the number of marks; for \
      restic and borg this file. Give the tool its own one-file-system option when you give -x. \
      Measured costs: docs/performance.md.

      rsync (a copy: adds and updates, never deletes):
      \(BackupTool.rsync.recipe)

      GNU tar (names with newlines too):
      \(BackupTool.tar.recipe)

      restic (RESTIC_REPOSITORY and RESTIC_PASSWORD set):
      \(BackupTool.restic.recipe)

      borg 1.2 (BORG_REPO set):
      \(BackupTool.borg.recipe)

      An rsync mirror that also drops newly marked items (slower: rsync tries every rule on \
      every name):
      \(BackupTool.rsyncMirrorRecipe)

      Borg 2 reads xdg and nodump marks itself: mark with -m xdg and run a plain borg create.

      When ROOT is excluded itself, or sits below a marked directory, nothing is written. When \
      the tool cannot name an excluded item (tar reads its file line by line, so a path with a \
      newline cannot be excluded: use the tar recipe above), the item is reported and the export \
      fails; the other rules are still written. The && above then keeps the backup from running. \
      nodump and cachedir marks need no export: bsdtar --nodump, borg --exclude-nodump, and tar, \
      borg and restic --exclude-caches read them themselves. See docs/backups.md.

      Exit status: 0 when every excluded item has its rule, 1 when any item could not be read \
      or named, or ROOT is excluded, 64 for a usage error.
      """)

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp(
      "The backup tool that reads the file.",
      valueName: "TOOL"))
  var tool: BackupTool

  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on ROOT's filesystem: directories where another filesystem is mounted are checked but not entered. Give the backup tool its own option too."
  )
  var oneFileSystem = false

  @Option(
    name: [.customShort("o"), .customLong("output")],
    help: ArgumentHelp("Write the file to FILE instead of standard output.", valueName: "FILE"),
    completion: .file())
  var output: String?

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp("The directory the backup reads.", valueName: "ROOT"),
    completion: .directory)
  var root: String

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: ExportRun {
    get throws {
      ExportRun(
        root: RawArguments.path(root), tool: tool,
        mechanisms: try mechanismOptions.mechanisms(default: .all),
        output: output.map(RawArguments.path), oneFileSystem: oneFileSystem, quiet: quiet.quiet)
    }
  }
}
