import Foundation
import SkipBackupCore

// Code ported from Apple's platforms shows `error.localizedDescription`.
// Without this, Foundation makes "The operation could not be completed.
// (SkipBackupCore.SkipBackupError error 1.)" of it; with it, the message is
// the error's own, path first. Here, not in the core, because the core links
// no Foundation (the tool starts without it).
extension SkipBackupError: LocalizedError {
  /// The error's `description`: `PATH: reason (call: strerror)`.
  public var errorDescription: String? { description }
}
