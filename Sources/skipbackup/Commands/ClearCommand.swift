import ArgumentParser
import SkipBackupCore
import SkipBackupReport
import SkipBackupMarking

struct ClearCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "clear",
    abstract: "Remove the marks, so that backups include the items again.",
    discussion: """
      Removes the mark of each mechanism chosen with --mechanism, by default all: the \
      \(MechanismHelp.defaultCount) marks \(MechanismHelp.defaultNames). \
      \(MechanismHelp.otherNames) are cleared only when named, \
      as they are written only when named: to undo every mark skipbackup writes, all the way \
      down, run skipbackup clear -R -m \(MechanismHelp.everyValue) PATH. \(MechanismHelp.appleNames) are removed \
      in every form, the stream a Linux Samba server keeps for a Mac's mark too (mark --form). \
      An item without a mark is no error. Only marks are removed: an attribute that says the opposite \
      (user.xdg.robots.backup=true) stays, and so does a CACHEDIR.TAG that is not a valid tag. \
      A valid CACHEDIR.TAG is removed only when it holds exactly what skipbackup writes; one \
      that another tool wrote (cargo tags its target directories) is left to that tool and \
      reported as an error, since its directory stays excluded. An item below a marked \
      directory stays excluded until that directory is cleared too; skipbackup status -v tells \
      where an exclusion comes from.

      Exit status: 0 when every item was handled, 1 when any failed, 64 for a usage error.
      """)

  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @Flag(name: [.customShort("n"), .long], help: "Show what would be cleared, and change nothing.")
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
      // Every form is removed: the form only says where a mark is written.
      MarkingRun(
        action: .clear,
        mechanisms: try mechanisms.mechanisms(default: MarkingRun.Action.clear.defaultMechanisms),
        items: items.selection(paths), verbose: reporting.verbose, quiet: reporting.quiet,
        dryRun: dryRun)
    }
  }
}
