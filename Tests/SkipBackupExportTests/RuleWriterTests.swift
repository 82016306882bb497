// Each backup tool's rules, against the tools' own matchers (borg 1.2's
// pattern code) and their escaping rules.

import Foundation
import Testing
import TestSupport

@testable import SkipBackupExport

@Suite(.onTestThreads) struct RuleWriterTests {
  private static let roots: [[UInt8]] = ["/", "/srv/data", "r", ".", "a b/c", "/x/../y"].map {
    Array($0.utf8)
  }

  /// borg 1.2 reads the rules file as borg does (`load_exclude_file`), and
  /// each rule must match the item's name as borg forms it, and neither a
  /// sibling whose name is one byte longer nor the item's parent.
  @Test func borgPatternsMatchTheItemAndNothingBeside() {
    var generator = ByteStringGenerator(state: 5)
    let syntax = BorgExclusions()
    var records: [[UInt8]] = []
    for _ in 0..<1500 {
      let root = Self.roots[generator.below(Self.roots.count)]
      let relative = generator.relativePath()
      guard
        case .success(let rule) = syntax.rule(
          root: try! syntax.walkRoot(for: root), relative: relative)
      else {
        Issue.record("borg: no rule for \(relative)")
        continue
      }
      records += [root, relative, rule]
    }
    let oracle = python(
      """
      import io, os, sys, base64
      from borg.patterns import load_exclude_file
      lines = [base64.b64decode(line) for line in sys.stdin]
      for root, relative, rule in zip(lines[0::3], lines[1::3], lines[2::3]):
          patterns = []
          load_exclude_file(io.StringIO(rule.decode("utf-8"), newline=None), patterns)
          name = os.path.normpath(os.path.join(os.path.normpath(root), relative))
          name = os.fsdecode(name).lstrip("/")  # borg matches names without leading slashes
          parent = os.path.dirname(name)
          pattern = patterns[0].val if len(patterns) == 1 else None
          verdict = (pattern is not None and pattern.match(name)
                     and not pattern.match(name + "x") and not pattern.match(parent))
          print("ok" if verdict else "WRONG %r %r %r" % (root, relative, rule))
      """, records)
    #expect(oracle.count == records.count / 3)
    let wrong = oracle.filter { $0 != "ok" }.prefix(5)
    #expect(wrong.isEmpty, "\(wrong)")
  }

  /// rsync: `/` and the path; with a wildcard character anywhere, every
  /// `* ? [ \` escaped, so that wildmatch compares it literally.
  @Test func rsyncRulesSpellThePathLiterally() {
    var generator = ByteStringGenerator(state: 6)
    for _ in 0..<3000 {
      let relative = generator.relativePath()
      guard
        case .success(let rule) = RsyncExclusions().rule(
          root: ExportRoot(path: [], followsSymbolicLink: true), relative: relative)
      else {
        Issue.record("rsync: no rule for \(relative)")
        continue
      }
      #expect(rule.first == UInt8(ascii: "/"))
      let body = Array(rule.dropFirst())
      if relative.contains(where: { "*?[".utf8.contains($0) }) {
        #expect(unescaped(body, special: "*?[\\") == relative, "\(rule)")
      } else {
        #expect(body == relative)
      }
    }
  }

  /// tar: `./` and the path on one line, `\ * ? [` escaped, whitespace at
  /// the end as a one-character bracket, and a path with a newline refused.
  @Test func tarRulesSpellThePathOnOneLine() {
    var generator = ByteStringGenerator(state: 7)
    var refused = 0
    for _ in 0..<3000 {
      let relative = generator.relativePath()
      let result = TarExclusions().rule(
        root: ExportRoot(path: [], followsSymbolicLink: true), relative: relative)
      guard case .success(let rule) = result else {
        #expect(relative.contains(UInt8(ascii: "\n")))
        refused += 1
        continue
      }
      #expect(!rule.contains(UInt8(ascii: "\n")))
      #expect(!TarExclusions.whitespace.contains(rule.last!))
      #expect(rule.starts(with: Array("./".utf8)))
      #expect(unescaped(Array(rule.dropFirst(2)), special: "*?[\\") == relative, "\(rule)")
    }
    #expect(refused > 0)
  }

  /// The path a glob spells when every special character in `special` must
  /// be escaped and a one-character bracket `[c]` stands for `c`; `nil`
  /// when a special character stands unescaped (it would be a wildcard).
  private func unescaped(_ pattern: [UInt8], special: String) -> [UInt8]? {
    var result: [UInt8] = []
    var index = 0
    while index < pattern.count {
      let byte = pattern[index]
      if byte == UInt8(ascii: "\\"), index + 1 < pattern.count {
        result.append(pattern[index + 1])
        index += 2
      } else if byte == UInt8(ascii: "["), index + 2 < pattern.count,
        pattern[index + 2] == UInt8(ascii: "]"), !special.utf8.contains(pattern[index + 1])
      {
        result.append(pattern[index + 1])
        index += 3
      } else if special.utf8.contains(byte) {
        return nil
      } else {
        result.append(byte)
        index += 1
      }
    }
    return result
  }
}
