import SkipBackupCore

/// The mechanisms as the help names them, made from the table of
/// mechanisms (Mechanism.swift): its rows, in order, with each one's
/// `summary` and `prose`, and the named sets. A new row appears in every
/// command's help, the man page and the completions with nothing written
/// here.
enum MechanismHelp {
  /// `-m`'s help: each mechanism with what it is, then the named sets.
  static let option: String = {
    let marks = Mechanism.allCases.map { "\($0.name) (\($0.definition.summary))" }
    let sets = [("apple", MechanismSet.apple), ("all", MechanismSet.all)].map {
      "\($0.0) (\(list($0.1.names)))"
    }
    return "The marks to act on: " + (marks + sets).dropLast().joined(separator: ", ") + " or "
      + sets.last! + ". Separate several with commas, or repeat the option."
  }()

  /// What a mark is, in a sentence: each mechanism as prose, then its name.
  static let marks: String =
    "A mark is "
    + list(Mechanism.allCases.map { "\($0.definition.prose) (\($0.name))" }, last: ", or ") + "."

  /// `all: legacy, resource and xdg`, the default set of most commands.
  static let allSet = "all: " + list(MechanismSet.all.names)

  /// What a command reads without `-m`, as each one's help says it.
  static let byDefault = "Without -m the marks of the default set count (\(allSet))"

  /// The default set's members: `legacy, resource and xdg`.
  static let defaultNames = list(MechanismSet.all.names)

  /// How many mechanisms the default set has, in words.
  static let defaultCount = word(MechanismSet.all.count)

  /// The mechanisms outside the default set: `nodump and cachedir`.
  static let otherNames = list(MechanismSet.every.subtracting(.all).names)

  /// Apple's mechanisms, `apple`'s members: `legacy and resource`.
  static let appleNames = list(MechanismSet.apple.names)

  /// Every mechanism: `legacy, resource, xdg, nodump and cachedir`.
  static let everyNames = list(MechanismSet.every.names)

  /// How many mechanisms there are, in words.
  static let everyCount = word(MechanismSet.every.count)

  /// `-m`'s value for every mechanism: `all,nodump,cachedir`.
  static let everyValue = (["all"] + MechanismSet.every.subtracting(.all).names).joined(
    separator: ",")

  /// `a, b and c`.
  private static func list(_ items: [String], last: String = " and ") -> String {
    guard items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + last + items.last!
  }

  private static func word(_ number: Int) -> String {
    let words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    return number < words.count ? words[number] : String(number)
  }
}
