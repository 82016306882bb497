import SkipBackupCore
import SystemPackage

/// One rule of a sweep: what it matches, its name (what `--list-rules`
/// prints first, `disable` names, and the item's record keeps), the line
/// that defines it, and where that line is.
package struct SweepRule: Sendable {
  package enum Kind: Sendable {
    /// A directory called `directory` beside (or holding, for a sentinel
    /// written `./FILE`) any one of the sentinels.
    case sentinel(directory: [UInt8], sentinels: [Sentinel])
    /// Every directory called this.
    case name([UInt8])
    /// This exact item, by its absolute path, `~` expanded.
    case path([UInt8])
    /// What git ignores, in each work tree met.
    case gitignore
  }

  package struct Sentinel: Sendable {
    package let glob: Glob
    /// Written `./FILE`: looked for inside the directory, not beside it.
    package let inside: Bool
  }

  package let name: [UInt8]
  package let kind: Kind
  package let definition: [UInt8]
  package let origin: String
}

/// A `keep` rule: an absolute path or pattern, `~` expanded, whose items
/// and everything below them no sweep marks.
package struct KeepRule: Sendable {
  package let glob: Glob
  /// The pattern's components: it can match only a path with as many.
  package let components: Int
  /// The path or pattern as written.
  package let argument: [UInt8]
  package let definition: [UInt8]
  package let origin: String

  /// Whether the rule covers the absolute path `path`: the path itself or
  /// a directory above it matches.
  package func covers(_ path: [UInt8]) -> Bool {
    // The prefix with as many components as the pattern: the only one it can match.
    var slashes = 0
    var end = path.count
    for (index, byte) in path.enumerated() where byte == UInt8(ascii: "/") {
      slashes += 1
      if slashes == components + 1 {
        end = index
        break
      }
    }
    guard slashes >= components else { return false }
    return path.withUnsafeBytes { glob.matches(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
  }
}

extension KeepRule {
  /// Whether the rule may keep something below the directory at the
  /// absolute path `path`: a mark on the directory would take that out of
  /// backups too, so the directory is not marked.
  package func keepsBelow(_ path: [UInt8]) -> Bool {
    let depth = countComponents(path)
    guard depth < components else { return false }
    // The pattern's first `depth` components: wildcards never match a `/`.
    var slashes = 0
    var end = glob.pattern.count
    for (index, byte) in glob.pattern.enumerated() where byte == UInt8(ascii: "/") {
      slashes += 1
      if slashes == depth + 1 {
        end = index
        break
      }
    }
    return path.withUnsafeBytes { Glob(Array(glob.pattern[..<end])).matches($0) }
  }
}

/// The slashes of an absolute path: `/a/b` has 2.
package func countComponents(_ path: some Collection<UInt8>) -> Int {
  path.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
}

/// The effective rules of a run: the built-in ones (unless turned off) and
/// the rules file's, with what the file says to write.
package struct SweepRules: Sendable {
  package var rules: [SweepRule] = []
  package var keeps: [KeepRule] = []
  /// The file's `mechanisms` line, if any.
  package var mechanisms: MechanismSet?
  package var disabled: [[UInt8]] = []

  /// A rules file line that does not parse: `FILE:LINE: reason`.
  package struct LineError: Error {
    package let origin: String
    package let reason: String
    package var description: String { "\(origin): \(reason)" }
  }

  /// Where `~` and the XDG variables point, for expansion.
  package struct Environment: Sendable {
    package var home: [UInt8]?
    package var xdgCacheHome: [UInt8]?

    package init(home: [UInt8]? = nil, xdgCacheHome: [UInt8]? = nil) {
      self.home = home
      self.xdgCacheHome = xdgCacheHome
    }

    /// HOME and XDG_CACHE_HOME, each resolved to its canonical path where it exists.
    package static var canonical: Environment {
      let home = variable("HOME")
      let cache = variable("XDG_CACHE_HOME")
      return Environment(
        home: home.map { canonicalPath($0) ?? $0 },
        xdgCacheHome: cache.map { canonicalPath($0) ?? $0 })
    }

    /// The variable's bytes, or `nil` when it is unset or empty (the XDG rule).
    package static func variable(_ name: String) -> [UInt8]? {
      guard let bytes = environmentValue(name), !bytes.isEmpty else { return nil }
      return bytes
    }
  }

  /// The rules, built-in ones first unless `builtIn` is false, then those
  /// of `fileText`, whose lines are named `fileName:LINE`.
  package init(
    builtIn: Bool, fileText: [UInt8]?, fileName: String, environment: Environment
  ) throws(LineError) {
    var builtInRules = SweepRules()
    for (index, line) in BuiltInRules.lines(environment).enumerated() {
      try builtInRules.parse(
        line: line.text, origin: "built-in", name: line.name, environment: environment,
        lineNumber: index, builtInNames: [])
    }
    let builtInNames = builtInRules.rules.map(\.name)
    if builtIn { self = builtInRules }
    guard let fileText else { return }
    var number = 0
    for line in fileText.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      number += 1
      try parse(
        line: Array(line), origin: "\(fileName):\(number)", name: nil, environment: environment,
        lineNumber: number, builtInNames: builtInNames)
    }
    if !disabled.isEmpty {
      rules.removeAll { rule in rule.origin == "built-in" && disabled.contains(rule.name) }
    }
  }

  private init() {}

  /// No rules at all.
  package static var empty: SweepRules { SweepRules() }

  /// `path` with the directory that holds it resolved (symbolic links,
  /// `..`), so that it compares with the canonical paths of a walk; as
  /// written when that directory does not exist.
  private static func resolvingParent(_ path: [UInt8]) -> [UInt8] {
    guard let slash = path.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { return path }
    guard let parent = canonicalPath(Array(path[..<slash])) else { return path }
    return (parent == [UInt8(ascii: "/")] ? [] : parent) + path[slash...]
  }

  /// A pattern with the components before its first wildcard resolved
  /// (symbolic links, `.`, `..`), as the walk's canonical paths have them,
  /// and `.` dropped after it: `keep ~/proj/app*` with `proj -> code`
  /// matched nothing, so kept items were marked. Where those
  /// components do not exist, `.` and `..` are resolved by their names.
  private static func resolvingLiteralPart(_ pattern: [UInt8]) -> [UInt8] {
    let components = pattern.split(separator: UInt8(ascii: "/")).map(Array.init)
    let literal = components.prefix { Glob($0).isLiteral }
    let rest = components.dropFirst(literal.count).filter { $0 != [UInt8(ascii: ".")] }
    let written = literal.reduce(into: [UInt8]()) { $0 += [UInt8(ascii: "/")] + $1 }
    var prefix: [UInt8]
    if let canonical = canonicalPath(written.isEmpty ? [UInt8(ascii: "/")] : written) {
      prefix = canonical == [UInt8(ascii: "/")] ? [] : canonical
    } else {
      var kept: [[UInt8]] = []
      for component in literal where component != [UInt8(ascii: ".")] {
        if component == Array("..".utf8) { _ = kept.popLast() } else { kept.append(component) }
      }
      prefix = kept.reduce(into: [UInt8]()) { $0 += [UInt8(ascii: "/")] + $1 }
    }
    for component in rest { prefix += [UInt8(ascii: "/")] + component }
    return prefix
  }

  private static let space = UInt8(ascii: " ")
  private static let tab = UInt8(ascii: "\t")

  private mutating func parse(
    line: [UInt8], origin: String, name givenName: String?, environment: Environment,
    lineNumber: Int, builtInNames: [[UInt8]]
  ) throws(LineError) {
    var line = line
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    let trimmed = Self.trim(line[...])
    if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { return }
    let keywordEnd = trimmed.firstIndex { $0 == Self.space || $0 == Self.tab } ?? trimmed.endIndex
    let keyword = String(decoding: trimmed[..<keywordEnd], as: UTF8.self)
    let rest = Self.trim(trimmed[keywordEnd...])
    // Words up to a `#` word: an end-of-line comment, as asimov's lists have.
    var words: [[UInt8]] = []
    for word in rest.split(whereSeparator: { $0 == Self.space || $0 == Self.tab }) {
      if word.first == UInt8(ascii: "#") { break }
      words.append(Array(word))
    }
    func fail(_ reason: String) -> LineError { LineError(origin: origin, reason: reason) }
    func shown(_ bytes: [UInt8]) -> String { String(escapingForDisplay: bytes) }
    // A path ends at its first NUL: `path /a\0/b` would name /a.
    if trimmed.contains(0) {
      throw fail("the line holds a NUL byte, which no name or path can hold")
    }
    func checkName(_ word: [UInt8], _ what: String) throws(LineError) {
      if word.contains(UInt8(ascii: "/")) || word == [0x2E] || word == [0x2E, 0x2E] {
        throw fail("\(what) '\(shown(word))' must be one name, without '/'")
      }
    }
    let definition = Array(trimmed)
    switch keyword {
    case "sentinel":
      guard words.count >= 2 else {
        throw fail(
          "'sentinel' takes a directory name and at least one sentinel: sentinel NAME SENTINEL...")
      }
      try checkName(words[0], "the directory")
      var sentinels: [SweepRule.Sentinel] = []
      for word in words.dropFirst() {
        if word.starts(with: [0x2E, 0x2F]) {
          let inner = Array(word.dropFirst(2))
          try checkName(inner, "the sentinel")
          if inner.isEmpty || !Glob(inner).isLiteral {
            throw fail(
              "a sentinel inside the directory ('./FILE') is one plain name: '\(shown(word))'")
          }
          sentinels.append(SweepRule.Sentinel(glob: Glob(inner), inside: true))
        } else {
          try checkName(word, "the sentinel")
          sentinels.append(SweepRule.Sentinel(glob: Glob(word), inside: false))
        }
      }
      let name = givenName.map { Array($0.utf8) } ?? words[0]
      rules.append(
        SweepRule(
          name: name, kind: .sentinel(directory: words[0], sentinels: sentinels),
          definition: definition, origin: origin))
    case "name":
      guard words.count == 1 else { throw fail("'name' takes one directory name: name NAME") }
      try checkName(words[0], "the directory")
      let name = givenName.map { Array($0.utf8) } ?? words[0]
      rules.append(
        SweepRule(name: name, kind: .name(words[0]), definition: definition, origin: origin))
    case "path":
      let argument = Array(rest)
      let path = Self.resolvingParent(try Self.expand(argument, environment, fail))
      let name = givenName.map { Array($0.utf8) } ?? argument
      rules.append(SweepRule(name: name, kind: .path(path), definition: definition, origin: origin))
    case "keep":
      let argument = Array(rest)
      var path = try Self.expand(argument, environment, fail)
      path = Glob(path).isLiteral ? Self.resolvingParent(path) : Self.resolvingLiteralPart(path)
      keeps.append(
        KeepRule(
          glob: Glob(path), components: countComponents(path), argument: argument,
          definition: definition, origin: origin))
    case "gitignore":
      guard words.isEmpty else { throw fail("'gitignore' takes nothing after it") }
      let name = givenName.map { Array($0.utf8) } ?? Array("gitignore".utf8)
      rules.append(SweepRule(name: name, kind: .gitignore, definition: definition, origin: origin))
    case "mechanisms":
      guard !words.isEmpty else {
        throw fail("'mechanisms' takes a list such as resource or legacy,resource")
      }
      let list = words.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",")
      do {
        let set = try MechanismSet(parsing: list)
        if set.isEmpty { throw fail("'mechanisms' takes at least one mechanism") }
        mechanisms = set
      } catch let error as UnknownMechanismError {
        throw fail(error.description)
      } catch {
        throw fail("'mechanisms' takes a list such as resource or legacy,resource")
      }
    case "disable":
      guard words.count == 1 else { throw fail("'disable' takes one built-in rule's name") }
      guard builtInNames.contains(words[0]) else {
        throw fail(
          "no built-in rule is called '\(shown(words[0]))' (skipbackup sweep --list-rules prints their names)"
        )
      }
      disabled.append(words[0])
    default:
      throw fail(
        "unknown rule '\(shown(Array(trimmed[..<keywordEnd])))'; a line is sentinel, name, path, keep, gitignore, mechanisms or disable"
      )
    }
  }

  private static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var bytes = bytes
    while let first = bytes.first, first == space || first == tab { bytes.removeFirst() }
    while let last = bytes.last, last == space || last == tab { bytes.removeLast() }
    return bytes
  }

  /// An absolute path, or `~` or `~/...` with HOME put in; trailing slashes dropped.
  private static func expand(
    _ argument: [UInt8], _ environment: Environment, _ fail: (String) -> LineError
  ) throws(LineError) -> [UInt8] {
    var path: [UInt8]
    if argument == [UInt8(ascii: "~")] || argument.starts(with: Array("~/".utf8)) {
      guard let home = environment.home else {
        throw fail("'~' stands for HOME, which is not set")
      }
      path = home + argument.dropFirst()
    } else if argument.first == UInt8(ascii: "/") {
      path = argument
    } else if argument.isEmpty {
      throw fail("a path is missing")
    } else {
      throw fail("'\(String(escapingForDisplay: argument))' is neither an absolute path nor ~/...")
    }
    while path.count > 1 && path.last == UInt8(ascii: "/") { path.removeLast() }
    // `//` would never match a walked path.
    var cleaned: [UInt8] = []
    for byte in path where !(byte == UInt8(ascii: "/") && cleaned.last == UInt8(ascii: "/")) {
      cleaned.append(byte)
    }
    return cleaned
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
