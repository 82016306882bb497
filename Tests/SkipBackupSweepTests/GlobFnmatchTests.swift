// The sweep's globs against the C library's fnmatch(3) with FNM_PATHNAME,
// which docs/sweep.md says they read patterns as: each pattern and text
// below gives the same answer from both. Fuzz/glob runs the same comparison
// on fuzzed patterns and texts.

import SkipBackupSweep
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct GlobFnmatchTests {
  /// fnmatch(3)'s answer, with FNM_PATHNAME.
  private static func fnmatches(_ pattern: String, _ text: String) -> Bool {
    fnmatch(pattern, text, FNM_PATHNAME) == 0
  }

  @Test(arguments: [
    // A `\` at the end quotes nothing: glibc matches nothing ("Trailing \ loses").
    ("a\\", "a\\"), ("*\\", "x\\"), ("a\\", "a"),
    ("a\\*", "a*"), ("a\\*", "ab"), ("\\[x]", "[x]"),
    ("*.csproj", "app.csproj"), ("*.csproj", "dir/app.csproj"),
    ("/home/*/src", "/home/me/src"), ("/home/*/src", "/home/a/b/src"),
    ("[!a-c]x", "dx"), ("[!a-c]x", "bx"), ("[^]]", "]"), ("[]a]", "a"),
    ("[a-]", "-"), ("[a", "[a"), ("?", "/"), ("[/]", "/"), ("*", ".hidden"),
    // A bracket left open is an ordinary `[`, but a range reached whose end
    // is the pattern's end matches nothing in glibc.
    ("[a-", "[a-"), ("*[!A-", "x[!A-"), ("[[-", "[[-"), ("[a-c-", "[a-c-"),
    ("[a-\\", "[a-\\"), ("[a-\\b]", "a"), ("[A-\\]]", "B"), ("[a-\\]", "[a-]"),
  ])
  func sameAnswerAsFnmatch(pattern: String, text: String) {
    #expect(
      Glob(Array(pattern.utf8)).matches(Array(text.utf8)) == Self.fnmatches(pattern, text),
      "\(pattern) on \(text)")
  }

  /// Every pattern of up to five bytes made of a bracket's own bytes, on
  /// every text of up to three: brackets left open, ranges cut short by the
  /// pattern's end and quoted members and range ends, as glibc reads them.
  @Test func everyShortBracketAsFnmatchReadsIt() {
    let patternBytes = Array("[]-a\\b".utf8)
    let textBytes = Array("[-a\\b".utf8)
    func all(_ alphabet: [UInt8], upTo length: Int) -> [[UInt8]] {
      var result: [[UInt8]] = [[]]
      var last: [[UInt8]] = [[]]
      for _ in 0..<length {
        last = last.flatMap { prefix in alphabet.map { prefix + [$0] } }
        result += last
      }
      return result
    }
    let texts = all(textBytes, upTo: 3).map { $0 + [0] }
    var differences: [String] = []
    for pattern in all(patternBytes, upTo: 5) {
      let glob = Glob(pattern)
      let terminated = pattern + [0]
      for text in texts {
        let expected = terminated.withUnsafeBufferPointer { pattern in
          text.withUnsafeBufferPointer { text in
            pattern.withMemoryRebound(to: CChar.self) { pattern in
              text.withMemoryRebound(to: CChar.self) { text in
                fnmatch(pattern.baseAddress!, text.baseAddress!, FNM_PATHNAME) == 0
              }
            }
          }
        }
        if glob.matches(Array(text.dropLast())) != expected {
          differences.append(
            "\(String(decoding: pattern, as: UTF8.self)) on "
              + "\(String(decoding: text.dropLast(), as: UTF8.self)): fnmatch \(expected)")
        }
      }
    }
    #expect(differences.isEmpty, "\(differences.count): \(differences.prefix(10))")
  }

  /// The `keep` rule a trailing backslash ends keeps nothing, as fnmatch(3)
  /// reads it, and the sweep marks what it would have named.
  @Test func keepWithATrailingBackslashKeepsNothing() throws {
    let rules = try SweepRules(
      builtIn: false, fileText: Array("keep /nonexistent/a*\\\n".utf8), fileName: "rules",
      // The built-in rules are read for their names even when off; theirs
      // name ~, so a home is given.
      environment: SweepRules.Environment(
        home: Array("/nonexistent/home".utf8), xdgCacheHome: nil))
    let keep = try #require(rules.keeps.first)
    #expect(!keep.covers(Array("/nonexistent/ab\\".utf8)))
    #expect(!Self.fnmatches("/nonexistent/a*\\", "/nonexistent/ab\\"))
  }
}
