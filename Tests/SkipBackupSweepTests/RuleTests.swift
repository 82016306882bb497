// The sweep's rules in process, where their logic is: the rules file's
// lines as SweepRules reads them (docs/sweep.md's grammar), keep rules'
// reach, the rule table's look-ups on a real tree, and the git rule against
// git itself, the peer whose answer it records.

@testable import SkipBackupSweep
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

@Suite(.onTestThreads) struct RuleTests {
  /// The rules of `text` as a file named `rules`, without the built-in ones.
  /// The built-in rules are read for their names even when off, and one is
  /// `path ~/.cache` unless XDG_CACHE_HOME is set: it is, so that a missing
  /// HOME is this file's line's problem alone.
  private static func rules(_ text: String, home: String? = "/nonexistent-skipbackup/home")
    throws(SweepRules.LineError) -> SweepRules
  {
    try SweepRules(
      builtIn: false, fileText: Array(text.utf8), fileName: "rules",
      environment: SweepRules.Environment(
        home: home.map { Array($0.utf8) }, xdgCacheHome: Array("/nonexistent-skipbackup/cache".utf8)
      ))
  }

  private static func name(_ rule: SweepRule) -> String {
    String(decoding: rule.name, as: UTF8.self)
  }

  @Test func eachKindOfLineBecomesItsRule() throws {
    let read = try Self.rules(
      """
      # a comment, then a blank line

      sentinel target Cargo.toml ./.rustc_info.json   # asimov-style end-of-line comment
      name .cache-build
      path ~/Downloads/iso/
      keep ~/proj/app*
      gitignore
      mechanisms xdg legacy
      """)
    #expect(
      read.rules.map(Self.name) == ["target", ".cache-build", "~/Downloads/iso/", "gitignore"])
    #expect(read.rules.map(\.origin) == ["rules:3", "rules:4", "rules:5", "rules:7"])
    guard case .sentinel(let directory, let sentinels) = read.rules[0].kind else {
      Issue.record("\(read.rules[0].kind)")
      return
    }
    #expect(directory == Array("target".utf8))
    #expect(sentinels.map(\.inside) == [false, true])
    #expect(
      sentinels.map(\.glob.pattern) == [Array("Cargo.toml".utf8), Array(".rustc_info.json".utf8)])
    guard case .path(let path) = read.rules[2].kind else {
      Issue.record("\(read.rules[2].kind)")
      return
    }
    // ~ is HOME; the trailing slash goes, so that it compares with a walked path.
    #expect(path == Array("/nonexistent-skipbackup/home/Downloads/iso".utf8))
    #expect(
      read.keeps.map(\.glob.pattern) == [Array("/nonexistent-skipbackup/home/proj/app*".utf8)])
    #expect(read.keeps.map(\.components) == [4])
    #expect(read.mechanisms == [.legacy, .xdg])
  }

  /// Each line that does not parse is refused with its place and a reason a
  /// person can act on, never taken for something else.
  @Test(arguments: [
    ("bogus x", "unknown rule 'bogus'"),
    ("name a/b", "the directory 'a/b' must be one name"),
    ("name", "'name' takes one directory name"),
    ("sentinel d", "'sentinel' takes a directory name and at least one sentinel"),
    ("sentinel d ./a*", "a sentinel inside the directory ('./FILE') is one plain name"),
    ("path relative/dir", "'relative/dir' is neither an absolute path nor ~/..."),
    ("keep", "a path is missing"),
    ("gitignore now", "'gitignore' takes nothing after it"),
    ("mechanisms", "'mechanisms' takes a list"),
    ("mechanisms bogus", "bogus"),
    ("disable no-such-rule", "no built-in rule is called 'no-such-rule'"),
  ])
  func aLineThatDoesNotParseIsRefusedWithItsPlace(line: String, reason: String) {
    do {
      _ = try Self.rules("name fine\n" + line + "\n")
      Issue.record("\(line) parsed")
    } catch {
      #expect(error.origin == "rules:2")
      #expect(error.reason.contains(reason), "\(line): \(error.reason)")
    }
  }

  @Test func tildeWithoutHomeIsRefused() {
    do {
      _ = try Self.rules("path ~/x", home: nil)
      Issue.record("~ read without HOME")
    } catch {
      #expect(error.origin == "rules:1" && error.reason == "'~' stands for HOME, which is not set")
    }
  }

  @Test func disableTakesABuiltInRuleAwayAndOnlyThatOne() throws {
    let environment = SweepRules.Environment(home: Array("/nonexistent-skipbackup/home".utf8))
    let all = try SweepRules(
      builtIn: true, fileText: nil, fileName: "rules", environment: environment)
    let disabled = try SweepRules(
      builtIn: true, fileText: Array("disable node_modules\n".utf8), fileName: "rules",
      environment: environment)
    #expect(all.rules.map(Self.name).contains("node_modules"))
    #expect(
      disabled.rules.map(Self.name) == all.rules.map(Self.name).filter { $0 != "node_modules" })
  }

  /// A keep rule covers what it matches and everything below; a directory
  /// above what it may match is not covered, but holds something kept.
  @Test func keepCoversItsMatchesAndWhatIsBelowThem() throws {
    let keep = try #require(try Self.rules("keep /nonexistent-skipbackup/proj/app*").keeps.first)
    for covered in ["/nonexistent-skipbackup/proj/app", "/nonexistent-skipbackup/proj/app1/src/x"] {
      #expect(keep.covers(Array(covered.utf8)), "\(covered)")
    }
    for outside in [
      "/nonexistent-skipbackup/proj", "/nonexistent-skipbackup/proj/lib",
      "/nonexistent-skipbackup/projects/app",
    ] {
      #expect(!keep.covers(Array(outside.utf8)), "\(outside)")
    }
    #expect(keep.keepsBelow(Array("/nonexistent-skipbackup/proj".utf8)))
    #expect(keep.keepsBelow(Array("/nonexistent-skipbackup".utf8)))
    #expect(!keep.keepsBelow(Array("/nonexistent-skipbackup/other".utf8)))
    #expect(!keep.keepsBelow(Array("/nonexistent-skipbackup/proj/app1".utf8)))
  }

  /// The rule table on a real tree: a name rule by the directory's name, a
  /// sentinel written ./FILE by what the directory holds.
  @Test func theTableFindsADirectorysRule() throws {
    let tree = try TemporaryDirectory()
    let held = tree.directory("with/build")
    tree.file("with/build/marker")
    let empty = tree.directory("without/build")
    let cache = tree.directory("c/.cache-build")
    let table = RuleTable(
      try Self.rules("sentinel build ./marker\nname .cache-build\ngitignore\ngitignore\n"))
    func rule(_ name: String, _ path: String) -> Int? {
      Array(name.utf8).withUnsafeBytes { bytes in
        table.directoryRule(
          named: bytes, siblings: nil,
          item: FileItem(path: FilePath(path), followSymbolicLinks: false))
      }
    }
    #expect(rule("build", held) == 0)
    #expect(rule("build", empty) == nil)
    #expect(rule(".cache-build", cache) == 1)
    #expect(rule(".cache-build", held) == 1)
    #expect(rule("cache-build", cache) == nil)
    #expect(rule(String(repeating: "b", count: 300), held) == nil)
    // The first gitignore line is the rule.
    #expect(table.gitignoreRule == 2)
  }

  /// Why a sweep's own mark is taken back: the rule behind its record no
  /// longer applies, said as the `(rule gone: ...)` line says it.
  @Test func aRecordsRuleNoLongerApplyingSaysWhy() throws {
    let tree = try TemporaryDirectory()
    let file = tree.file("data/.cache-build")
    let table = RuleTable(
      try Self.rules("name .cache-build\npath /nonexistent-skipbackup/iso\ngitignore\n"))
    func applies(_ rule: String, isDirectory: Bool, path: String, ignored: Bool?) -> (Bool, String)
    {
      Array(".cache-build".utf8).withUnsafeBytes { name in
        let facts = ItemFacts(
          item: FileItem(path: FilePath(file), followSymbolicLinks: false),
          isDirectory: isDirectory,
          name: name, siblings: nil, absolutePath: Array(path.utf8), isIgnored: ignored)
        let answer = table.applies(ruleNamed: Array(rule.utf8), to: facts)
        return (answer.applies, answer.reason)
      }
    }
    #expect(applies(".cache-build", isDirectory: true, path: file, ignored: nil) == (true, ""))
    #expect(
      applies(".cache-build", isDirectory: false, path: file, ignored: nil)
        == (false, "not a directory by that name"))
    #expect(
      applies("/nonexistent-skipbackup/iso", isDirectory: true, path: file, ignored: nil)
        == (false, "no longer the rule's path"))
    #expect(
      applies(
        "/nonexistent-skipbackup/iso", isDirectory: true, path: "/nonexistent-skipbackup/iso",
        ignored: nil) == (true, ""))
    #expect(
      applies("gitignore", isDirectory: true, path: file, ignored: false)
        == (false, "git no longer ignores it"))
    // No answer from git is not "no longer ignored".
    #expect(applies("gitignore", isDirectory: true, path: file, ignored: nil) == (true, ""))
    #expect(
      applies("gone", isDirectory: true, path: file, ignored: nil)
        == (false, "no longer among the rules"))
  }

  /// The git rule records what git itself says it ignores, directory by
  /// directory; where git gives no answer, that is remembered for the
  /// directory and everything below it, and for nothing beside it.
  @Test func theGitRuleIsWhatGitIgnores() throws {
    let git = try #require(findProgram(Array("git".utf8)), "git is on PATH")
    let tree = try TemporaryDirectory()
    let top = tree.directory("repo")
    let initialized = run(["git", "-C", Argument(top), "init", "-q"])
    #expect(initialized.status == 0, "\(initialized.errors)")
    tree.file("repo/.gitignore", "build/\n*.log\n")
    tree.file("repo/build/out.o")
    tree.file("repo/src/debug.log")
    tree.file("repo/src/main.c")
    tree.file("repo/kept.txt")
    let ignored = GitIgnored(git: git)
    #expect(ignored.scan(workTree: Array(top.utf8)) == nil)
    func names(_ path: String) -> Set<String>? {
      Array(path.utf8).withUnsafeBufferPointer { ignored.ignored(in: $0) }.map {
        Set($0.map { String(decoding: $0, as: UTF8.self) })
      }
    }
    #expect(names(top) == ["build"])
    #expect(names(top + "/src") == ["debug.log"])
    #expect(names(top + "/build") == nil)

    let outside = tree.directory("not-a-repo")
    let unanswered = GitIgnored(git: git)
    let said = unanswered.scan(workTree: Array(outside.utf8))
    #expect(
      said?.contains("git ls-files could not say what git ignores here") == true, "\(said ?? "")")
    func isUnanswered(_ path: String) -> Bool {
      Array(path.utf8).withUnsafeBufferPointer { unanswered.isUnanswered($0) }
    }
    #expect(isUnanswered(outside) && isUnanswered(outside + "/below"))
    #expect(!isUnanswered(outside + "-beside") && !isUnanswered(top))
  }
}
