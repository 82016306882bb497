import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `path` (NUL-terminated) with every symbolic link, `.` and `..` resolved,
/// NUL-terminated: the one place that calls `realpath(3)`.
package func resolvingPath(_ path: UnsafePointer<CChar>) -> Result<[CChar], Errno> {
  guard let resolved = system_realpath(path, nil) else { return .failure(.current) }
  defer { free(resolved) }
  return .success(Array(UnsafeBufferPointer(start: resolved, count: strlen(resolved) + 1)))
}

/// `path` with every symbolic link, `.` and `..` resolved, or `nil` when it
/// cannot be (it does not exist, or a directory on the way cannot be read).
package func canonicalPath(_ path: [UInt8]) -> [UInt8]? {
  let resolved = (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
    resolvingPath($0.baseAddress!)
  }
  guard case .success(let resolved) = resolved else { return nil }
  return resolved.dropLast().map { UInt8(bitPattern: $0) }
}
