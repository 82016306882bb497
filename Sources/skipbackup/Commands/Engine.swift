import ArgumentParser
import SkipBackupExport
import SkipBackupReport

/// Runs an engine: a failure it reported becomes the process's exit status.
func engine(_ body: () throws(ReportedFailure) -> Void) throws {
  do {
    try body()
  } catch {
    throw ExitCode(error.status)
  }
}

// Their raw values are their names, which the parser takes, lists and shows.
extension OutputFormat: ExpressibleByArgument {}
extension BackupTool: ExpressibleByArgument {}
