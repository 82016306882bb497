import ArgumentParser
import SkipBackupCore

struct MarkCommand: MarkingCommand {
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

      Exit status: 0 when every item was handled, 1 when any failed (each failure is reported and \
      the other items are still handled), 64 for a usage error.
      """)

  static let action = MarkingRun.Action.mark
  static let defaultMechanisms: MechanismSet = MechanismSet([.resource])

  @OptionGroup var options: MarkingOptions<MarkCommand>
}
