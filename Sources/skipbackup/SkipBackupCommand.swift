import ArgumentParser

/// The root command: it only names the subcommands.
struct SkipBackupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "skipbackup",
    abstract:
      "Mark files and directories \"do not back up\" the way Apple's platforms do, and read the marks back.",
    discussion: """
      \(MechanismHelp.marks) A marked directory excludes everything below it.
      """,
    version: "0.1.0",
    subcommands: [
      MarkCommand.self, ClearCommand.self, StatusCommand.self, CheckCommand.self, ListCommand.self,
      ExportCommand.self, DuCommand.self, ExplainCommand.self, SweepCommand.self, RunCommand.self,
      BrowseCommand.self,
    ])
}
