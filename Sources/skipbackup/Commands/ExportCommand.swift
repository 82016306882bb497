import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupExport

struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract:
      "Write the excluded items under ROOT as an exclusion file for rsync, tar, restic or borg, or into Deja Dup's or Vorta's settings.",
    discussion: """
      Walks ROOT as the backup tool will read it and writes one rule for each topmost excluded \
      item (a marked directory stands for everything under it), in the tool's own syntax, \
      escaped so that each rule matches that item and nothing else: spaces anywhere, * ? [ ] \\, \
      leading # - ! ;, $ (restic expands variables), newlines and bytes that are not UTF-8. \
      \(MechanismHelp.byDefault).

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

      Deja Dup and Vorta (--for deja-dup, --for vorta) keep their exclusions in their own \
      settings, which skipbackup shares with the user: with --apply it writes the topmost \
      excluded items there, beside the user's own entries, and takes out those it wrote before \
      that are no longer excluded (it remembers which are its own in \
      $XDG_STATE_HOME/skipbackup for Deja Dup, and in a block between two comment lines for \
      Vorta); a second run with no change writes nothing. Without ROOT it walks the folders the \
      app saves: Deja Dup's include-list ($HOME and the other names resolved as Deja Dup \
      resolves them), each Vorta profile's source folders. Without --apply it prints what it \
      would write: Deja Dup's exclude-list as gsettings set takes it, each Vorta profile's \
      block. Deja Dup is reached through gsettings (dconf or GSETTINGS_BACKEND=keyfile), Vorta \
      through sqlite3, waiting for Vorta's own writes. An item whose name the app cannot hold \
      (Deja Dup: not UTF-8, or $USER in it) is one line on standard error, and the rest is \
      written. See docs/desktop.md.

        skipbackup export --for deja-dup --apply
        skipbackup export --for vorta --apply --profile Default

      Exit status: 0 when every excluded item has its rule, 1 when any item could not be read \
      or named, or ROOT is excluded, 64 for a usage error.
      """)

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp(
      "The backup tool that reads the file, or the backup app whose settings hold the items.",
      valueName: "TOOL"))
  var target: ExportTarget

  @Flag(
    help:
      "Write the items into the app's settings (deja-dup, vorta) rather than print them."
  )
  var apply = false

  @Option(
    help: ArgumentHelp(
      "The Vorta profile to update (default: every profile).", valueName: "NAME"))
  var profile: String?

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
    help: ArgumentHelp(
      "The directory the backup reads (for an app: none, or several).", valueName: "ROOT"),
    completion: .directory)
  var roots: [String] = []

  func validate() throws {
    switch target {
    case .tool(let tool):
      guard roots.count == 1 else {
        throw ValidationError("Give one ROOT: the directory \(tool.rawValue) reads.")
      }
      if apply || profile != nil {
        throw ValidationError(
          "--apply and --profile are for the backup apps' settings (deja-dup, vorta); "
            + "\(tool.rawValue) reads a file.")
      }
    case .app(let app):
      if output != nil {
        throw ValidationError("-o is for the backup tools' files; \(app.rawValue) keeps settings.")
      }
      if profile != nil, app != .vorta {
        throw ValidationError("--profile names a Vorta profile; give it with --for vorta.")
      }
    }
  }

  func run() throws {
    switch target {
    case .tool: try engine.run()
    case .app: try appEngine.run()
    }
  }

  /// The engine's configuration, from the parsed command line, for a tool.
  var engine: ExportRun {
    get throws {
      guard case .tool(let tool) = target, let root = roots.first else {
        throw ValidationError("--for \(target.rawValue) writes no exclusion file.")
      }
      return ExportRun(
        root: RawArguments.path(root), tool: tool,
        mechanisms: try mechanismOptions.mechanisms(default: .all),
        output: output.map(RawArguments.path), oneFileSystem: oneFileSystem, quiet: quiet.quiet)
    }
  }

  /// The engine's configuration, from the parsed command line, for an app.
  var appEngine: AppExportRun {
    get throws {
      guard case .app(let app) = target else {
        throw ValidationError("--for \(target.rawValue) is a tool, not an app.")
      }
      return AppExportRun(
        app: app, roots: roots.map(RawArguments.path), apply: apply, profile: profile,
        mechanisms: try mechanismOptions.mechanisms(default: .all), oneFileSystem: oneFileSystem,
        quiet: quiet.quiet)
    }
  }
}
