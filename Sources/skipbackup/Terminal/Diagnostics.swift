import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Errors and notes for a person, on standard error, each line
/// `skipbackup: PATH: reason`, and a count of the failures for the exit status.
final class Diagnostics {
  private(set) var failures = 0
  /// Erases a progress line before a message is written.
  var beforeWriting: () -> Void = {}

  /// Reports a failure; the run goes on with the other items.
  func report(_ error: SkipBackupError) {
    failures += 1
    var message = error.description
    if error.isSymbolicLinkRefusal {
      message += "; -L (--dereference) acts on the link's target"
    }
    write("skipbackup: \(message)\n")
  }

  /// Reports a failure that is not a file error.
  func report(_ message: String) {
    failures += 1
    write("skipbackup: \(message)\n")
  }

  /// A note that is not a failure.
  func note(_ message: String) {
    write("skipbackup: \(message)\n")
  }

  private func write(_ text: String) {
    beforeWriting()
    var text = text
    text.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }
}
