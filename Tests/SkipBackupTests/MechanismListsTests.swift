import Foundation
import SkipBackupCore
import Testing
import TestSupport

/// The lists of mechanisms written outside the code (the README, docs/, the
/// desktop scripts, the torture and benchmark scripts, the desktop test):
/// each must spell one of the table's sets, so that a new row fails here at
/// every list it makes stale, by file and line. The help, the man page and
/// the completions are made from the table (MechanismHelp.swift,
/// scripts/generate-docs) and HelpTests and CompletionTests compare them.
@Suite struct MechanismListsTests {
  /// The package's root directory, from this file's place in it.
  static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The files read: those a person writes. docs/skipbackup.1 and
  /// docs/completions are generated.
  static let files: [String] = {
    let manager = FileManager.default
    var files = ["README.md", "docs/skipbackup.1.supplement", "Tests/Docs/transcripts"]
    for folder in ["docs", "dist", "scripts", "Tests/Desktop"] {
      let enumerator = manager.enumerator(atPath: packageRoot.appendingPathComponent(folder).path)
      while let name = enumerator?.nextObject() as? String {
        let path = folder + "/" + name
        var isDirectory: ObjCBool = false
        guard
          manager.fileExists(
            atPath: packageRoot.appendingPathComponent(path).path,
            isDirectory: &isDirectory), !isDirectory.boolValue,
          !path.hasPrefix("docs/completions/"), path != "docs/skipbackup.1"
        else { continue }
        if folder == "docs" && !path.hasSuffix(".md") { continue }
        files.append(path)
      }
    }
    return files.sorted()
  }()

  /// The sets as the docs spell them, each from the table: every mechanism,
  /// the default set `all`, `apple`, those outside `all`, `-m`'s value for
  /// every mechanism, and the short names `-m` takes.
  static let sets: [[String]] = [
    MechanismSet.every.names, MechanismSet.all.names, MechanismSet.apple.names,
    MechanismSet.every.subtracting(.all).names,
    ["all"] + MechanismSet.every.subtracting(.all).names,
    MechanismSet.named.map(\.name),
  ]

  /// Lists that are no set: examples of a few marks (`-m legacy,xdg`),
  /// facts about other programs (borg 2 reads xdg and nodump), and a
  /// server's two streams in the order a sentence names them (resource and
  /// legacy). A list of the sets' names that is neither a set nor here
  /// fails.
  static let examples: Set<String> = [
    "legacy,xdg", "legacy, xdg", "legacy and xdg", "legacy or xdg", "resource,xdg",
    "resource, xdg", "resource,nodump", "resource,cachedir", "xdg and nodump",
    "resource and legacy", "resource or legacy",
  ]

  static let numbers = [
    "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
  ]

  /// A file's text with each line break, the indentation after it and a
  /// comment's `#` or `//` made one space, so that a list wrapped over
  /// lines reads as one; and the line each character of it came from.
  static func joinedLines(_ text: String) -> (text: String, lines: [Int]) {
    var joined = ""
    var lines: [Int] = []
    var line = 1
    var characters = text[...]
    while let character = characters.first {
      characters = characters.dropFirst()
      guard character == "\n" else {
        joined.append(character)
        lines.append(line)
        continue
      }
      characters = characters.drop { $0 == " " || $0 == "\t" }
      characters = characters.drop { $0 == "#" || $0 == "/" }
      characters = characters.drop { $0 == " " || $0 == "\t" }
      joined.append(" ")
      lines.append(line)
      line += 1
    }
    return (joined, lines)
  }

  /// The files' texts, each file once.
  static let documents: [(file: String, text: String)] = files.compactMap { file in
    (try? String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)).map {
      (file, $0)
    }
  }

  /// Each match of `pattern` in `text` with its lines joined: the line it
  /// starts on, and the text of the whole match (0) or of a group.
  static func matches(
    of pattern: NSRegularExpression, in text: String, group: Int = 0
  ) -> [(line: Int, text: String)] {
    let (joined, lines) = joinedLines(text)
    return pattern.matches(in: joined, range: NSRange(joined.startIndex..., in: joined)).map {
      match in
      let range = Range(match.range, in: joined)!
      let offset = joined.distance(from: joined.startIndex, to: range.lowerBound)
      return (lines[offset], String(joined[Range(match.range(at: group), in: joined)!]))
    }
  }

  /// Each list of two or more mechanisms in `text`, with the line it
  /// starts on and its names.
  static func lists(in text: String) -> [(line: Int, list: String, names: [String])] {
    let mechanisms = Mechanism.allCases.map(\.name)
    // A name alone or in backquotes: `legacy`, `resource` and `xdg`.
    let name = "`?(?:" + MechanismSet.named.map(\.name).joined(separator: "|") + ")`?"
    let separator = "(?:, and |, or |, | and | or |,)"
    let pattern = try! NSRegularExpression(
      pattern: "(?<![\\w.:-])\(name)(?:\(separator)\(name))+(?![\\w-])")
    let splitter = try! NSRegularExpression(pattern: separator)
    return matches(of: pattern, in: text).compactMap { line, match in
      let list = String(match.filter { $0 != "`" })
      let names = splitter.stringByReplacingMatches(
        in: list, range: NSRange(list.startIndex..., in: list), withTemplate: " "
      ).split(separator: " ").map(String.init)
      guard names.filter(mechanisms.contains).count >= 2 else { return nil }
      return (line, list, names)
    }
  }

  @Test func everyListOfMechanismsIsOneOfTheTablesSets() throws {
    var found = 0
    for (file, text) in Self.documents {
      for (line, list, names) in Self.lists(in: text) where !Self.examples.contains(list) {
        found += 1
        #expect(
          Self.sets.contains(names),
          "\(file):\(line): '\(list)' is none of the table's sets: \(Self.sets.map { $0.joined(separator: ",") })"
        )
      }
    }
    // The lists are there to be checked: the README's and cli.md's sets.
    #expect(found >= 20, "\(found) lists found")
  }

  /// "all five mechanisms", "the five mechanisms": the number of rows.
  @Test func everyCountOfMechanismsIsTheTables() throws {
    let pattern = try NSRegularExpression(
      pattern: "\\b(" + Self.numbers.joined(separator: "|") + ") mechanisms\\b")
    let expected = Self.numbers[Mechanism.allCases.count]
    var found = 0
    for (file, text) in Self.documents {
      for (line, word) in Self.matches(of: pattern, in: text, group: 1) {
        found += 1
        #expect(word == expected, "\(file):\(line): '\(word) mechanisms', not \(expected)")
      }
    }
    #expect(found >= 3, "\(found) counts found")
  }

  /// The peers' marks (Tests/Support/PeerMarks.swift) are written from
  /// docs/format.md, not from the table, so that the tests compare the tool
  /// with bytes nobody derived from its code; they must be the table's
  /// attribute rows, so that a new one is checked by getfattr and Python too.
  @Test func thePeersMarksAreTheTablesAttributeRows() {
    #expect(PeerMark.allCases.map(\.rawValue) == MechanismSet.attributes.names)
    for mark in PeerMark.allCases {
      let mechanism = Mechanism(rawValue: mark.rawValue)
      #expect(mechanism?.attributeName?.description == mark.attribute, "\(mark)")
      #expect(mechanism?.markValue == mark.value, "\(mark)")
    }
  }
}
