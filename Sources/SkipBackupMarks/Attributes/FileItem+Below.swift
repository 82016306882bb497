import SkipBackupSystem
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FileItem {
  /// Opens the directory `relative` (names below `root`, an open directory,
  /// separated by slashes) from `root`, one name at a time with `O_PATH |
  /// O_DIRECTORY | O_NOFOLLOW`: a directory on the way replaced by a
  /// symbolic link since it was looked at is refused (`ENOTDIR`), never
  /// followed out of the tree. `O_PATH` asks no permission of the
  /// directories themselves: the descriptor serves only for the `*at` calls
  /// below it and as a mount's target. Returns `root` itself when `relative`
  /// is empty; the caller closes any other descriptor. `rootPath` is what
  /// messages name `root`.
  ///
  /// The corresponding C functions are `openat(2)` and `close(2)`.
  package static func openDirectory(_ relative: [UInt8], below root: CInt, rootPath: FilePath)
    throws(SkipBackupError) -> CInt
  {
    let names = relative.split(separator: UInt8(ascii: "/"))
    var directory = root
    do {
      for (index, name) in names.enumerated() {
        let cString = name.map { CChar(bitPattern: $0) } + [0]
        let path = rootPath.appending(bytes: Array(names[...index].joined(separator: [0x2F])))
        let opened = try check(.openat, path) {
          cString.withUnsafeBufferPointer {
            system_openat(
              directory, $0.baseAddress!, MountFlag.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
              0)
          }
        }
        if directory != root { _ = system_close(directory) }
        directory = opened
      }
    } catch {
      if directory != root { _ = system_close(directory) }
      throw error
    }
    return directory
  }

  /// Calls `body` with the item `relative` (names below `root`, separated by
  /// slashes; not empty) as a name in its parent, opened by
  /// ``openDirectory(_:below:rootPath:)``.
  package static func withItem<R>(
    _ relative: [UInt8], below root: CInt, rootPath: FilePath,
    _ body: (FileItem) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    let names = relative.split(separator: UInt8(ascii: "/"))
    let parent = try openDirectory(
      Array(names.dropLast().joined(separator: [0x2F])), below: root, rootPath: rootPath)
    defer { if parent != root { _ = system_close(parent) } }
    return try body(
      FileItem(
        name: FilePath(bytes: names.last.map(Array.init) ?? []),
        in: FileDescriptor(rawValue: parent), displayPath: rootPath.appending(bytes: relative)))
  }
}

extension FilePath {
  /// This path with `relative` (bytes, no leading slash) below it.
  package func appending(bytes relative: [UInt8]) -> FilePath {
    guard !relative.isEmpty else { return self }
    var whole = self.bytes
    if whole.last != UInt8(ascii: "/") { whole.append(UInt8(ascii: "/")) }
    return FilePath(bytes: whole + relative)
  }
}
