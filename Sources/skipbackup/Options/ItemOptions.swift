import ArgumentParser
import SkipBackupCore
import SystemPackage

/// How a command finds its items and goes through them: `--files-from`,
/// `-R`, `-L`, `-x`. The PATH arguments are ``PathArguments``, declared last
/// so that the synopsis ends with them.
struct ItemOptions: ParsableArguments, MountPointHelp {
  @Flag(
    name: [.customShort("R"), .long],
    help:
      "Act on each directory's contents too, all the way down. Symbolic links met on the way are never followed."
  )
  var recursive = false

  @Flag(
    name: [.customShort("L"), .long],
    help:
      "Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links."
  )
  var dereference = false

  static let oneFileSystemHelp =
    "With --recursive, stay on each PATH's filesystem: directories where another filesystem is mounted are not entered."
  @OptionGroup var oneFileSystemOption: OneFileSystemOption<ItemOptions>

  @Option(
    name: .customLong("files-from"),
    help: ArgumentHelp(
      "Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.",
      valueName: "FILE"),
    completion: .file())
  var filesFrom: String?

  @Flag(
    name: [.customShort("0"), .customLong("null")],
    help: "Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.")
  var null = false

  mutating func validate() throws {
    if null && filesFrom == nil {
      throw ValidationError("--null describes the --files-from FILE; give --files-from too.")
    }
  }

  var oneFileSystem: Bool { oneFileSystemOption.oneFileSystem }

  var walkOptions: TreeWalkOptions {
    TreeWalkOptions(oneFileSystem: oneFileSystem, followRootSymbolicLink: dereference)
  }

  /// Fails unless there is at least one PATH or a `--files-from` list.
  func validate(_ paths: PathArguments) throws {
    if paths.paths.isEmpty && filesFrom == nil {
      throw ValidationError("Give at least one PATH, or --files-from FILE.")
    }
  }

  /// Calls `body` with each PATH argument, then each path of `--files-from`,
  /// as they are read.
  func forEachPath(
    _ paths: PathArguments, _ diagnostics: Diagnostics, _ body: (FilePath) -> Void
  ) {
    for path in paths.paths { body(RawArguments.path(path)) }
    guard let filesFrom else { return }
    let file = RawArguments.path(filesFrom)
    do {
      var list = try PathList(file: file, separator: null ? 0 : UInt8(ascii: "\n"))
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
            "\(file.escapedDescription): \(null ? "record" : "line") \(record) is "
              + "\(length) bytes, longer than any path (PATH_MAX, \(PathList.longestPath) with "
              + "its NUL); nothing on it is acted on")
        }
      }
    } catch {
      diagnostics.report("\(file.escapedDescription): \(error.description.lowercased())")
    }
  }
}

/// The PATH arguments of mark, clear and status.
struct PathArguments: ParsableArguments {
  @Argument(
    help: ArgumentHelp("The files and directories to act on.", valueName: "PATH"),
    completion: .file())
  var paths: [String] = []
}

/// `-v` and `-q` of mark and clear.
struct ReportingOptions: ParsableArguments {
  @Flag(
    name: [.customShort("v"), .long],
    help:
      "Print each item that changes, and end with a summary of the counts on standard error.")
  var verbose = false

  @OptionGroup var quietOption: QuietOption

  var quiet: Bool { quietOption.quiet }

  mutating func validate() throws {
    if verbose && quiet { throw ValidationError("--verbose and --quiet cannot go together.") }
  }
}
