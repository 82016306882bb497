import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// `check`: whether every PATH is excluded, as an exit status, for scripts.
package enum CheckRun {
  /// 0 when every path is excluded, 1 when any is included, 2 when any
  /// could not be read.
  package static func exitStatus(paths: [FilePath], mechanisms: MechanismSet, dereference: Bool) -> Int32 {
    let diagnostics = Diagnostics()
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
