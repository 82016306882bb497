#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `path` with every symbolic link, `.` and `..` resolved, or `nil` when it
/// cannot be (it does not exist, or a directory on the way cannot be read).
///
/// The corresponding C function is `realpath(3)`.
package func canonicalPath(_ path: [UInt8]) -> [UInt8]? {
  let resolved = (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
    system_realpath($0.baseAddress!, nil)
  }
  guard let resolved else { return nil }
  defer { free(resolved) }
  return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
}
