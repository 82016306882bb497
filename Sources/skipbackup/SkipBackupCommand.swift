import ArgumentParser

/// The root command: it only names the subcommands.
struct SkipBackupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "skipbackup",
    abstract:
      "Mark files and directories \"do not back up\" the way Apple's platforms do, and read the marks back.",
    discussion: """
      A mark is iOS 5.0.1's com.apple.MobileBackup attribute (legacy), the isExcludedFromBackup \
      resource value of iOS 5.1 and later (resource), the freedesktop user.xdg.robots.backup \
      attribute (xdg), the nodump inode flag (nodump), or a CACHEDIR.TAG (cachedir). A marked \
      directory excludes everything below it.
      """,
    version: "0.1.0",
    subcommands: [
      MarkCommand.self, ClearCommand.self, StatusCommand.self, CheckCommand.self, ListCommand.self,
      ExportCommand.self, DuCommand.self, ExplainCommand.self, SweepCommand.self, RunCommand.self,
    ])
}
