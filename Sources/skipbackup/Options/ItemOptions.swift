import ArgumentParser
import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// How a command finds its items and goes through them: `--files-from`,
/// `-R`, `-L`, `-x`. The PATH arguments are ``PathArguments``, declared last
/// so that the synopsis ends with them.
struct ItemOptions: ParsableArguments {
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

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "With --recursive, stay on each PATH's filesystem: directories where another filesystem is mounted are not entered."
  )
  var oneFileSystem = false

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

  /// Fails unless there is at least one PATH or a `--files-from` list.
  func validate(_ paths: PathArguments) throws {
    if paths.paths.isEmpty && filesFrom == nil {
      throw ValidationError("Give at least one PATH, or --files-from FILE.")
    }
  }

  /// The items these options and `paths` choose, for the engine.
  func selection(_ paths: PathArguments) -> ItemSelection {
    ItemSelection(
      paths: paths.paths.map(RawArguments.path), filesFrom: filesFrom.map(RawArguments.path),
      nullSeparated: null, recursive: recursive, dereference: dereference,
      oneFileSystem: oneFileSystem)
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
