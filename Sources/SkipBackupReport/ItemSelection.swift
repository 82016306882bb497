import SkipBackupCore
import SystemPackage

/// Which items a command acts on and how it goes through them: the PATHs,
/// more read from a `--files-from` list, and whether each is walked (`-R`),
/// followed when it is a link (`-L`), and kept to its filesystem (`-x`).
/// What mark, clear and status are given: plain values the executable reads
/// from the command line.
package struct ItemSelection: Sendable, Equatable {
  /// The PATH arguments, in order.
  package var paths: [FilePath]
  /// A file of more PATHs (`-` for standard input), read after `paths`.
  package var filesFrom: FilePath?
  /// Whether the `filesFrom` list separates paths with NUL bytes (`-0`)
  /// rather than newlines.
  package var nullSeparated = false
  /// Whether each directory's contents are acted on too (`-R`).
  package var recursive = false
  /// Whether a symbolic link given as a PATH is followed (`-L`).
  package var dereference = false
  /// Whether a recursive walk stays on each PATH's filesystem (`-x`).
  package var oneFileSystem = false

  package init(
    paths: [FilePath], filesFrom: FilePath? = nil, nullSeparated: Bool = false,
    recursive: Bool = false, dereference: Bool = false, oneFileSystem: Bool = false
  ) {
    self.paths = paths
    self.filesFrom = filesFrom
    self.nullSeparated = nullSeparated
    self.recursive = recursive
    self.dereference = dereference
    self.oneFileSystem = oneFileSystem
  }

  /// The walk's options for a recursive run.
  package var walkOptions: TreeWalkOptions {
    TreeWalkOptions(oneFileSystem: oneFileSystem, followRootSymbolicLink: dereference)
  }

  /// Calls `body` with each PATH, then each path of the `filesFrom` list as
  /// it is read. A line that no path can be is reported, and the others
  /// are still acted on.
  package func forEachPath(_ diagnostics: Diagnostics, _ body: (FilePath) -> Void) {
    for path in paths { body(path) }
    guard let file = filesFrom else { return }
    do {
      var list = try PathList(file: file, separator: nullSeparated ? 0 : UInt8(ascii: "\n"))
      while let record = try list.next() {
        switch record {
        case .path(let path):
          body(path)
        case .nulInLine(let line):
          diagnostics.report(
            "\(file.escapedDescription): line \(line) holds a NUL byte, which no path can hold; "
              + "nothing on that line is acted on")
        case .tooLong(let record, let length):
          diagnostics.report(
            "\(file.escapedDescription): \(nullSeparated ? "record" : "line") \(record) is "
              + "\(length) bytes, longer than any path (PATH_MAX, \(PathList.longestPath) with "
              + "its NUL); nothing on it is acted on")
        }
      }
    } catch {
      diagnostics.report("\(file.escapedDescription): \(error.description.lowercased())")
    }
  }
}
