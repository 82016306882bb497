import SkipBackupSystem
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
    var nearest: FilePath?
    try forEachDirectory(above: path, followSymbolicLinks: followSymbolicLinks) {
      directory throws(SkipBackupError) in
      guard try isMarked(FileItem(borrowingPath: directory)) else { return true }
      nearest = FilePath(platformString: directory)
      return false
    }
    return nearest
  }
}

/// Calls `body` with each directory the item at `path` physically sits in,
/// the nearest first, up to `/`, as a NUL-terminated canonical path, while
/// `body` returns `true`.
///
/// The directories are cut from the canonical path of the item's parent at
/// its slashes: bytes only, with no allocation per directory, which keeps a
/// one-file `check` as cheap as getfattr.
package func forEachDirectory(
  above path: FilePath, followSymbolicLinks: Bool,
  _ body: (UnsafePointer<CChar>) throws(SkipBackupError) -> Bool
) throws(SkipBackupError) {
  guard var directory = try physicalParent(of: path, followSymbolicLinks: followSymbolicLinks)
  else { return }
  while true {
    let goesOn = directory.withUnsafeBufferPointer { directory in
      Result { () throws(SkipBackupError) in try body(directory.baseAddress!) }
    }
    guard try goesOn.get() else { return }
    let length = cStringLength(directory)
    guard length > 1 else { return }
    let slash = directory[..<length].lastIndex(of: 0x2F)!
    directory[Swift.max(slash, 1)] = 0
  }
}

/// The canonical path of the directory that holds the item at `path`, as a
/// NUL-terminated C string, or `nil` for `/`.
///
/// The corresponding C function is `realpath(3)`.
package func physicalParent(
  of path: FilePath, followSymbolicLinks: Bool
) throws(SkipBackupError) -> [CChar]? {
  var item = path.withCString { Array(UnsafeBufferPointer(start: $0, count: cStringLength($0))) }
  while item.count > 1 && item.last == 0x2F { item.removeLast() }
  if item.isEmpty { item = [0x2E] }
  let slash = item.lastIndex(of: 0x2F)
  let last = item[(slash.map { $0 + 1 } ?? 0)...]
  // The item itself has to be resolved when it is followed, or when its name
  // does not name it (`.`, `..`, `/`); otherwise its parent directory is.
  let resolveItem =
    followSymbolicLinks || item == [0x2F] || last.elementsEqual([0x2E])
    || last.elementsEqual([0x2E, 0x2E])
  let target: [CChar]
  if resolveItem {
    target = item
  } else if let slash {
    target = slash == 0 ? [0x2F] : Array(item[..<slash])
  } else {
    target = [0x2E]
  }
  var canonical = try canonicalPath(target + [0], for: path)
  guard resolveItem else { return canonical }
  let length = canonical.count - 1
  guard length > 1 else { return nil }
  canonical[max(canonical[..<length].lastIndex(of: 0x2F)!, 1)] = 0
  return Array(canonical[...cStringLength(canonical)])
}

/// `path` (NUL-terminated) with every symbolic link, `.` and `..` resolved.
private func canonicalPath(_ path: [CChar], for item: FilePath) throws(SkipBackupError) -> [CChar] {
  try path.withUnsafeBufferPointer { resolvingPath($0.baseAddress!) }.get(.realpath, item)
}
