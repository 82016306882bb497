import ArgumentParser
import SkipBackupCore

/// `-x`/`--one-file-system`, for every command that walks a tree. What a
/// command does at a mount point differs (list prints it, du leaves it out),
/// so its help comes from the command: `Command.oneFileSystemHelp`.
///
/// Generic over the command for that one string: swift-argument-parser
/// takes a flag's help from its declaration, so the alternative is the
/// flag declared again in each of the five commands that walk, and help
/// that can drift between them.
struct OneFileSystemOption<Command: MountPointHelp>: ParsableArguments {
  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help: ArgumentHelp(Command.oneFileSystemHelp))
  var oneFileSystem = false
}

/// The help of a command's `-x`: what it does at a mount point.
protocol MountPointHelp {
  static var oneFileSystemHelp: String { get }
}

/// `-q`/`--quiet`, for every command that can show a progress line.
struct QuietOption: ParsableArguments {
  @Flag(name: [.customShort("q"), .long], help: "Show no progress line on a long run.")
  var quiet = false
}

/// `-m` and `-x` of the commands that walk each ROOT whole (list, export,
/// du, sweep), one after the other as their help lists them: which marks
/// count, and whether the walk stays on a ROOT's filesystem.
struct TreeOptions<Command: MountPointHelp>: ParsableArguments {
  @OptionGroup var mechanismOptions: MechanismOptions
  @OptionGroup var mountPoints: OneFileSystemOption<Command>

  /// The chosen mechanisms, or `defaultSet` when `-m` was not given.
  func mechanisms(default defaultSet: MechanismSet) throws -> MechanismSet {
    try mechanismOptions.mechanisms(default: defaultSet)
  }

  var oneFileSystem: Bool { mountPoints.oneFileSystem }
}
