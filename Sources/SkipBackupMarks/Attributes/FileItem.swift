import SkipBackupSystem
import CLinux
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
public struct FileItem: @unchecked Sendable {
  @usableFromInline internal enum Base: Sendable {
    case workingDirectory
    case directory(CInt)
    case descriptor(CInt)
  }

  /// How the path is held: as a path, or as a name borrowed from a tree
  /// walk's buffer, which saves an allocation per entry of a walk. A borrowed
  /// name is made only by the walk and is valid only during its visit.
  @usableFromInline internal enum Name {
    case path(FilePath)
    case borrowed(UnsafePointer<CChar>)
  }

  @usableFromInline internal let base: Base
  @usableFromInline internal let name: Name
  /// Whether a symbolic link at the end of ``path`` is followed.
  public let followsSymbolicLinks: Bool
  @usableFromInline internal let shownPath: FilePath?

  /// The path the calls use: from the working directory or from the open
  /// directory; empty for a descriptor.
  public var path: FilePath {
    switch name {
    case .path(let path): path
    case .borrowed(let name): FilePath(platformString: name)
    }
  }

  /// The path errors name.
  public var displayPath: FilePath { shownPath ?? path }

  /// The item at `path`. With `followSymbolicLinks`, a symbolic link stands
  /// for its target; without, for itself.
  public init(path: FilePath, followSymbolicLinks: Bool = true) {
    self.init(base: .workingDirectory, name: .path(path), follows: followSymbolicLinks, shown: nil)
  }

  /// The file open as `descriptor`; `displayPath` is what errors name.
  public init(descriptor: FileDescriptor, displayPath: FilePath) {
    self.init(
      base: .descriptor(descriptor.rawValue), name: .path(FilePath()), follows: true,
      shown: displayPath)
  }

  /// The entry `name` in the open `directory`, never following a symbolic
  /// link; `displayPath` is what errors name (`name` when not given).
  public init(name: FilePath, in directory: FileDescriptor, displayPath: FilePath? = nil) {
    self.init(
      base: .directory(directory.rawValue), name: .path(name), follows: false, shown: displayPath)
  }

  /// A tree walk's entry: `name` points into the walk's buffer and must
  /// outlive every use of the item.
  @inlinable
  package init(borrowingEntry name: UnsafePointer<CChar>, in directory: CInt) {
    self.init(base: .directory(directory), name: .borrowed(name), follows: false, shown: nil)
  }

  /// The item at the C string `path`, which must outlive every use of the
  /// item.
  @inlinable
  package init(borrowingPath path: UnsafePointer<CChar>, followSymbolicLinks: Bool = false) {
    self.init(
      base: .workingDirectory, name: .borrowed(path), follows: followSymbolicLinks, shown: nil)
  }

  /// The same item with another path for messages.
  package func withDisplayPath(_ displayPath: FilePath) -> FileItem {
    FileItem(base: base, name: name, follows: followsSymbolicLinks, shown: displayPath)
  }

  @inlinable
  internal init(base: Base, name: Name, follows: Bool, shown: FilePath?) {
    self.base = base
    self.name = name
    self.followsSymbolicLinks = follows
    self.shownPath = shown
  }

  /// Calls `body` with the path as a C string.
  @inline(__always)
  internal func withPathPointer<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
    switch name {
    case .path(let path): path.withCString(body)
    case .borrowed(let name): body(name)
    }
  }

  /// The directory descriptor and the flags of the `*at` calls that reach this item.
  package func withAtArguments<R>(
    _ body: (_ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt) -> R
  ) -> R {
    let noFollow = followsSymbolicLinks ? 0 : CLINUX_AT_SYMLINK_NOFOLLOW
    switch base {
    case .workingDirectory:
      return withPathPointer { body(CLINUX_AT_FDCWD, $0, noFollow) }
    case .directory(let directory):
      return withPathPointer { body(directory, $0, noFollow) }
    case .descriptor(let descriptor):
      return body(descriptor, "", CLINUX_AT_EMPTY_PATH)
    }
  }

  /// The item's metadata, as `fstatat(2)` gives it.
  ///
  /// The corresponding C function is `fstatat(2)`.
  package func status() throws(SkipBackupError) -> stat {
    try withAtArguments { directory, path, flags in
      Result { () throws(SkipBackupError) in
        try Descriptor.status(
          of: path, in: directory, AtFlags(rawValue: flags), reporting: { displayPath })
      }
    }.get(explaining: self)
  }
}

extension FileItem {
  /// Opens the item with `flags`, never following a link the item does
  /// not follow, as a descriptor that closes itself; an item that is a
  /// descriptor is duplicated (`dup(2)`), so that the caller's stays open.
  ///
  /// The corresponding C function is `openat(2)`.
  package func open(_ flags: OpenFlags) throws(SkipBackupError) -> Descriptor {
    if case .descriptor(let descriptor) = base {
      return try Descriptor(duplicating: descriptor, path: displayPath)
    }
    let flags = followsSymbolicLinks ? flags : flags.union(.noFollow)
    var opened: Descriptor? = nil
    try withAtArguments { directory, path, _ in
      Result { () throws(SkipBackupError) in
        opened = try Descriptor.open(path, in: directory, flags, reporting: { displayPath })
      }
    }.get(explaining: self)
    return opened.take()!
  }

  /// Opens the item with `flags` (a descriptor item is used as it is) and
  /// calls `body` with the descriptor's number: for the view's callers,
  /// whose mounts and watch hold descriptors as numbers.
  ///
  /// The corresponding C function is `openat(2)`.
  package func withOpenDescriptor<R>(
    _ flags: CInt, _ body: (CInt) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    if case .descriptor(let descriptor) = base { return try body(descriptor) }
    let opened = try open(OpenFlags(rawValue: flags))
    return try body(opened.rawValue)
  }
}

extension Result where Failure == SkipBackupError {
  /// The value, or the error with what a look at the filesystem finds
  /// where it lacks what the call needs (user attributes, inode flags, a
  /// way to write): made after a failure only.
  @inline(__always)
  package func get(explaining item: FileItem) throws(SkipBackupError) -> Success {
    switch self {
    case .success(let value): return value
    case .failure(let error): throw item.explained(error)
    }
  }
}

extension FileItem {
  /// `error` of a call on this item, with the filesystem it names where
  /// it lacks what the call needs.
  package func explained(_ error: SkipBackupError) -> SkipBackupError {
    var explained = error
    if let errno = error.errno { explained.finding = filesystemFinding(of: errno) }
    return explained
  }
}

extension Result where Failure == Errno {
  /// The value, or the errno as a `SkipBackupError` about `item`.
  @inline(__always)
  package func get(
    _ call: SystemCall, _ item: FileItem, _ attribute: AttributeName? = nil
  ) throws(SkipBackupError) -> Success {
    // The path is made only for a failure: a FilePath normalises its bytes,
    // which costs 11.5 % of du's instructions when made for every successful
    // call (docs/performance.md).
    guard case .success(let value) = self else {
      do throws(SkipBackupError) {
        return try get(call, item.displayPath, attribute: attribute)
      } catch {
        throw item.explained(error)
      }
    }
    return value
  }
}

extension FileItem {
  /// Whether the directory this item is holds an entry called `name`
  /// (a symbolic link counts, and is not followed).
  ///
  /// The corresponding C function is `fstatat(2)`.
  package func holdsEntry(named name: [UInt8]) -> Bool {
    withPathPointer { path in
      var inside = bytes(ofCString: path)
      if !inside.isEmpty { inside.append(UInt8(ascii: "/")) }
      inside += name
      inside.append(0)
      return inside.withUnsafeBufferPointer { bytes in
        withAtArguments { directory, _, _ in
          let entry = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
          return
            (try? Descriptor.status(
              of: entry, in: directory, .symbolicLinkNoFollow, reporting: { displayPath })) != nil
        }
      }
    }
  }
}
