import SkipBackupCore

/// The rules, arranged for the walk: directory rules found by the length of
/// a name and then its bytes (no hashing, no allocation per entry), path
/// rules by the directory that holds them, keep rules by their depth.
package final class RuleTable: Sendable {
  package let rules: [SweepRule]
  package let keeps: [KeepRule]
  /// Sentinel and name rules, by the length of the directory name they
  /// match: those of length `n` are `directoryRules[starts[n]..<starts[n + 1]]`.
  /// Flat, so that a look-up retains no inner array.
  private let directoryRules: [Int]
  private let starts: [Int]
  package let pathRules: [Int]
  package let gitignoreRule: Int?

  package init(_ sweepRules: SweepRules) {
    rules = sweepRules.rules
    keeps = sweepRules.keeps
    var byLength = [[Int]](repeating: [], count: 256)
    var paths: [Int] = []
    var gitignore: Int?
    for (index, rule) in rules.enumerated() {
      switch rule.kind {
      case .sentinel(let directory, _), .name(let directory):
        if directory.count < 256 { byLength[directory.count].append(index) }
      case .path:
        paths.append(index)
      case .gitignore:
        if gitignore == nil { gitignore = index }
      }
    }
    directoryRules = byLength.flatMap { $0 }
    var starts = [0]
    for rules in byLength { starts.append(starts.last! + rules.count) }
    self.starts = starts
    pathRules = paths
    gitignoreRule = gitignore
  }

  /// The first sentinel or name rule that matches a directory called `name`
  /// whose parent's listing is `siblings`; `item` is the directory, for
  /// sentinels looked for inside it.
  package func directoryRule(
    named name: UnsafeRawBufferPointer, siblings: DirectoryListing?, item: FileItem
  ) -> Int? {
    guard name.count < 256 else { return nil }
    for position in starts[name.count]..<starts[name.count + 1] {
      let index = directoryRules[position]
      if matchesDirectory(index, name, siblings, item) { return index }
    }
    return nil
  }

  private func matchesDirectory(
    _ index: Int, _ name: UnsafeRawBufferPointer, _ siblings: DirectoryListing?, _ item: FileItem
  ) -> Bool {
    switch rules[index].kind {
    case .name(let directory):
      return name.elementsEqual(directory)
    case .sentinel(let directory, let sentinels):
      guard name.elementsEqual(directory) else { return false }
      return Self.anyPresent(sentinels, in: item, siblings: siblings)
    default:
      return false
    }
  }

  /// Whether one of `sentinels` is there: inside the directory `item`, or
  /// beside it among `siblings` (none when its parent was not read).
  private static func anyPresent(
    _ sentinels: [SweepRule.Sentinel], in item: FileItem, siblings: DirectoryListing?
  ) -> Bool {
    sentinels.contains { sentinel in
      if sentinel.inside { return item.holdsEntry(named: sentinel.glob.pattern) }
      guard let siblings else { return false }
      if sentinel.glob.isLiteral { return siblings.contains(sentinel.glob.pattern) }
      return siblings.contains { sentinel.glob.matches($0) }
    }
  }

  /// The keep rule that covers the absolute path `path`, or, for a
  /// directory, that keeps something below it, if any.
  package func keep(covering path: [UInt8], isDirectory: Bool) -> KeepRule? {
    keeps.first { $0.covers(path) || (isDirectory && $0.keepsBelow(path)) }
  }

  /// Whether some rule called `name` still applies to the item, and if
  /// none does, why, for the `(rule gone: ...)` line.
  package func applies(
    ruleNamed name: [UInt8], to item: ItemFacts
  ) -> (applies: Bool, reason: String) {
    var first: SweepRule?
    for rule in rules where rule.name == name {
      if first == nil { first = rule }
      switch rule.kind {
      case .sentinel(let directory, let sentinels):
        guard item.isDirectory, item.name.elementsEqual(directory) else { continue }
        // A ROOT's parent is not read: its record stands while the rule does.
        guard let siblings = item.siblings else { return (true, "") }
        if Self.anyPresent(sentinels, in: item.item, siblings: siblings) { return (true, "") }
      case .name(let directory):
        if item.isDirectory && item.name.elementsEqual(directory) { return (true, "") }
      case .path(let path):
        if item.absolutePath == path { return (true, "") }
      case .gitignore:
        // Unknown (git gave no answer) is not "no longer ignored".
        if item.isIgnored != false { return (true, "") }
      }
    }
    return (false, first.map(goneReason) ?? "no longer among the rules")
  }

  private func goneReason(_ rule: SweepRule) -> String {
    switch rule.kind {
    case .sentinel(_, let sentinels):
      let beside = sentinels.filter { !$0.inside }.map {
        String(escapingForDisplay: $0.glob.pattern)
      }
      let inside = sentinels.filter(\.inside).map { String(escapingForDisplay: $0.glob.pattern) }
      var parts: [String] = []
      if !beside.isEmpty { parts.append("no " + beside.joined(separator: " or ") + " beside it") }
      if !inside.isEmpty { parts.append("no " + inside.joined(separator: " or ") + " in it") }
      return parts.joined(separator: " and ")
    case .name:
      return "not a directory by that name"
    case .path:
      return "no longer the rule's path"
    case .gitignore:
      return "git no longer ignores it"
    }
  }
}

/// What the rules look at in one item of the walk.
package struct ItemFacts {
  package let item: FileItem
  package let isDirectory: Bool
  /// The entry's name, borrowed from the walk.
  package let name: UnsafeRawBufferPointer
  /// The parent's listing; `nil` for a ROOT.
  package let siblings: DirectoryListing?
  package let absolutePath: [UInt8]
  /// Whether git ignores it; `nil` when git was not asked or gave no answer.
  package let isIgnored: Bool?
}
