import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FileItem {
  /// Calls `body` with the item `relative` (names below `root`, separated by
  /// slashes; not empty) as a name in its open parent. The parent is opened
  /// from `root`, an open directory, one name at a time with `O_DIRECTORY |
  /// O_NOFOLLOW`: a directory on the way replaced by a symbolic link since
  /// the walk is refused (`ENOTDIR`), never followed out of the tree.
  /// `O_PATH`, which asks no permission of the directory itself: the
  /// descriptor serves only for the `*at` calls below it. `rootPath` is what
  /// messages name `root`.
  ///
  /// The corresponding C functions are `openat(2)` and `close(2)`.
  static func withItem<R>(
    _ relative: [UInt8], below root: CInt, rootPath: FilePath,
    _ body: (FileItem) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    let names = relative.split(separator: UInt8(ascii: "/"))
    var parent = root
    defer { if parent != root { _ = system_close(parent) } }
    for (index, name) in names.dropLast().enumerated() {
      let cString = name.map { CChar(bitPattern: $0) } + [0]
      let path = rootPath.appending(bytes: Array(names[...index].joined(separator: [0x2F])))
      let opened = try check(.openat, path) {
        cString.withUnsafeBufferPointer {
          system_openat(
            parent, $0.baseAddress!, MountFlag.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        }
      }
      if parent != root { _ = system_close(parent) }
      parent = opened
    }
    return try body(
      FileItem(
        name: FilePath(bytes: names.last.map(Array.init) ?? []),
        in: FileDescriptor(rawValue: parent), displayPath: rootPath.appending(bytes: relative)))
  }
}

extension FilePath {
  /// This path with `relative` (bytes, no leading slash) below it.
  func appending(bytes relative: [UInt8]) -> FilePath {
    guard !relative.isEmpty else { return self }
    var whole = self.bytes
    if whole.last != UInt8(ascii: "/") { whole.append(UInt8(ascii: "/")) }
    return FilePath(bytes: whole + relative)
  }
}
