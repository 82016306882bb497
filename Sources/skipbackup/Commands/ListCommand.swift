import ArgumentParser
import SkipBackupCore
import SkipBackupListing
import SystemPackage
import SkipBackupReport

struct ListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "Walk each ROOT and print the excluded items, or the included ones.",
    discussion: """
      With --excluded (the default) prints the topmost excluded items: a marked directory is \
      printed and what is under it is not. With --included prints every item that no mark \
      excludes, symbolic links and other special files among them: the set a backup should hold. \
      Paths are printed byte for byte, one a line, or ended by NUL bytes with --null for \
      xargs -0 and rsync --from0. The walk never follows a symbolic link and never leaves ROOT. \
      \(MechanismHelp.byDefault).

      Exit status: 0 when every item was read, 1 when any could not be, 64 for a usage error.
      """)

  @Flag(help: "Print the topmost excluded items (the default).")
  var excluded = false

  @Flag(help: "Print every item that no mark excludes.")
  var included = false

  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on each ROOT's filesystem: directories where another filesystem is mounted are listed but not entered."
  )
  var oneFileSystem = false

  @Flag(
    name: [.customShort("0"), .customLong("null")],
    help: "End each path with a NUL byte instead of a newline.")
  var null = false

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp("The directories to walk.", valueName: "ROOT"), completion: .directory)
  var roots: [String]

  func validate() throws {
    // Two flags and this refusal, not one enumerated flag: the parser's
    // own words for that ("had already been set") name no way out.
    if excluded && included {
      throw ValidationError("--excluded and --included cannot go together: give one of them.")
    }
  }

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: ListRun {
    get throws {
      ListRun(
        roots: roots.map(RawArguments.path),
        mechanisms: try mechanismOptions.mechanisms(default: .all),
        selection: included ? .included : .excluded,
        nullTerminated: null, oneFileSystem: oneFileSystem, quiet: quiet.quiet)
    }
  }
}
