import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The path rewriting that restic (Go) and borg (Python) do to a ROOT
/// argument before they walk it, byte for byte, so that an export walks the
/// same tree and names it the same way. Both rewrite lexically: `a/..` is
/// dropped even when `a` is a symbolic link.
package enum LexicalPath {
  private static let slash = UInt8(ascii: "/")
  private static let dot: [UInt8] = [UInt8(ascii: ".")]
  private static let dotDot: [UInt8] = [UInt8(ascii: "."), UInt8(ascii: ".")]

  /// Go's `path/filepath.Clean` on Unix: one slash between components, no
  /// `.`, `..` folded into the component before it, `/..` is `/`.
  package static func goClean(_ path: [UInt8]) -> [UInt8] {
    guard !path.isEmpty else { return dot }
    let rooted = path.first == slash
    var components: [ArraySlice<UInt8>] = []
    for component in path.split(separator: slash) {
      if component.elementsEqual(dot) { continue }
      if component.elementsEqual(dotDot) {
        if let last = components.last, !last.elementsEqual(dotDot) {
          components.removeLast()
          continue
        }
        if rooted { continue }
      }
      components.append(component)
    }
    let joined = Array(components.joined(separator: [slash]))
    if rooted { return [slash] + joined }
    return joined.isEmpty ? dot : joined
  }

  /// Go's `path/filepath.Abs` on Unix: `path` cleaned, after the working
  /// directory as `os.Getwd` gives it when `path` is relative.
  package static func goAbsolute(_ path: [UInt8]) -> [UInt8]? {
    if path.first == slash { return goClean(path) }
    guard let directory = goWorkingDirectory() else { return nil }
    return goClean(directory + [slash] + path)
  }

  /// Go's `os.Getwd` on Linux: `$PWD` when it is absolute and names the
  /// working directory (the same device and inode as `.`), else `getcwd(3)`.
  package static func goWorkingDirectory() -> [UInt8]? {
    guard let dot = try? FileItem(path: ".", followSymbolicLinks: true).status() else {
      return nil
    }
    if let pwd = environmentValue("PWD"), pwd.first == slash {
      let named = try? FileItem(path: FilePath(bytes: pwd), followSymbolicLinks: true).status()
      if let named, named.st_dev == dot.st_dev, named.st_ino == dot.st_ino { return pwd }
    }
    return (try? currentDirectory())?.bytes
  }

  /// Python's `posixpath.normpath`: like Go's `Clean`, except that exactly
  /// two leading slashes stay two.
  package static func pythonNormalized(_ path: [UInt8]) -> [UInt8] {
    guard !path.isEmpty else { return dot }
    var initialSlashes = path.first == slash ? 1 : 0
    if path.starts(with: [slash, slash]) && !path.starts(with: [slash, slash, slash]) {
      initialSlashes = 2
    }
    var components: [ArraySlice<UInt8>] = []
    for component in path.split(separator: slash) {
      if component.elementsEqual(dot) { continue }
      if !component.elementsEqual(dotDot) || (initialSlashes == 0 && components.isEmpty)
        || (components.last?.elementsEqual(dotDot) ?? false)
      {
        components.append(component)
      } else if !components.isEmpty {
        components.removeLast()
      }
    }
    let joined =
      Array(repeating: slash, count: initialSlashes)
      + Array(components.joined(separator: [slash]))
    return joined.isEmpty ? dot : joined
  }

  /// Python's `os.path.join(directory, name)` for a relative `name`.
  package static func pythonJoined(_ directory: [UInt8], _ name: [UInt8]) -> [UInt8] {
    if directory.isEmpty || directory.last == slash { return directory + name }
    return directory + [slash] + name
  }
}
