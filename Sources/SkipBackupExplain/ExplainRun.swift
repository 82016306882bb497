import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `explain`: why each item is in or out of backups, and what each backup
/// tool does with it.
package struct ExplainRun: Sendable {
  package var paths: [FilePath]
  /// Follow a symbolic link given as a PATH (`-L`).
  package var dereference = false
  package var format: OutputFormat = .text

  package init(paths: [FilePath], dereference: Bool = false, format: OutputFormat = .text) {
    self.paths = paths
    self.dereference = dereference
    self.format = format
  }

  package func run() throws(ReportedFailure) {
    let diagnostics = Diagnostics()
    let output = Output()
    for path in paths {
      do throws(SkipBackupError) {
        let explanation = try Explanation(of: path, followSymbolicLinks: dereference)
        format == .json ? explanation.writeJSON(to: output) : explanation.writeText(to: output)
        output.endRecord()
      } catch {
        diagnostics.report(error, after: output)
      }
    }
    output.flush()
    if diagnostics.failures > 0 { throw .failure }
  }
}
