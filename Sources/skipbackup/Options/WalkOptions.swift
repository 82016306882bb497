import ArgumentParser

/// `-x`/`--one-file-system`, for every command that walks a tree. What a
/// command does at a mount point differs (list prints it, du leaves it out),
/// so its help comes from the command: `Command.oneFileSystemHelp`.
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
