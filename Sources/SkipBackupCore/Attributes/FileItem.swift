import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A file system item as the calls reach it: a path from the working
/// directory, a name inside an open directory, or an open descriptor.
///
/// A name inside an open directory is how a tree walk reaches its entries:
/// relative to the directory's descriptor, so that no path is resolved again
/// and no path is too long. Such an item never follows a symbolic link.
public struct FileItem: Sendable {
  internal enum Base: Sendable {
    case workingDirectory
    case directory(CInt)
    case descriptor(CInt)
  }

  internal let base: Base
  /// The path the calls use: from the working directory or from the open
  /// directory; empty for a descriptor.
  public let path: FilePath
  /// Whether a symbolic link at the end of ``path`` is followed.
  public let followsSymbolicLinks: Bool
  /// The path errors name.
  public let displayPath: FilePath

  /// The item at `path`. With `followSymbolicLinks`, a symbolic link stands
  /// for its target; without, for itself.
  public init(path: FilePath, followSymbolicLinks: Bool = true) {
    self.base = .workingDirectory
    self.path = path
    self.followsSymbolicLinks = followSymbolicLinks
    self.displayPath = path
  }

  /// The file open as `descriptor`; `displayPath` is what errors name.
  public init(descriptor: FileDescriptor, displayPath: FilePath) {
    self.base = .descriptor(descriptor.rawValue)
    self.path = FilePath()
    self.followsSymbolicLinks = true
    self.displayPath = displayPath
  }

  /// The entry `name` in the open `directory`, never following a symbolic
  /// link; `displayPath` is what errors name (`name` when not given).
  public init(name: FilePath, in directory: FileDescriptor, displayPath: FilePath? = nil) {
    self.base = .directory(directory.rawValue)
    self.path = name
    self.followsSymbolicLinks = false
    self.displayPath = displayPath ?? name
  }

  /// The same item with another path for messages.
  package func withDisplayPath(_ displayPath: FilePath) -> FileItem {
    FileItem(
      base: base, path: path, followsSymbolicLinks: followsSymbolicLinks,
      displayPath: displayPath)
  }

  private init(base: Base, path: FilePath, followsSymbolicLinks: Bool, displayPath: FilePath) {
    self.base = base
    self.path = path
    self.followsSymbolicLinks = followsSymbolicLinks
    self.displayPath = displayPath
  }

  /// The directory descriptor and the flags of the `*at` calls that reach this item.
  internal func withAtArguments<R>(
    _ body: (_ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt) -> R
  ) -> R {
    let noFollow = followsSymbolicLinks ? 0 : CXATTR_AT_SYMLINK_NOFOLLOW
    switch base {
    case .workingDirectory:
      return path.withPlatformString { body(CXATTR_AT_FDCWD, $0, noFollow) }
    case .directory(let directory):
      return path.withPlatformString { body(directory, $0, noFollow) }
    case .descriptor(let descriptor):
      return body(descriptor, "", CXATTR_AT_EMPTY_PATH)
    }
  }

  /// The item's metadata, as `fstatat(2)` gives it.
  ///
  /// The corresponding C function is `fstatat(2)`.
  package func status() throws(SkipBackupError) -> stat {
    var buffer = stat()
    let result = withAtArguments { directory, path, flags in
      valueOrErrno { system_fstatat(directory, path, &buffer, flags) }
    }
    _ = try result.get("fstatat", self)
    return buffer
  }

  /// The item's type, or `nil` when it cannot be looked up; for messages.
  internal func typeIfKnown() -> FileType? {
    var buffer = stat()
    let result = withAtArguments { directory, path, flags in
      valueOrErrno { system_fstatat(directory, path, &buffer, flags) }
    }
    guard case .success = result else { return nil }
    return FileType(rawValue: buffer.st_mode & S_IFMT)
  }
}

extension FileItem {
  /// Opens the item with `flags` (a descriptor item is used as it is) and
  /// calls `body` with the descriptor, closing it afterwards.
  ///
  /// The corresponding C function is `openat(2)`.
  package func withOpenDescriptor<R>(
    _ flags: CInt, _ body: (CInt) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    if case .descriptor(let descriptor) = base { return try body(descriptor) }
    let noFollow = followsSymbolicLinks ? 0 : O_NOFOLLOW
    let opened = withAtArguments { directory, path, _ in
      valueOrErrno { system_openat(directory, path, flags | noFollow | O_CLOEXEC, 0) }
    }
    let descriptor = try opened.get("openat", self)
    defer { _ = system_close(descriptor) }
    return try body(descriptor)
  }
}
