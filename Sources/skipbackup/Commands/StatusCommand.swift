import ArgumentParser
import SkipBackupCore
import SkipBackupListing
import SystemPackage
import SkipBackupReport

struct StatusCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Tell whether each item is excluded from backups.",
    discussion: """
      Prints one line an item: [Excluded] or [Included], four spaces, and the path, as \
      tmutil isexcluded does. An item is excluded when it carries a mark itself or when a \
      directory above it does. With --verbose the line also says which marks the item carries \
      and which directory an inherited exclusion comes from. With --format json each item is a \
      JSON object on a line of its own:

        {"path": "a", "excluded": true, "marks": ["xdg"], "inherited_from": null}

      A path that is not valid UTF-8 also gets "path_base64" with its exact bytes. \
      \(MechanismHelp.byDefault).

      Exit status: 0 when every item was read, 1 when any could not be, 64 for a usage error.
      """)

  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @Option(
    help: ArgumentHelp(
      "How to print each item: text, a line as tmutil prints it, or json, one JSON object a line.",
      valueName: "text|json"))
  var format: OutputFormat = .text

  @Flag(
    name: [.customShort("v"), .long],
    help:
      "Also say which marks each item carries and which directory an inherited exclusion comes from."
  )
  var verbose = false

  @OptionGroup var quiet: QuietOption
  @OptionGroup var paths: PathArguments

  func validate() throws {
    try items.validate(paths)
  }

  func run() throws {
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: StatusRun {
    get throws {
      StatusRun(
        items: items.selection(paths), mechanisms: try mechanisms.mechanisms(default: .all),
        format: format, verbose: verbose, quiet: quiet.quiet)
    }
  }
}
