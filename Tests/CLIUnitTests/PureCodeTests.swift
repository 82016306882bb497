// The tool's pure code, called in process, checked against oracles nobody
// here wrote: Python's posixpath.normpath, json and base64, and borg 1.2's
// own pattern matcher. Inputs are generated (a fixed seed, so a failure
// repeats) from the bytes that break path code: non-UTF-8 bytes, newlines,
// quotes, backslashes, glob characters, whitespace, dots and slashes.

import Foundation
import Testing
import TestSupport

@testable import skipbackup

/// SplitMix64: the same inputs on every run.
private struct Generator {
  var state: UInt64

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// Pieces that path, rule and JSON code must treat right.
  private static let pieces: [[UInt8]] =
    [
      "a", "b", "name", ".", "..", "/", "//", "é", "日本", " ", "\t", "\n", "\r", "\"", "\\",
      "*", "?", "[", "]", "#", "!", "-", "$", "$HOME", "pf:", "re:", "\u{7F}", "\u{1}",
    ].map { Array($0.utf8) } + [[0xFF], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xE9]]

  /// A byte string of 0 to `length` pieces, or now and then random bytes.
  mutating func bytes(length: Int = 8, slash: Bool = true) -> [UInt8] {
    var result: [UInt8] = []
    for _ in 0..<below(length + 1) {
      if below(8) == 0 {
        result.append(UInt8(1 + below(255)))
      } else {
        result += Self.pieces[below(Self.pieces.count)]
      }
    }
    return slash ? result : result.filter { $0 != UInt8(ascii: "/") }
  }

  /// A name a directory listing can hold: no slash, not empty, `.` or `..`.
  mutating func name() -> [UInt8] {
    while true {
      let name = bytes(length: 4, slash: false)
      if !name.isEmpty && name != [0x2E] && name != [0x2E, 0x2E] { return name }
    }
  }

  /// A path below a walk's root: one to three names joined by `/`.
  mutating func relativePath() -> [UInt8] {
    Array((0...below(3)).map { _ in name() }.joined(separator: [UInt8(ascii: "/")]))
  }
}

/// Runs a Python script on `records`, one Base64 line each, and returns
/// its output lines: the script reads `sys.stdin` the same way.
private func python(_ script: String, _ records: [[UInt8]]) -> [String] {
  let input = records.map { Data($0).base64EncodedString() }.joined(separator: "\n") + "\n"
  let result = run(
    ["/usr/bin/python3", Argument("-c"), Argument(script)], input: Array(input.utf8))
  #expect(result.status == 0, "\(result)")
  return result.lines
}

private func base64Decoded(_ line: Substring) -> [UInt8]? {
  Data(base64Encoded: String(line)).map(Array.init)
}

@Suite struct LexicalPathTests {
  @Test func pythonNormalizedIsPosixpathNormpath() {
    var generator = Generator(state: 1)
    let paths =
      (0..<3000).map { _ in generator.bytes() } + [[], Array("//".utf8), Array("///".utf8)]
    let oracle = python(
      """
      import sys, base64, posixpath
      for line in sys.stdin:
          print(base64.b64encode(posixpath.normpath(base64.b64decode(line))).decode())
      """, paths)
    #expect(oracle.count == paths.count)
    var wrong = 0
    for (path, expected) in zip(paths, oracle) {
      let ours = LexicalPath.pythonNormalized(path)
      if ours != base64Decoded(Substring(expected)) {
        wrong += 1
        Issue.record(
          "normpath(\(path)): ours \(ours), Python's \(base64Decoded(Substring(expected)))")
        if wrong > 5 { break }
      }
    }
  }

  @Test func pythonJoinedIsPosixpathJoin() {
    var generator = Generator(state: 2)
    let pairs = (0..<1000).map { _ in (generator.bytes(), generator.relativePath()) }
    let oracle = python(
      """
      import sys, base64, posixpath
      lines = [base64.b64decode(line) for line in sys.stdin]
      for directory, name in zip(lines[0::2], lines[1::2]):
          print(base64.b64encode(posixpath.join(directory, name)).decode())
      """, pairs.flatMap { [$0.0, $0.1] })
    #expect(oracle.count == pairs.count)
    for ((directory, name), expected) in zip(pairs, oracle) {
      #expect(LexicalPath.pythonJoined(directory, name) == base64Decoded(Substring(expected)))
    }
  }
}

@Suite struct JSONLinesTests {
  /// Every line parses as strict JSON; a path comes back byte for byte,
  /// from the string when it is UTF-8, else from `path_base64`, whose
  /// string is the lossy decoding; text and numbers come back as given.
  @Test func linesParseAsPythonJSONAndPathsComeBackExactly() {
    var generator = Generator(state: 3)
    let paths = (0..<2000).map { _ in generator.bytes() }
    var lines: [[UInt8]] = []
    for (index, path) in paths.enumerated() {
      var line = JSONLine()
      line.path("path", path)
      line.bool("excluded", index % 2 == 0)
      line.string("text", String(decoding: path, as: UTF8.self))
      line.number("n", Int64(index) * 1_000_003 - 7)
      line.null("nothing")
      line.strings("list", ["a\"b", "c\\d", "e\nf"])
      let finished = line.finish()
      #expect(finished.last == UInt8(ascii: "\n"))
      #expect(finished.dropLast().contains(UInt8(ascii: "\n")) == false)
      lines.append(Array(finished.dropLast()))
    }
    let oracle = python(
      """
      import sys, base64, json
      for index, line in enumerate(sys.stdin):
          o = json.loads(base64.b64decode(line))
          if "path_base64" in o:
              exact = base64.b64decode(o["path_base64"], validate=True)
          else:
              exact = o["path"].encode("utf-8")
          assert o["excluded"] is (index % 2 == 0)
          assert o["n"] == index * 1000003 - 7 and o["nothing"] is None
          assert o["list"] == ["a\\"b", "c\\\\d", "e\\nf"]
          assert set(o) <= {"path", "path_base64", "excluded", "text", "n", "nothing", "list"}
          print(base64.b64encode(exact).decode(), base64.b64encode(o["path"].encode()).decode(),
                base64.b64encode(o["text"].encode()).decode(), "path_base64" in o)
      """, lines)
    #expect(oracle.count == paths.count)
    for (path, answer) in zip(paths, oracle) {
      let fields = answer.split(separator: " ", omittingEmptySubsequences: false)
      let lossy = Array(String(decoding: path, as: UTF8.self).utf8)
      #expect(base64Decoded(fields[0]) == path)
      #expect(base64Decoded(fields[1]) == lossy)
      #expect(base64Decoded(fields[2]) == lossy)
      #expect((fields[3] == "True") == (String(validating: path, as: UTF8.self) == nil))
    }
  }

  @Test func base64IsPythonBase64() {
    var generator = Generator(state: 4)
    let inputs = (0..<2000).map { _ in
      (0..<generator.below(40)).map { _ in UInt8(generator.below(256)) }
    }
    let oracle = python(
      """
      import sys, base64
      for line in sys.stdin:
          print(base64.b64encode(base64.b64decode(line)).decode())
      """, inputs)
    #expect(oracle.count == inputs.count)
    for (bytes, expected) in zip(inputs, oracle) {
      #expect(Base64.encode(bytes) == expected)
    }
  }
}

@Suite struct RuleWriterTests {
  private static let roots: [[UInt8]] = ["/", "/srv/data", "r", ".", "a b/c", "/x/../y"].map {
    Array($0.utf8)
  }

  /// borg 1.2 reads the rules file as borg does (`load_exclude_file`), and
  /// each rule must match the item's name as borg forms it, and neither a
  /// sibling whose name is one byte longer nor the item's parent.
  @Test func borgPatternsMatchTheItemAndNothingBeside() {
    var generator = Generator(state: 5)
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
    var generator = Generator(state: 6)
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
    var generator = Generator(state: 7)
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

@Suite struct RawArgumentsTests {
  /// An argument that is text is its own path, byte for byte, even when it
  /// looks like the placeholder of an argument that does not exist.
  @Test func textArgumentsAreTheirOwnPaths() {
    var generator = Generator(state: 8)
    var texts = (0..<500).map { _ in String(decoding: generator.bytes(slash: false), as: UTF8.self)
    }
    texts += ["\u{F8FF}skipbackup-argument-99999", "--files-from=\u{F8FF}skipbackup-argument-0"]
    for text in texts where !text.utf8.contains(0) {
      #expect(RawArguments.path(text).bytes == Array(text.utf8))
    }
  }
}
