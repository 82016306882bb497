import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A run's output (standard output, or the descriptor of its ``Streams``) through a large buffer, written with
/// `OutputDescriptor.writeAll`: paths
/// are bytes, written as they are, and a listing of a million paths costs a
/// few hundred calls, not a million.
///
/// Each thread of a walk has an `Output` of its own; they share a
/// ``OutputSink``, and a buffer goes out only at the end of a record, so
/// that lines from different threads never mix.
package final class Output {
  private let sink: OutputSink
  /// Raw memory rather than an `[UInt8]`: an array held by a class is
  /// checked for exclusive access and uniqueness on every append, which
  /// costs 17 % of `status -R`'s user time on the 200,000-file tree (a line
  /// is four appends; docs/performance.md), and a `String` goes through its
  /// UTF-8 view.
  private var storage: UnsafeMutableRawPointer
  private var allocated: Int
  private var count = 0
  private let capacity = 64 * 1024

  /// Whether names in text go out escaped: the output is a terminal,
  /// where a name holding `\e[2J` would clear the screen, so
  /// control characters and bytes that are not UTF-8 are shown as escapes
  /// (`\x1b`, `\n`, `\xff`), as in messages, in the manner of `ls` on a
  /// terminal. Piped output, `-0` and JSON stay byte for byte.
  package let escapesNames: Bool

  /// An output of its own on `streams`' output, for a run on one thread;
  /// the threads of a walk share their run's sink (``Diagnostics/sink``).
  package convenience init(streams: Streams = .standard) {
    self.init(sink: OutputSink(streams))
  }

  package init(sink: OutputSink) {
    self.sink = sink
    escapesNames = sink.isTerminal
    allocated = capacity + 4096
    storage = .allocate(byteCount: allocated, alignment: 1)
  }

  deinit {
    flush()
    storage.deallocate()
  }

  @inline(__always)
  package func write(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    let used = count
    if used + bytes.count > allocated { grow(toHold: used + bytes.count) }
    (storage + used).copyMemory(from: base, byteCount: bytes.count)
    count = used + bytes.count
  }

  package func write(_ bytes: some Collection<UInt8>) {
    let written: Void? = bytes.withContiguousStorageIfAvailable {
      write(UnsafeRawBufferPointer($0))
    }
    if written == nil { write(Array(bytes)) }
  }

  package func write(_ text: String) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
  }

  package func write(_ text: StaticString) {
    write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
  }

  @inline(__always)
  package func write(_ byte: UInt8) {
    let used = count
    if used == allocated { grow(toHold: used + 1) }
    storage.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
    count = used + 1
  }

  /// Writes a name (a path) into text: its bytes, or on a terminal its
  /// escaped form where it holds a control character or a byte that is not
  /// ASCII (only those are looked at again).
  @inline(__always)
  package func writeName(_ bytes: UnsafeBufferPointer<UInt8>) {
    if escapesNames, bytes.contains(where: { $0 < 0x20 || $0 >= 0x7F }) {
      write(String(escapingForDisplay: bytes))
    } else {
      write(UnsafeRawBufferPointer(bytes))
    }
  }

  @inlinable
  package func writeName(_ bytes: some Collection<UInt8>) {
    let written: Void? = bytes.withContiguousStorageIfAvailable { writeName($0) }
    if written == nil { Array(bytes).withUnsafeBufferPointer { writeName($0) } }
  }

  /// Writes `path`'s bytes and `terminator`: a whole record.
  package func write(_ path: FilePath, terminator: UInt8) {
    path.withPlatformString { pointer in
      let bytes = UnsafeBufferPointer(
        start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
        count: cStringLength(pointer)
      )
      // A NUL-terminated record (`-0`) is for programs: always its bytes.
      if terminator == 0 { write(UnsafeRawBufferPointer(bytes)) } else { writeName(bytes) }
    }
    write(terminator)
    endRecord()
  }

  /// Marks the end of a record: the buffer may go out now.
  @inline(__always)
  package func endRecord() {
    if count >= capacity { flush() }
  }

  package func flush() {
    guard count > 0 else { return }
    sink.write(UnsafeRawBufferPointer(start: storage, count: count))
    count = 0
  }

  /// A record longer than the buffer: the buffer doubles until it fits.
  private func grow(toHold needed: Int) {
    var size = allocated * 2
    while size < needed { size *= 2 }
    let grown = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
    grown.copyMemory(from: storage, byteCount: count)
    storage.deallocate()
    storage = grown
    allocated = size
  }
}

/// A descriptor that whole buffers are written to, one at a time: a run's
/// output stream.
package final class OutputSink: Sendable {
  /// The descriptor, written by one thread at a time.
  private let descriptor: Locked<CInt>
  /// Where a failed write is said.
  private let errors: CInt

  /// Whether the descriptor is a terminal, as `streams` found.
  package let isTerminal: Bool

  package init(_ streams: Streams) {
    descriptor = Locked(streams.output)
    errors = streams.errors
    isTerminal = streams.outputIsTerminal
  }

  package func write(_ buffer: UnsafeRawBufferPointer) {
    descriptor.withLock { descriptor in
      if case .failure(let errno) = OutputDescriptor.writeAll(buffer, to: descriptor) {
        OutputFailure.end(errno, errors: errors)
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
package enum OutputFailure {
  private static let ending = Locked(false)

  package static func end(_ errno: Errno, errors: CInt = STDERR_FILENO) -> Never {
    let first = ending.withLock { ending in
      defer { ending = true }
      return !ending
    }
    // A second thread whose output failed too waits here for the first one's exit.
    if !first { while true { system_pause() } }
    _ = OutputDescriptor.writeAll(
      "skipbackup: write error: \(errno.description)\n", to: errors)
    system_exit(1)
  }
}
