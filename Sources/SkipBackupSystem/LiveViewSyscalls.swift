import CFanotify
import CLinux

/// The corresponding C function is `fanotify_mark(2)` with
/// `FAN_MARK_FLUSH`: takes every mark of one `kind` (0 for inode marks,
/// `FAN_MARK_FILESYSTEM`) off the group `fd`, after which the group queues
/// no event. A call of its own, so that a test can act just before the
/// live view's watch stops (`SKIPBACKUP_RACE=fanotify_mark(flush):1:...`).
package func system_fanotify_flush(_ fd: CInt, _ kind: CUnsignedInt) -> CInt {
  mocked(.fanotifyFlush) {
    cfanotify_fanotify_mark(fd, CFANOTIFY_FAN_MARK_FLUSH | kind, 0, CLINUX_AT_FDCWD, nil)
  }
}
