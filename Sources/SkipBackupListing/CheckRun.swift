import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `check`: whether every PATH is excluded, as an exit status, for scripts.
package struct CheckRun: Sendable, Equatable {
  package var paths: [FilePath]
  package var mechanisms: MechanismSet
  /// Follow a symbolic link given as a PATH (`-L`).
  package var dereference = false
  /// Where a failure is said; nothing else is printed.
  package var streams: Streams = .standard

  package init(
    paths: [FilePath], mechanisms: MechanismSet, dereference: Bool = false,
    streams: Streams = .standard
  ) {
    self.paths = paths
    self.mechanisms = mechanisms
    self.dereference = dereference
    self.streams = streams
  }

  /// 0 when every path is excluded, 1 when any is included, 2 when any
  /// could not be read.
  package func exitStatus() -> Int32 {
    let diagnostics = Diagnostics(streams: streams)
    var included = false
    for path in paths {
      do {
        // The item's own mark settles it; only without one do the directories above count.
        let item = FileItem(path: path, followSymbolicLinks: dereference)
        if try mechanisms.isMarked(item) { continue }
        if try mechanisms.markedAncestor(of: path, followSymbolicLinks: dereference) == nil {
          included = true
        }
      } catch {
        diagnostics.report(error)
      }
    }
    return diagnostics.failures > 0 ? 2 : included ? 1 : 0
  }
}
