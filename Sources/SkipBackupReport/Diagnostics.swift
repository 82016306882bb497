import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Errors and notes for a person, on standard error (the errors of the
/// run's ``Streams``), each line `skipbackup: PATH: reason`, and a count of
/// the failures for the exit status. Walk threads report through the same
/// one, and print through its ``outputSink``.
package final class Diagnostics: Sendable {
  private let state = Locked(0)
  /// The progress line, erased before a message is written.
  private let progress: Progress?
  private let errors: CInt
  /// The run's output, which each walk thread's ``Output`` writes through:
  /// one sink, so that whole buffers go out one at a time.
  package let outputSink: OutputSink

  package init(streams: Streams = .standard, progress: Progress? = nil) {
    self.progress = progress
    errors = streams.errors
    outputSink = OutputSink(streams)
  }

  package var failures: Int { state.withLock { $0 } }

  /// Reports a failure; the run goes on with the other items. What `output`
  /// holds is written first, so that the message comes after it.
  package func report(_ error: SkipBackupError, after output: Output? = nil) {
    var message = error.description
    if error.isSymbolicLinkRefusal {
      message += "; -L (--dereference) acts on the link's target"
    }
    report(message, after: output)
  }

  /// Reports a failure that is not a file error.
  package func report(_ message: String, after output: Output? = nil) {
    output?.flush()
    write("skipbackup: \(message)\n", failure: true)
  }

  /// The summary of `-v` that ends a run: the run's own `counts`, then
  /// mount points not entered (with `-x`), items that vanished (if any),
  /// the failures, and `trailer`.
  package func summarize(
    _ counts: [String], notEntered: Int?, vanished: Int, trailer: [String] = []
  ) {
    var parts = counts
    if let notEntered { parts.append("not entered \(notEntered) (other filesystems)") }
    if vanished > 0 { parts.append("vanished \(vanished)") }
    parts.append("errors \(failures)")
    note((parts + trailer).joined(separator: ", "))
  }

  /// A note that is not a failure.
  package func note(_ message: String) {
    write("skipbackup: \(message)\n", failure: false)
  }

  private func write(_ text: String, failure: Bool) {
    state.withLock { failures in
      if failure { failures += 1 }
      progress?.erase()
      // Standard error that cannot be written to leaves nowhere to say so.
      _ = OutputDescriptor.writeAll(text, to: errors)
    }
  }
}
