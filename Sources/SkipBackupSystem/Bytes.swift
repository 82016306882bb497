#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Byte comparisons and C strings for the layers above, which call no libc
/// function themselves: the walk's hot paths compare a name in a kernel
/// buffer with a literal, and `memcmp` does that without making an array.
/// Inlinable, so that those paths get a `memcmp` call and no more.
extension UnsafeRawBufferPointer {
  /// Whether these bytes are exactly `literal`'s.
  @inlinable @inline(__always)
  package func equals(_ literal: StaticString) -> Bool {
    count == literal.utf8CodeUnitCount
      && (count == 0 || memcmp(baseAddress!, literal.utf8Start, count) == 0)
  }

  /// Whether these bytes begin with `prefix`'s.
  @inlinable @inline(__always)
  package func starts(with prefix: StaticString) -> Bool {
    count >= prefix.utf8CodeUnitCount
      && (prefix.utf8CodeUnitCount == 0
        || memcmp(baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0)
  }

  /// The offset of the first `byte` at or after `start`, if any: `memchr`,
  /// which a megabytes-long line needs (a byte-by-byte search ran at about
  /// 170 ns a byte in a debug build).
  @inlinable @inline(__always)
  package func firstIndex(of byte: UInt8, from start: Int) -> Int? {
    guard start < count else { return nil }
    let found = memchr(baseAddress! + start, CInt(byte), count - start)
    return found.map { baseAddress!.distance(to: UnsafeRawPointer($0)) }
  }
}

/// Whether the `count` bytes at `first` and at `second` are the same.
@inlinable @inline(__always)
package func bytesEqual(_ first: UnsafeRawPointer, _ second: UnsafeRawPointer, count: Int) -> Bool {
  count == 0 || memcmp(first, second, count) == 0
}

/// The bytes of the C string at `pointer`, without its NUL.
@inlinable @inline(__always)
package func bytes(ofCString pointer: UnsafePointer<CChar>) -> [UInt8] {
  Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
}

/// The length of the C string at `pointer`, without its NUL.
@inlinable @inline(__always)
package func cStringLength(_ pointer: UnsafePointer<CChar>) -> Int {
  strlen(pointer)
}
