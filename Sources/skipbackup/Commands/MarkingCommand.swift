import ArgumentParser
import SkipBackupCore
import SkipBackupMarking
import SkipBackupReport

/// `mark` or `clear`: the command's help, its action and the mechanisms it
/// acts on without `-m`; the options and the run are the same.
protocol MarkingCommand: ParsableCommand, DryRunHelp {
  static var action: MarkingRun.Action { get }
  static var defaultMechanisms: MechanismSet { get }
  var options: MarkingOptions<Self> { get }
  /// The form legacy and resource marks are written in: `mark --form`.
  var form: MarkForm { get }
}

extension MarkingCommand {
  static var dryRunHelp: String { "Show what would be \(action.past), and change nothing." }

  func run() throws {
    let run = MarkingRun(
      action: Self.action,
      mechanisms: try options.mechanisms.mechanisms(default: Self.defaultMechanisms),
      items: options.items.selection(options.paths), verbose: options.reporting.verbose,
      quiet: options.reporting.quiet, dryRun: options.dryRun, form: form)
    try engine { () throws(ReportedFailure) in try run.run() }
  }
}

/// The options of `mark` and `clear`, in the order their help lists them.
struct MarkingOptions<Command: MarkingCommand>: ParsableArguments {
  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @OptionGroup var dryRunOption: DryRunOption<Command>
  @OptionGroup var reporting: ReportingOptions
  @OptionGroup var paths: PathArguments

  var dryRun: Bool { dryRunOption.dryRun }

  func validate() throws {
    try items.validate(paths)
  }
}
