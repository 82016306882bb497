import SkipBackupCore
import SystemPackage
import SkipBackupReport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// COMMAND, started by replacing this process (execvp(3)): it keeps the
/// process id, the environment, the standard streams and the signals, and
/// its exit status is the process's, so a shell reports a signal that ends
/// it as 128+N. Nothing of skipbackup stays behind to hold the namespace.
package enum CommandLaunch {
  /// The working directory, as bytes; `nil` when it has no path (removed).
  package static func workingDirectory() -> [UInt8]? {
    (try? currentDirectory())?.bytes
  }

  /// Enters `directory` again, now through the view, so that a working
  /// directory inside a ROOT is the view's.
  package static func enter(_ directory: [UInt8]) throws(SkipBackupError) {
    try changeWorkingDirectory(to: FilePath(bytes: directory))
  }

  /// COMMAND's arguments as C strings, made before the watch's last look,
  /// so that nothing but `execvp` follows it.
  package struct Arguments: ~Copyable {
    let command: [[UInt8]]
    let strings: CStringArray

    package init(_ command: [[UInt8]]) {
      self.command = command
      strings = CStringArray(command)
    }
  }

  /// Replaces the process with `command`; returns only when that failed,
  /// with the exit status a shell gives then: 127 when there is no such
  /// program, 126 when it cannot be run.
  package static func exec(_ command: borrowing Arguments, diagnostics: Diagnostics) -> Int32 {
    let errno = command.strings.replaceProcess()
    let name = String(escapingForDisplay: command.command[0])
    diagnostics.report("\(name): cannot be run: \(errno.description.lowercased()) (execvp)")
    return errno == .noSuchFileOrDirectory ? 127 : 126
  }
}
