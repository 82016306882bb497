import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `path` (NUL-terminated) with every symbolic link, `.` and `..` resolved,
/// NUL-terminated: the one place that calls `realpath(3)`.
package func resolvingPath(_ path: UnsafePointer<CChar>) -> Result<[CChar], Errno> {
  valueOrErrno { system_realpath(path, nil) }.map { resolved in
    defer { system_free(resolved) }
    return Array(UnsafeBufferPointer(start: resolved, count: cStringLength(resolved) + 1))
  }
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

/// What follows `directory/` in `path`, when `path` is strictly below
/// `directory`, by whole components: `a/b` is below `a`, `ab` is not, and
/// everything absolute is below `/`. `nil` for `directory` itself and for
/// anything outside it. Paths are compared as given, not resolved.
package func path(_ path: ArraySlice<UInt8>, below directory: some BidirectionalCollection<UInt8>)
  -> ArraySlice<UInt8>?
{
  let slash = UInt8(ascii: "/")
  let prefix = directory.last == slash ? directory.dropLast() : directory[...]
  guard path.count > prefix.count + 1, path.starts(with: prefix),
    path[path.startIndex + prefix.count] == slash
  else { return nil }
  return path[(path.startIndex + prefix.count + 1)...]
}

/// ``path(_:below:)`` for a directory held as an array: the generic one,
/// called across modules, looked up its slice type's metadata at each call,
/// and a run over 1,000 nested subvolumes compares a million pairs (0.4 s
/// of `run -- true`'s user time).
package func path(_ path: ArraySlice<UInt8>, below directory: [UInt8]) -> ArraySlice<UInt8>? {
  let slash = UInt8(ascii: "/")
  let length = directory.last == slash ? directory.count - 1 : directory.count
  guard path.count > length + 1, path[path.startIndex + length] == slash,
    path.prefix(length).elementsEqual(directory.prefix(length))
  else { return nil }
  return path[(path.startIndex + length + 1)...]
}

/// Whether `path` is `directory` or below it (``path(_:below:)``).
package func path(
  _ path: ArraySlice<UInt8>, isOrIsBelow directory: some BidirectionalCollection<UInt8>
)
  -> Bool
{
  path.elementsEqual(directory) || SkipBackupSystem.path(path, below: directory) != nil
}
