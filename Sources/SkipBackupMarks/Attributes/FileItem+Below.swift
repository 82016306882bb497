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
  /// below it and as a mount's target. `nil` when `relative` is empty: the
  /// directory is `root` itself. `rootPath` is what messages name `root`.
  ///
  /// The corresponding C function is `openat(2)`.
  private static func directory(
    _ relative: [UInt8], below root: CInt, rootPath: FilePath
  ) throws(SkipBackupError) -> Descriptor? {
    let names = relative.split(separator: UInt8(ascii: "/"))
    var directory: Descriptor? = nil
    for (index, name) in names.enumerated() {
      let cString = name.map { CChar(bitPattern: $0) } + [0]
      let path = rootPath.appending(bytes: Array(names[...index].joined(separator: [0x2F])))
      let base = directory?.rawValue ?? root
      try cString.withUnsafeBufferPointer { name in
        Result { () throws(SkipBackupError) in
          directory = try Descriptor.open(
            name.baseAddress!, in: base, [.pathOnly, .directory, .noFollow], reporting: { path })
        }
      }.get()
    }
    return directory
  }

  /// Calls `body` with the item `relative` (names below `root`, separated by
  /// slashes; not empty) as a name in its parent, opened by
  /// ``directory(_:below:rootPath:)``.
  package static func withItem<R>(
    _ relative: [UInt8], below root: CInt, rootPath: FilePath,
    _ body: (FileItem) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    let names = relative.split(separator: UInt8(ascii: "/"))
    var parent = try directory(
      Array(names.dropLast().joined(separator: [0x2F])), below: root, rootPath: rootPath)
    let number = parent?.rawValue
    defer { parent = nil }
    return try body(
      FileItem(
        name: FilePath(bytes: names.last.map(Array.init) ?? []),
        in: FileDescriptor(rawValue: number ?? root),
        displayPath: rootPath.appending(bytes: relative)))
  }
}
