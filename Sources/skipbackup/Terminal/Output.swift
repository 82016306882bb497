import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Standard output through one large buffer, written with `write(2)`: paths
/// are bytes, written as they are, and a listing of a million paths costs a
/// few hundred calls, not a million.
final class Output {
  private let descriptor: CInt
  private var buffer: [UInt8] = []
  private let capacity = 64 * 1024

  init(descriptor: CInt = STDOUT_FILENO) {
    self.descriptor = descriptor
    buffer.reserveCapacity(capacity)
  }

  deinit { flush() }

  func write(_ bytes: some Collection<UInt8>) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= capacity { flush() }
  }

  func write(_ text: String) {
    write(text.utf8)
  }

  func write(_ byte: UInt8) {
    buffer.append(byte)
    if buffer.count >= capacity { flush() }
  }

  /// Writes `path`'s bytes, then `terminator`.
  func write(_ path: FilePath, terminator: UInt8) {
    path.withPlatformString { pointer in
      write(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
    write(terminator)
  }

  func flush() {
    var offset = 0
    while offset < buffer.count {
      let written = buffer.withUnsafeBytes { bytes in
        Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      }
      if written < 0 {
        if errno == EINTR || errno == EAGAIN { continue }
        // The reader went away (EPIPE) or the disk is full: nothing more can be said.
        exit(errno == EPIPE ? 0 : 1)
      }
      offset += written
    }
    buffer.removeAll(keepingCapacity: true)
  }
}
