import ArgumentParser
import SkipBackupCore
import SkipBackupListing
import SystemPackage

struct CheckCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check",
    abstract: "Exit 0 when every PATH is excluded from backups; print nothing.",
    discussion: """
      For scripts: if skipbackup check "$dir"; then ...; fi. A PATH is excluded when it carries a \
      mark itself or a directory above it does. \(MechanismHelp.byDefault).

      Exit status: 0 when every PATH is excluded, 1 when any is included, 2 on an error \
      (a usage error too), with the error on standard error.
      """)

  @OptionGroup var mechanisms: MechanismOptions

  @Flag(
    name: [.customShort("L"), .long],
    help: "Follow a symbolic link given as a PATH and check its target.")
  var dereference = false

  @Argument(
    help: ArgumentHelp("The files and directories to check.", valueName: "PATH"),
    completion: .file())
  var paths: [String]

  func run() throws {
    throw ExitCode(try engine.exitStatus())
  }

  /// The engine's configuration, from the parsed command line.
  var engine: CheckRun {
    get throws {
      CheckRun(
        paths: paths.map(RawArguments.path),
        mechanisms: try mechanisms.mechanisms(default: Self.defaultMechanisms),
        dereference: dereference)
    }
  }

  /// `check PATH...` with no option, read without the parser: a shell loop
  /// of `check` calls then costs what `getfattr` costs (214,697 instructions
  /// against getfattr's 251,154 under callgrind, docs/performance.md), where
  /// swift-argument-parser's protocol-conformance look-ups alone cost several
  /// times that in the static binary. Only that spelling: any argument that
  /// begins with `-` (other than `-` itself, a file of that name) sends the
  /// whole line to the parser, the one definition of the options, their
  /// defaults and their help.
  static func fastExitStatus(_ arguments: [String]) -> Int32? {
    fastEngine(arguments)?.exitStatus()
  }

  /// The engine's configuration that ``fastExitStatus(_:)`` runs: the
  /// parser's own defaults for every option, which ParsingTests compare.
  static func fastEngine(_ arguments: [String]) -> CheckRun? {
    guard arguments.first == "check", arguments.count > 1 else { return nil }
    let given = arguments.dropFirst()
    guard given.allSatisfy({ $0 == "-" || !$0.hasPrefix("-") }) else { return nil }
    return CheckRun(
      paths: given.map(RawArguments.path), mechanisms: defaultMechanisms, dereference: false)
  }

  /// What `check` reads without `-m`.
  static let defaultMechanisms = MechanismSet.all
}
