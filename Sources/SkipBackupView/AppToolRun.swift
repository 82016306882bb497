import SkipBackupCore
import SkipBackupExport
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The backup apps whose own runs of a backup tool `run --for APP` wraps.
package enum WrappedApp: String, CaseIterable, Sendable {
  /// Déjà Dup 44, through its `custom-tool-wrapper` setting.
  case dejaDup = "deja-dup"
}

/// `run --for deja-dup -- TOOL ARG...`: Déjà Dup's `custom-tool-wrapper`.
/// A backup (``DejaDupTool/backsUp(_:)``) runs with the view at each folder
/// Déjà Dup saves (its `include-list`, resolved as `export --for deja-dup`
/// resolves it) and Déjà Dup's own state kept real (``StateArguments``);
/// every other run of the tool (a status, a restore, a cleanup) runs as it
/// is, since it reads the backup's files, or writes the real tree.
package struct AppToolRun: Sendable, Equatable {
  package var app: WrappedApp
  /// The tool and its arguments, as Déjà Dup gives them.
  package var command: [[UInt8]]
  package var mechanisms: MechanismSet
  /// Run the sweep on each folder first (`--sweep`).
  package var sweepFirst = false
  package var streams: Streams = .standard

  package init(
    app: WrappedApp, command: [[UInt8]], mechanisms: MechanismSet, sweepFirst: Bool = false,
    streams: Streams = .standard
  ) {
    self.app = app
    self.command = command
    self.mechanisms = mechanisms
    self.sweepFirst = sweepFirst
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let diagnostics = Diagnostics(streams: streams)
    guard let tool = DejaDupTool(command: command) else {
      let name = String(escapingForDisplay: command.first ?? [])
      diagnostics.report(
        "\(name): not a backup tool Déjà Dup runs (duplicity, restic, borg), so which of its "
          + "runs read the saved folders is not known; nothing was run")
      throw .failure
    }
    guard tool.backsUp(command) else { try runAsItIs(diagnostics) }
    guard let saved = DejaDupSettings.savedFolders(diagnostics) else { throw .failure }
    // Déjà Dup passes a folder that is not there to the tool, which skips it.
    let folders = saved.filter { folder in
      guard let status = try? FileItem(path: FilePath(bytes: folder)).status() else {
        return false
      }
      return status.st_mode & S_IFMT == S_IFDIR
    }
    guard !folders.isEmpty else { try runAsItIs(diagnostics) }
    // No progress line: Déjà Dup reads the tool's standard error.
    var view = ViewRun(
      roots: folders.map { FilePath(bytes: $0) }, command: command, mechanisms: mechanisms,
      sweepFirst: sweepFirst, quiet: true, streams: streams)
    view.stateOptions = DejaDupTool.stateOptions
    view.keptReal = DejaDupTool.ownIncludes(command).map { FilePath(bytes: $0) }
    try view.run()
  }

  /// Becomes the tool, with no view.
  private func runAsItIs(_ diagnostics: Diagnostics) throws(ReportedFailure) -> Never {
    let arguments = CommandLaunch.Arguments(command)
    throw ReportedFailure(status: CommandLaunch.exec(arguments, diagnostics: diagnostics))
  }
}
