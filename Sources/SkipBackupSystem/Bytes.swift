#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Byte comparisons and C strings for the layers above, which call no libc
/// function themselves: the walk's hot paths compare a name in a kernel
/// buffer with a literal, and `memcmp` does that without making an array.
extension UnsafeRawBufferPointer {
  /// Whether these bytes are exactly `literal`'s.
  @inline(__always)
  package func equals(_ literal: StaticString) -> Bool {
    count == literal.utf8CodeUnitCount
      && (count == 0 || memcmp(baseAddress!, literal.utf8Start, count) == 0)
  }

  /// Whether these bytes begin with `prefix`'s.
  @inline(__always)
  package func starts(with prefix: StaticString) -> Bool {
    count >= prefix.utf8CodeUnitCount
      && (prefix.utf8CodeUnitCount == 0
        || memcmp(baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0)
  }

  /// Whether the first `length` bytes are those of `other`'s first `length`.
  @inline(__always)
  package func prefix(_ length: Int, equals other: UnsafeRawBufferPointer) -> Bool {
    length <= count && length <= other.count
      && (length == 0 || memcmp(baseAddress!, other.baseAddress!, length) == 0)
  }
}

/// The bytes of the C string at `pointer`, without its NUL.
@inline(__always)
package func bytes(ofCString pointer: UnsafePointer<CChar>) -> [UInt8] {
  Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
}

/// The length of the C string at `pointer`, without its NUL.
@inline(__always)
package func length(ofCString pointer: UnsafePointer<CChar>) -> Int {
  strlen(pointer)
}
