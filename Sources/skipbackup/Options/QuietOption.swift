import ArgumentParser

/// `-q`/`--quiet`, for every command that can show a progress line.
struct QuietOption: ParsableArguments {
  @Flag(name: [.customShort("q"), .long], help: "Show no progress line on a long run.")
  var quiet = false
}
