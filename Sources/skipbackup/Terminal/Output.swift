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
        // The reader went away (EPIPE) or the disk is full: nothing more can be said.
        exit(errno == .brokenPipe ? 0 : 1)
      }
    }
  }
}
