import SkipBackupSystem

/// Runs `body`, and again after an `EPERM` on what the look that explains
/// it found to be a file or directory, up to ``momentaryRefusalAttempts``
/// times in all: a name that a symbolic link held for a moment and that a
/// directory or file holds again (a swap under way: scripts/torture's swap
/// rounds) writes now, while an item that refuses for good (immutable, a
/// filesystem or security module that says no) refuses each time and is
/// reported. More than one try more: a name swapped back and forth can be
/// a link at the call and a directory at the look twice running, which
/// the swap rounds met once in about 1,200 runs with one try more.
/// `mark -R` and `sweep` both write through it.
package func retryingAMomentaryRefusal<R>(
  at depth: Int, _ body: () throws(SkipBackupError) -> R
) throws(SkipBackupError) -> R {
  var attempt = 1
  while true {
    do {
      return try body()
    } catch
      where depth > 0 && attempt < momentaryRefusalAttempts && error.errno == .notPermitted
      && !error.isRefusedForFileType
    {
      attempt += 1
    }
  }
}

/// How many times in all ``retryingAMomentaryRefusal(at:_:)`` tries: each
/// try more costs a failed call and a look, on an item that refuses.
package let momentaryRefusalAttempts = 4
