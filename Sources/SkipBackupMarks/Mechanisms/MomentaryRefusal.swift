import SkipBackupSystem

/// Runs `body`, and once more after an `EPERM` on what the look that
/// explains it found to be a file or directory: a name that a symbolic link
/// held for a moment and that a directory or file holds again (a swap under
/// way: scripts/torture's swap rounds) writes now, while an item that
/// refuses for good (immutable, a filesystem or security module that says
/// no) refuses again and is reported. One try more, not a loop: `mark -R`
/// and `sweep` both write through it.
package func retryingAMomentaryRefusal<R>(
  at depth: Int, _ body: () throws(SkipBackupError) -> R
) throws(SkipBackupError) -> R {
  do {
    return try body()
  } catch  where depth > 0 && error.errno == .notPermitted && !error.isRefusedForFileType {
    return try body()
  }
}
