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
        paths: paths.map(RawArguments.path), mechanisms: try mechanisms.mechanisms(default: .all),
        dereference: dereference)
    }
  }

  /// The same command read straight from the arguments, for the common
  /// spellings, without the parser: a shell loop of `check` calls then costs
  /// what `getfattr` costs (214,697 instructions against getfattr's 251,154
  /// under callgrind, docs/performance.md), where swift-argument-parser's
  /// protocol-conformance look-ups alone cost several times that in the
  /// static binary. `nil` sends anything else (help, unknown options,
  /// mistakes) to the parser, which stays the one definition of the options
  /// and their help.
  static func fastExitStatus(_ arguments: [String]) -> Int32? {
    fastEngine(arguments)?.exitStatus()
  }

  /// The engine's configuration that ``fastExitStatus(_:)`` runs, read
  /// without the parser; `nil` where the parser must read the arguments.
  static func fastEngine(_ arguments: [String]) -> CheckRun? {
    guard arguments.first == "check" else { return nil }
    var dereference = false
    var mechanismNames: [String] = []
    var paths: [FilePath] = []
    var index = 1
    var onlyPaths = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPaths || !argument.hasPrefix("-") || argument == "-" {
        paths.append(RawArguments.path(argument))
      } else if argument == "--" {
        onlyPaths = true
      } else if argument == "-L" || argument == "--dereference" {
        dereference = true
      } else if argument == "-m" || argument == "--mechanism" {
        guard index < arguments.count else { return nil }
        mechanismNames.append(arguments[index])
        index += 1
      } else if argument.hasPrefix("--mechanism=") {
        mechanismNames.append(String(argument.dropFirst("--mechanism=".count)))
      } else if argument.hasPrefix("-m") {
        mechanismNames.append(String(argument.dropFirst(2)))
      } else {
        return nil
      }
    }
    guard !paths.isEmpty else { return nil }
    let mechanisms: MechanismSet
    if mechanismNames.isEmpty {
      mechanisms = .all
    } else {
      guard let parsed = try? MechanismSet(parsing: mechanismNames.joined(separator: ",")) else {
        return nil
      }
      mechanisms = parsed
    }
    return CheckRun(paths: paths, mechanisms: mechanisms, dereference: dereference)
  }
}
