import ArgumentParser
import SkipBackupExport
import SkipBackupReport
import SkipBackupView

// Their raw values are their names, which the parser takes, lists and shows.
extension OutputFormat: ExpressibleByArgument {}
extension BackupTool: ExpressibleByArgument {}
extension WrappedApp: ExpressibleByArgument {}

extension ExportTarget: ExpressibleByArgument {
  public init?(argument: String) { self.init(rawValue: argument) }
  public var defaultValueDescription: String { rawValue }
  public static var allValueStrings: [String] { allCases.map(\.rawValue) }
  public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
