import ArgumentParser
import SkipBackupCore

/// `-m`/`--mechanism`: which marks a command writes or reads. The value may
/// be joined to `-m` (`-mxdg`), as check's reading without the parser takes
/// it: joined, the parser read `-mxdg` as the flags `-m -x -d -g` and took
/// the next argument for the value.
struct MechanismOptions: ParsableArguments {
  @Option(
    name: [.customShort("m", allowingJoined: true), .long],
    help: ArgumentHelp(MechanismHelp.option, valueName: "M"),
    completion: .custom(MechanismOptions.complete))
  var mechanism: [String] = []

  mutating func validate() throws {
    _ = try mechanisms(default: .all)
  }

  /// Shell completion of `-m`: the short names, also after the commas of a
  /// list (`legacy,re<TAB>` completes to `legacy,resource`), without the
  /// names the list already holds.
  @Sendable static func complete(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
    let given = prefix.split(separator: ",", omittingEmptySubsequences: false)
    let head = given.dropLast().map { $0 + "," }.joined()
    return MechanismSet.named.map(\.name)
      .filter { !given.dropLast().contains(Substring($0)) }
      .map { head + $0 }
      .filter { $0.hasPrefix(prefix) }
  }

  /// The chosen set, or `defaultSet` when the option was not given.
  func mechanisms(default defaultSet: MechanismSet) throws -> MechanismSet {
    guard !mechanism.isEmpty else { return defaultSet }
    do {
      return try MechanismSet(parsing: mechanism.joined(separator: ","))
    } catch {
      throw ValidationError(error.description)
    }
  }
}
