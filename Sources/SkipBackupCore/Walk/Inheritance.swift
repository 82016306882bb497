import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Whether an item is kept out of backups, and why: its own marks, and the
/// nearest marked directory above it.
///
/// A mark on a directory covers everything below it (Apple's data storage
/// guidelines: "setting this property on the directory prevents all content
/// in the directory ... from being backed up").
public struct ExclusionStatus: Hashable, Sendable {
  /// The mechanisms whose mark the item carries itself.
  public var marks: MechanismSet
  /// The nearest directory above the item that carries a mark, if any.
  public var inheritedFrom: FilePath?

  public init(marks: MechanismSet, inheritedFrom: FilePath?) {
    self.marks = marks
    self.inheritedFrom = inheritedFrom
  }

  /// Whether the item is excluded: marked itself or by a directory above it.
  public var isExcluded: Bool { !marks.isEmpty || inheritedFrom != nil }
}

extension MechanismSet {
  /// The status of the item at `path`: its own marks and the nearest marked
  /// directory above it.
  ///
  /// The directories above are those the item physically sits in, found from
  /// the canonical path of its parent, up to `/`.
  public func status(
    of path: FilePath, followSymbolicLinks: Bool = false
  ) throws(SkipBackupError) -> ExclusionStatus {
    let marks = try self.marks(on: FileItem(path: path, followSymbolicLinks: followSymbolicLinks))
    let above = try markedAncestor(of: path, followSymbolicLinks: followSymbolicLinks)
    return ExclusionStatus(marks: marks, inheritedFrom: above)
  }

  /// The nearest directory above the item at `path` that carries one of these
  /// marks, or `nil` when none does.
  public func markedAncestor(
    of path: FilePath, followSymbolicLinks: Bool = false
  ) throws(SkipBackupError) -> FilePath? {
    var directory = try physicalParent(of: path, followSymbolicLinks: followSymbolicLinks)
    while let current = directory {
      if try isMarked(FileItem(path: current, followSymbolicLinks: false)) { return current }
      directory = current.isRoot ? nil : current.removingLastComponent()
    }
    return nil
  }
}

/// The canonical path of the directory that holds the item at `path`, or
/// `nil` for `/`.
///
/// The corresponding C function is `realpath(3)`.
package func physicalParent(
  of path: FilePath, followSymbolicLinks: Bool
) throws(SkipBackupError) -> FilePath? {
  let lexical = path.lexicallyNormalized()
  let last = lexical.lastComponent
  // The item itself has to be resolved when it is followed, or when its name
  // does not name it (`.`, `..`, `/`); otherwise its parent directory is.
  let resolveItem = followSymbolicLinks || last == nil || last!.kind != .regular
  let target = resolveItem ? lexical : lexical.removingLastComponent()
  let resolved = try canonicalPath(target.isEmpty ? "." : target, for: path)
  if resolveItem {
    return resolved.isRoot ? nil : resolved.removingLastComponent()
  }
  return resolved
}

/// `path` with every symbolic link, `.` and `..` resolved.
private func canonicalPath(_ path: FilePath, for item: FilePath) throws(SkipBackupError) -> FilePath
{
  let resolved: Result<FilePath, Errno> = path.withPlatformString { pointer in
    guard let canonical = system_realpath(pointer, nil) else {
      return .failure(Errno(rawValue: errno))
    }
    defer { free(canonical) }
    return .success(FilePath(platformString: canonical))
  }
  switch resolved {
  case .success(let path): return path
  case .failure(let errno): throw SkipBackupError(errno: errno, call: "realpath", path: item)
  }
}

extension FilePath {
  /// Whether the path is `/` and nothing more.
  fileprivate var isRoot: Bool { root != nil && components.isEmpty }
}
