import ArgumentParser
import SkipBackupCore
import SkipBackupReport
import SkipBackupMarking

struct MarkCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "mark",
    abstract: "Mark files and directories so that backups leave them out.",
    discussion: """
      Writes the mark of each mechanism chosen with --mechanism (by default resource, the \
      isExcludedFromBackup resource value of iOS 5.1 and later). A mark on a directory excludes \
      everything below it; with --recursive, every file and directory below gets its own mark as \
      well. An item that already carries the mark is left untouched, so its ctime stays; contents, \
      modification times and other attributes never change, except that -m cachedir adds \
      CACHEDIR.TAG, a new entry, which changes the directory's modification time.

      With --form smb the \(MechanismHelp.appleNames) marks are written as a Linux Samba server \
      (vfs_fruit with vfs_streams_xattr) keeps a Mac's: in the stream attribute \
      user.DosStream.NAME:$DATA, so that a Mac client of the share sees the attribute \
      com.apple.metadata:com_apple_backup_excludeItem. The form smb is for Samba's default \
      fruit:encoding = private, smb-native for fruit:encoding = native. The other mechanisms are \
      written as always, and clear removes the marks in every form.

      Exit status: 0 when every item was handled, 1 when any failed (each failure is reported and \
      the other items are still handled), 64 for a usage error.
      """)

  @Option(
    help: ArgumentHelp(
      "Where \(MechanismHelp.appleNames) marks are written: local (user.NAME), smb or smb-native "
        + "(a Samba share's stream, as a Mac client of it sees the mark).",
      valueName: "form"))
  var form: MarkForm = .local

  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @Flag(name: [.customShort("n"), .long], help: "Show what would be marked, and change nothing.")
  var dryRun = false

  @OptionGroup var reporting: ReportingOptions
  @OptionGroup var paths: PathArguments

  func validate() throws {
    try items.validate(paths)
  }

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: MarkingRun {
    get throws {
      MarkingRun(
        action: .mark,
        mechanisms: try mechanisms.mechanisms(default: MarkingRun.Action.mark.defaultMechanisms),
        items: items.selection(paths), verbose: reporting.verbose, quiet: reporting.quiet,
        dryRun: dryRun, form: form)
    }
  }
}

// Its raw value is its name, which the parser takes, lists and shows as the default.
extension MarkForm: ExpressibleByArgument {}
