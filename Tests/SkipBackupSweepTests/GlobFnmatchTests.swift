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
  ])
  func sameAnswerAsFnmatch(pattern: String, text: String) {
    #expect(
      Glob(Array(pattern.utf8)).matches(Array(text.utf8)) == Self.fnmatches(pattern, text),
      "\(pattern) on \(text)")
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
