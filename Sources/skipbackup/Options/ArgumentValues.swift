import ArgumentParser
import SkipBackupExport
import SkipBackupReport

// Their raw values are their names, which the parser takes, lists and shows.
extension OutputFormat: ExpressibleByArgument {}
extension BackupTool: ExpressibleByArgument {}
