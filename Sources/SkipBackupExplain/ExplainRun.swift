import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `explain`: why each item is in or out of backups, and what each backup
/// tool does with it.
package struct ExplainRun: Sendable, Equatable {
  package var paths: [FilePath]
  /// Follow a symbolic link given as a PATH (`-L`).
  package var dereference = false
  package var format: OutputFormat = .text
  /// Where the explanations are printed, and the failures.
  package var streams: Streams = .standard

  package init(
    paths: [FilePath], dereference: Bool = false, format: OutputFormat = .text,
    streams: Streams = .standard
  ) {
    self.paths = paths
    self.dereference = dereference
    self.format = format
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let diagnostics = Diagnostics(streams: streams)
    let output = Output(sink: diagnostics.outputSink)
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
