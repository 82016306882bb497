import SkipBackupCore
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Standard output through a large buffer, written with
/// `OutputDescriptor.writeAll`: paths
/// are bytes, written as they are, and a listing of a million paths costs a
/// few hundred calls, not a million.
///
/// Each thread of a walk has an `Output` of its own; they share a
/// ``OutputSink``, and a buffer goes out only at the end of a record, so
/// that lines from different threads never mix.
final class Output {
  private let sink: OutputSink
  private var buffer: [UInt8] = []
  private let capacity = 64 * 1024

  init(sink: OutputSink = .standardOutput) {
    self.sink = sink
    buffer.reserveCapacity(capacity + 4096)
  }

  deinit { flush() }

  func write(_ bytes: some Collection<UInt8>) {
    buffer.append(contentsOf: bytes)
  }

  func write(_ text: String) {
    write(text.utf8)
  }

  func write(_ byte: UInt8) {
    buffer.append(byte)
  }

  /// Writes `path`'s bytes and `terminator`: a whole record.
  func write(_ path: FilePath, terminator: UInt8) {
    path.withPlatformString { pointer in
      write(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
    write(terminator)
    endRecord()
  }

  /// Marks the end of a record: the buffer may go out now.
  @inline(__always)
  func endRecord() {
    if buffer.count >= capacity { flush() }
  }

  func flush() {
    guard !buffer.isEmpty else { return }
    sink.write(buffer)
    buffer.removeAll(keepingCapacity: true)
  }
}

/// A descriptor that whole buffers are written to, one at a time.
final class OutputSink: Sendable {
  private let descriptor: CInt
  private let lock = Mutex(())

  static let standardOutput = OutputSink(descriptor: STDOUT_FILENO)

  init(descriptor: CInt) {
    self.descriptor = descriptor
  }

  func write(_ buffer: [UInt8]) {
    lock.withLock { _ in
      if case .failure(let errno) = OutputDescriptor.writeAll(buffer, to: descriptor) {
        OutputFailure.end(errno)
      }
    }
  }
}

/// The end of a run whose output failed: the reader went away (`EPIPE`, with
/// SIGPIPE ignored, as systemd services have it), the disk is full, the
/// descriptor is closed or the device failed. Output is lost, so the run
/// stops, says so once, and exits 1, whatever became of the work: a caller's
/// `&&` must not go on with a truncated list. (With SIGPIPE at its default,
/// the kernel ends the process by the signal before `write` returns.)
enum OutputFailure {
  private static let ending = Mutex(false)

  static func end(_ errno: Errno) -> Never {
    let first = ending.withLock { ending in
      defer { ending = true }
      return !ending
    }
    // A second thread whose output failed too waits here for the first one's exit.
    if !first { while true { pause() } }
    _ = OutputDescriptor.writeAll(
      "skipbackup: write error: \(errno.description)\n", to: STDERR_FILENO)
    exit(1)
  }
}
