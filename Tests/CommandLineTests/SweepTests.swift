import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// `skipbackup sweep` on real trees: Tests/Trees/mkhome.py's home, and
  /// small trees made here. getfattr is the oracle for what is marked, and
  /// for the sweep's record (`user.skipbackup.sweep`).
  @Suite struct SweepTests {
    static let record = "user.skipbackup.sweep"

    /// Runs the tool with HOME set to `home` and no XDG variables.
    private func sweep(
      _ arguments: [String], home: String, environment: [String: String] = [:],
      asNobody: Bool = false
    ) -> ProcessResult {
      var variables = ["HOME": home, "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""]
      for (name, value) in environment { variables[name] = value }
      return run(
        [Argument(skipbackupPath), "sweep"] + arguments.map { Argument($0) }, asNobody: asNobody,
        environment: variables)
    }

    /// The topmost marked items under `root`, relative to it, as getfattr finds them.
    private func markedItems(_ root: String) -> Set<String> {
      Set(
        topmost(getfattrMarkedPaths(root)).map {
          String(decoding: $0.dropFirst(root.utf8.count + 1), as: UTF8.self)
        })
    }

    /// The sweep's record on `path` as `MECHANISMS RULE`, as Python's
    /// `os.listxattr` and `os.getxattr` read it: from an attribute's name
    /// (`user.skipbackup.sweep.MECHANISMS:RULE`), or else from the value of
    /// `user.skipbackup.sweep`.
    private func recordOf(_ path: String) -> String? {
      let result = python(Self.recordScript, [Argument(path)])
      return result.status == 0 ? String(decoding: result.standardOutput, as: UTF8.self) : nil
    }

    /// Prints the record on sys.argv[1], or exits 1 when there is none.
    static let recordScript = """
      import os, sys
      path = os.fsencode(sys.argv[1])
      prefix = b"user.skipbackup.sweep."
      names = [os.fsencode(n) for n in os.listxattr(path, follow_symlinks=False)]
      for name in names:
          if name.startswith(prefix):
              mechanisms, _, rule = name[len(prefix):].partition(b":")
              sys.stdout.buffer.write(mechanisms + b" " + rule)
              sys.exit(0)
      if b"user.skipbackup.sweep" in names:
          sys.stdout.buffer.write(os.getxattr(path, b"user.skipbackup.sweep", follow_symlinks=False))
          sys.exit(0)
      sys.exit(1)
      """

    /// Every sweep record under `root`, as `getfattr -R` dumps the names.
    private func recordNames(under root: String) -> [String] {
      let result = run([
        "getfattr", "-R", "-h", "--absolute-names", "-d", "-m", #"^user\.skipbackup\.sweep"#,
        Argument(root),
      ])
      // An empty answer must mean no record, not a getfattr that failed.
      #expect(result.status == 0, "\(result)")
      return result.lines.filter { $0.hasPrefix(Self.record) }
    }

    /// A home from Tests/Trees/mkhome.py with `projects` projects; a
    /// generator that is missing or fails fails the test that asked. The
    /// home of 8 projects, which most tests take, is made once a run and
    /// copied (`cp -a`): made, it cost about 2 s of CPU each time.
    private func mkhome(_ tree: TemporaryDirectory, projects: Int = 16) throws -> String {
      let home = tree.path + "/home"
      if projects == 8 {
        let template = try Self.homeOfEightProjects.get()
        try check(run(["cp", "-a", Argument(template), Argument(home)]))
        return home
      }
      try check(
        run([
          python3, Argument(treeGenerator("mkhome.py")), Argument(home), Argument("\(projects)"),
        ]))
      return home
    }

    private static let homeOfEightProjects = Result { () throws -> String in
      let place = try TemporaryDirectory()
      keepUntilExit(place)
      let home = place.path + "/home"
      try check(
        run([python3, Argument(treeGenerator("mkhome.py")), Argument(home), "8"]))
      return home
    }

    /// What the built-in rules must mark in mkhome.py's home: each kind's
    /// regenerable directories, the caches; never the decoys.
    private func expectedInHome(projects: Int) -> Set<String> {
      var expected: Set<String> = [
        ".cache", ".npm", ".cargo/registry", ".m2/repository", ".gradle/caches",
      ]
      let kinds = ["node", "rust", "python", "swift", "php", "elixir", "gradle", "decoy"]
      for n in 0..<projects {
        let kind = kinds[n % kinds.count]
        let project = "code/p" + String(format: "%03d", n) + "-" + kind
        let regenerable: [String] =
          switch kind {
          case "node": ["node_modules"]
          case "rust": ["target"]
          case "python": [".venv", "pkg/__pycache__"]
          case "swift": [".build"]
          case "php": ["vendor"]
          case "elixir": ["_build", "deps"]
          case "gradle": [".gradle", "build"]
          default: []
          }
        for directory in regenerable { expected.insert(project + "/" + directory) }
      }
      return expected
    }

    @Test func theBuiltInRulesMarkMkhomesRegenerableDirectoriesAndNoDecoy() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 8)
      let result = sweep([], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(result.standardError.isEmpty, "\(result)")
      let expected = expectedInHome(projects: 8)
      #expect(markedItems(home) == expected)
      // One line per change and a total, and each item carries the record
      // of its rule.
      #expect(result.lines.count == expected.count + 1, "\(result)")
      #expect(result.lines.last == "total: excluded \(expected.count) items, included 0")
      #expect(
        result.lines.contains(
          "[Excluded]    \(home)/code/p000-node/node_modules    (rule node_modules)"))
      #expect(recordOf(home + "/code/p000-node/node_modules") == "resource node_modules")
      #expect(recordOf(home + "/code/p002-python/.venv") == "resource .venv")
      #expect(recordOf(home + "/.cache") == "resource xdg-cache")
      #expect(recordOf(home + "/.npm") == "resource npm-cache")
      #expect(peerMarks(home + "/code/p001-rust/target") == [.resource])
      // The decoys: node_modules and target that no sentinel justifies.
      #expect(peerMarks(home + "/code/p007-decoy/node_modules").isEmpty)
      #expect(peerMarks(home + "/code/p007-decoy/target").isEmpty)
    }

    @Test func aRepeatSweepOfAnUnchangedTreeWritesNothing() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 8)
      #expect(sweep([], home: home).status == 0)
      let watched = [home + "/code/p000-node/node_modules", home + "/.cache", home + "/Documents"]
      let before = watched.map(times)
      letTheClockTick()
      let again = sweep(["-v"], home: home)
      #expect(again.status == 0, "\(again)")
      #expect(again.standardOutput.isEmpty, "\(again)")
      #expect(again.errors.contains("marked 0, cleared 0, already marked"), "\(again)")
      #expect(watched.map(times).map(\.change) == before.map(\.change))
    }

    @Test func theRecordIsInTheAttributesNameWithNothingElseBesideTheMark() throws {
      let tree = try TemporaryDirectory()
      let home = tree.path + "/home"
      tree.file("home/app/package.json")
      tree.directory("home/app/node_modules/left-pad")
      let result = sweep(
        [
          "--no-builtin-rules", "--rules",
          tree.file("rules", "sentinel node_modules package.json\n"),
        ], home: home)
      #expect(result.status == 0, "\(result)")
      // getfattr dumps the mark and the record's name, whose value is empty:
      // the listing of names every walk makes carries the record.
      #expect(
        getfattrDump(home + "/app/node_modules") == [
          Names.resource + "=0x" + Names.resourceValueHex,
          "user.skipbackup.sweep.resource:node_modules=0x",
        ], "\(getfattrDump(home + "/app/node_modules"))")
      #expect(recordNames(under: home) == [#"user.skipbackup.sweep.resource:node_modules="""#])

      // A name after the prefix that does not parse is no sweep's record:
      // undo, and clear, leave it.
      let stranger = "user.skipbackup.sweep.not-a-record"
      setfattr(home + "/app/node_modules", stranger, hex: "78")
      #expect(sweep(["--undo"], home: home).status == 0)
      #expect(peerMarks(home + "/app/node_modules").isEmpty)
      #expect(skipbackup("clear", Argument(home + "/app/node_modules")).status == 0)
      #expect(getfattr(home + "/app/node_modules", stranger) == [0x78])
      #expect(recordNames(under: home) == [#"user.skipbackup.sweep.not-a-record="x""#])
    }

    @Test func aRecordInTheFirstFormIsStillHonouredAndTakenBack() throws {
      // Before the record moved into the name, it was the value of
      // user.skipbackup.sweep: a tree swept then keeps working.
      let tree = try TemporaryDirectory()
      let home = tree.path + "/home"
      tree.file("home/app/package.json")
      tree.directory("home/app/node_modules/left-pad")
      let swept = home + "/app/node_modules"
      setfattr(swept, .resource)
      setfattr(swept, Self.record, hex: hex("resource node_modules".bytes))
      let rules = tree.file("rules", "sentinel node_modules package.json\n")
      let before = times(swept)
      letTheClockTick()
      let again = sweep(["-v", "--no-builtin-rules", "--rules", rules], home: home)
      #expect(again.status == 0, "\(again)")
      #expect(again.standardOutput.isEmpty, "\(again)")
      #expect(again.errors.contains("marked 0, cleared 0, already marked 1,"), "\(again)")
      #expect(times(swept).change == before.change)
      let status = skipbackup("status", "-v", Argument(swept))
      #expect(status.output.contains("by sweep rule node_modules"), "\(status)")

      // The sentinel goes: the mark and the record go, hand marks stay.
      setfattr(swept, .xdg)
      unlink(home + "/app/package.json")
      let gone = sweep(["--no-builtin-rules", "--rules", rules], home: home)
      #expect(gone.status == 0, "\(gone)")
      #expect(
        gone.lines == [
          "[Included]    \(swept)    (rule gone: node_modules: no package.json beside it)",
          "total: excluded 0 items, included 1",
        ], "\(gone)")
      #expect(peerMarks(swept) == [.xdg])
      #expect(recordNames(under: home).isEmpty, "\(recordNames(under: home))")
    }

    @Test func aPathTooLongForAnAttributesNameKeepsItsRecordInTheValue() throws {
      // An attribute's name is at most 255 bytes (XATTR_NAME_MAX): a path
      // rule's record that would not fit goes in the value of
      // user.skipbackup.sweep, and works the same.
      let tree = try TemporaryDirectory()
      let home = tree.path + "/home"
      let long = String(repeating: "d", count: 120)
      let relative = "\(long)/\(long)/file.iso"
      tree.file("home/" + relative)
      let rules = tree.file("rules", "path ~/\(relative)\n")
      let result = sweep(["--no-builtin-rules", "--rules", rules], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(peerMarks(home + "/" + relative) == [.resource])
      #expect(
        getfattr(home + "/" + relative, Self.record).map { String(decoding: $0, as: UTF8.self) }
          == "resource ~/\(relative)")
      #expect(recordNames(under: home) == ["user.skipbackup.sweep=\"resource ~/\(relative)\""])
      let again = sweep(["-v", "--no-builtin-rules", "--rules", rules], home: home)
      #expect(again.standardOutput.isEmpty, "\(again)")
      #expect(again.errors.contains("marked 0, cleared 0, already marked 1,"), "\(again)")
      let undo = sweep(["--undo"], home: home)
      #expect(undo.status == 0, "\(undo)")
      #expect(peerMarks(home + "/" + relative).isEmpty)
      #expect(recordNames(under: home).isEmpty, "\(recordNames(under: home))")
    }

    @Test func quietTurnsOnlyTheProgressLineOffAsForEveryCommand() throws {
      // -q is the QuietOption every command shares: no progress line. The
      // change lines are the sweep's report and stay, byte for byte.
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      tree.file("home/b/Cargo.toml")
      tree.file("home/b/target/x")
      let dryRun = sweep(["-n"], home: home)
      let quietDryRun = sweep(["-n", "-q"], home: home)
      #expect(quietDryRun.status == 0, "\(quietDryRun)")
      #expect(quietDryRun.standardOutput == dryRun.standardOutput)
      let quiet = sweep(["--quiet"], home: home)
      #expect(quiet.status == 0, "\(quiet)")
      #expect(quiet.standardError.isEmpty, "\(quiet)")
      #expect(
        quiet.lines.sorted() == [
          "[Excluded]    \(home)/a/node_modules    (rule node_modules)",
          "[Excluded]    \(home)/b/target    (rule target)",
          "total: excluded 2 items, included 0",
        ], "\(quiet)")
      #expect(markedItems(home) == ["a/node_modules", "b/target"])
      // -q with -v is a usage error, as for mark; nothing changes.
      unlink(home + "/a/package.json")
      let both = sweep(["-q", "-v"], home: home)
      #expect(both.status == 64, "\(both)")
      #expect(both.standardOutput.isEmpty, "\(both)")
      #expect(markedItems(home) == ["a/node_modules", "b/target"])
    }

    @Test func staleMarksAreTakenBackAndHandMarksNeverAre() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 8)
      #expect(sweep([], home: home).status == 0)
      // Hand marks: setfattr, and the tool's own mark, on items no rule covers,
      // and a hand mark added on top of a swept directory.
      setfattr(home + "/Documents", .xdg)
      #expect(skipbackup("mark", Argument(home + "/Pictures")).status == 0)
      setfattr(home + "/code/p002-python/.venv", .legacy)

      // The sentinel goes: node_modules is no longer regenerable.
      unlink(home + "/code/p000-node/package.json")
      // A keep rule now covers target, and the rules file drops the built-in
      // __pycache__ and the .venv rule.
      let rules = tree.file(
        "rules", "keep ~/code/p001-rust\ndisable __pycache__\ndisable .venv\n")
      let result = sweep(["--rules", rules], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(
        result.lines.contains {
          $0.hasPrefix("[Included]    \(home)/code/p000-node/node_modules    (rule gone:")
            && $0.contains("no package.json beside it")
        }, "\(result)")
      #expect(
        result.lines.contains {
          $0.hasPrefix("[Included]    \(home)/code/p001-rust/target    (rule gone:")
            && $0.contains("keep")
        }, "\(result)")
      #expect(peerMarks(home + "/code/p000-node/node_modules").isEmpty)
      #expect(recordOf(home + "/code/p000-node/node_modules") == nil)
      #expect(peerMarks(home + "/code/p001-rust/target").isEmpty)
      #expect(peerMarks(home + "/code/p002-python/pkg/__pycache__").isEmpty)
      // The hand marks stay: only the sweep's resource mark left .venv.
      #expect(peerMarks(home + "/Documents") == [.xdg])
      #expect(peerMarks(home + "/Pictures") == [.resource])
      #expect(peerMarks(home + "/code/p002-python/.venv") == [.legacy])
      #expect(recordOf(home + "/code/p002-python/.venv") == nil)
      // Rules that still apply keep their marks.
      #expect(peerMarks(home + "/code/p003-swift/.build") == [.resource])
    }

    @Test func aMarkWhoseRuleIsGoneIsRecordedAgainUnderTheRuleThatNowMatches() throws {
      // Why a repeat sweep reads the record of an item a rule matches: the
      // rule behind the mark may be another one, gone since (here a path
      // rule the rules file dropped), and status -v must name the one that
      // applies. Skipping the read when a rule matches leaves the old name.
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      let rules = tree.file("rules", "path ~/a/node_modules\n")
      let first = sweep(["--no-builtin-rules", "--rules", rules], home: home)
      #expect(first.status == 0, "\(first)")
      #expect(recordOf(home + "/a/node_modules") == "resource ~/a/node_modules")
      let again = sweep([], home: home)
      #expect(again.status == 0, "\(again)")
      #expect(
        again.lines == [
          "[Excluded]    \(home)/a/node_modules    (rule node_modules)",
          "total: excluded 1 item, included 0",
        ])
      #expect(recordOf(home + "/a/node_modules") == "resource node_modules")
      #expect(peerMarks(home + "/a/node_modules") == [.resource])
      let status = skipbackup("status", "-v", Argument(home + "/a/node_modules"))
      #expect(
        status.lines == [
          "[Excluded]    \(home)/a/node_modules    (marked: resource; by sweep rule node_modules)"
        ], "\(status)")
    }

    @Test func aVirtualEnvironmentThatLostItsPyvenvCfgIsTakenBack() throws {
      // Why a repeat sweep looks for ./pyvenv.cfg even in a .venv it marked
      // under the .venv rule: the sentinel is inside, and when it is gone the
      // rule no longer applies.
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      let config = tree.file("home/p/.venv/pyvenv.cfg")
      #expect(sweep([], home: home).status == 0)
      #expect(recordOf(home + "/p/.venv") == "resource .venv")
      unlink(config)
      let again = sweep([], home: home)
      #expect(again.status == 0, "\(again)")
      #expect(
        again.lines == [
          "[Included]    \(home)/p/.venv    (rule gone: .venv: no pyvenv.cfg in it)",
          "total: excluded 0 items, included 1",
        ], "\(again)")
      #expect(peerMarks(home + "/p/.venv").isEmpty)
      #expect(recordOf(home + "/p/.venv") == nil)
    }

    @Test func undoTakesBackEverySweepMarkEvenInsideExcludedDirectoriesAndOnlyThose() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 8)
      #expect(sweep([], home: home).status == 0)
      // A swept directory inside a directory marked by hand later.
      setfattr(home + "/code/p004-php", .legacy)
      setfattr(home + "/Documents/f0001.pdf", .xdg)
      #expect(skipbackup("mark", "-m", "all", Argument(home + "/Pictures")).status == 0)
      let dry = sweep(["--undo", "-n"], home: home)
      #expect(dry.status == 0, "\(dry)")
      #expect(dry.output.contains("\(home)/code/p004-php/vendor"), "\(dry)")
      #expect(markedItems(home).contains(".npm"))

      let result = sweep(["--undo"], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(result.output.contains("[Included]    \(home)/code/p004-php/vendor"), "\(result)")
      #expect(
        markedItems(home) == ["code/p004-php", "Documents/f0001.pdf", "Pictures"],
        "\(markedItems(home))")
      #expect(peerMarks(home + "/Pictures") == [.legacy, .resource, .xdg])
      #expect(peerMarks(home + "/code/p004-php/vendor").isEmpty)
      #expect(recordNames(under: home).isEmpty, "\(recordNames(under: home))")
    }

    @Test func aDryRunShowsSizesAndATotalAndChangesNothing() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 8)
      let result = sweep(["-n"], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(getfattrMarkedPaths(home).isEmpty)
      let line = result.lines.first { $0.contains("/code/p000-node/node_modules") }
      #expect(line?.hasPrefix("[Excluded]    ") == true, "\(result)")
      #expect(line?.contains("iB") == true, "\(result)")
      #expect(result.lines.last?.hasPrefix("total: would exclude") == true, "\(result)")

      let json = sweep(["-n", "--format", "json"], home: home)
      let objects = jsonObjects(json)
      #expect(objects.count == expectedInHome(projects: 8).count)
      let node = objects.first {
        ($0["path"] as? String)?.hasSuffix("p000-node/node_modules") == true
      }
      #expect(node?["rule"] as? String == "node_modules")
      #expect(node?["excluded"] as? Bool == true)
      #expect((node?["bytes"] as? Int ?? 0) > 0)
      #expect(getfattrMarkedPaths(home).isEmpty)
    }

    @Test func theRulesFileAddsSentinelsNamesPathsAndMechanisms() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/app/App.csproj")
      tree.directory("home/app/bin")
      tree.directory("home/app/obj")
      tree.file("home/env/pyvenv.cfg")
      tree.file("home/big.iso")
      tree.file("home/site/_config.yml")
      tree.directory("home/site/_site")
      tree.directory("home/a/scratch")
      tree.directory("home/other/venv")  // no pyvenv.cfg inside
      tree.file(
        "home/.config/skipbackup/rules",
        """
        # Jekyll, asimov-style with a comment at the end
        sentinel _site _config.yml   # Jekyll
        sentinel env ./pyvenv.cfg
        name scratch
        path ~/big.iso
        mechanisms legacy,resource

        """)
      let result = sweep(["--no-builtin-rules"], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(markedItems(home) == ["site/_site", "env", "a/scratch", "big.iso"])
      #expect(peerMarks(home + "/big.iso") == [.legacy, .resource])
      #expect(recordOf(home + "/big.iso") == "legacy,resource ~/big.iso")
      // With the built-in rules: bin and obj beside *.csproj as well.
      let builtIn = sweep([], home: home)
      #expect(builtIn.status == 0, "\(builtIn)")
      #expect(markedItems(home).isSuperset(of: ["app/bin", "app/obj"]))
      #expect(!markedItems(home).contains("other/venv"))

      // A path rule marks again what an atomic save replaced.
      rename(tree.file("home/big.iso.new"), home + "/big.iso")
      #expect(peerMarks(home + "/big.iso").isEmpty)
      let again = sweep([], home: home)
      #expect(
        again.lines == [
          "[Excluded]    \(home)/big.iso    (rule ~/big.iso)", "total: excluded 1 item, included 0",
        ], "\(again)")
      #expect(peerMarks(home + "/big.iso") == [.legacy, .resource])
    }

    @Test func aKeepRuleWinsEvenBelowWhatARuleWouldMark() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/app/package.json")
      tree.file("home/app/node_modules/mine/index.js")
      tree.file("home/app/node_modules/theirs/package.json")
      tree.file("home/app/node_modules/theirs/node_modules/x/index.js")
      tree.file("home/other/package.json")
      tree.file("home/other/node_modules/y/index.js")
      let rules = tree.file("rules", "keep ~/app/node_modules/m[i]ne\n")
      let result = sweep(["--rules", rules], home: home)
      #expect(result.status == 0, "\(result)")
      // app/node_modules would take mine out of backups: it stays, and the
      // rules still apply below it.
      #expect(
        markedItems(home) == ["app/node_modules/theirs/node_modules", "other/node_modules"],
        "\(result)")
    }

    @Test func keepGlobsMatchWithinOneComponentAndADirectoryKeepCoversItsTree() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      for project in ["a", "x/y", "t", "t/sub/deep"] {
        tree.file("home/\(project)/package.json")
        tree.file("home/\(project)/node_modules/m/index.js")
      }
      // Swept first without keep rules: every node_modules is marked.
      #expect(sweep([], home: home).status == 0)
      #expect(
        markedItems(home) == [
          "a/node_modules", "x/y/node_modules", "t/node_modules", "t/sub/deep/node_modules",
        ])
      // `*` stops at a slash (FNM_PATHNAME): ~/*/node_modules keeps
      // a/node_modules, not x/y/node_modules; ~/t keeps all below it. The
      // sweep's marks they now cover are taken back.
      let rules = tree.file("rules", "keep ~/*/node_modules\nkeep ~/t\n")
      let result = sweep(["--rules", rules], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(markedItems(home) == ["x/y/node_modules"], "\(result)")
      #expect(
        result.lines.sorted() == [
          "[Included]    \(home)/a/node_modules    (rule gone: node_modules: kept by keep ~/*/node_modules (\(rules):1))",
          "[Included]    \(home)/t/node_modules    (rule gone: node_modules: kept by keep ~/*/node_modules (\(rules):1))",
          "[Included]    \(home)/t/sub/deep/node_modules    (rule gone: node_modules: kept by keep ~/t (\(rules):2))",
          "total: excluded 0 items, included 3",
        ], "\(result)")
    }

    @Test func theRulesFileIsFoundTheXDGWay() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.directory("home/x/scratch")
      tree.file("home/.config/skipbackup/rules", "name scratch\n")
      tree.file("xdg/skipbackup/rules", "sentinel nothing-here sentinel\n")
      // XDG_CONFIG_HOME empty means unset: ~/.config.
      let fromHome = sweep(["--no-builtin-rules", "--list-rules"], home: home)
      #expect(fromHome.lines == ["scratch\tname scratch\t\(home)/.config/skipbackup/rules:1"])
      let fromXDG = sweep(
        ["--no-builtin-rules", "--list-rules"], home: home,
        environment: ["XDG_CONFIG_HOME": tree.path + "/xdg"])
      #expect(
        fromXDG.lines == [
          "nothing-here\tsentinel nothing-here sentinel\t\(tree.path)/xdg/skipbackup/rules:1"
        ])
      // No rules file of one's own is no error.
      let none = sweep(
        ["--list-rules"], home: home, environment: ["XDG_CONFIG_HOME": tree.path + "/none"])
      #expect(none.status == 0, "\(none)")
      #expect(none.lines.contains("node_modules\tsentinel node_modules package.json\tbuilt-in"))
      #expect(none.lines.contains { $0.hasPrefix("__pycache__\t") && $0.hasSuffix("\tbuilt-in") })
      #expect(none.lines.contains("xdg-cache\tpath ~/.cache\tbuilt-in"))
    }

    @Test func badRulesStopTheRunBeforeAnythingChangesWithExit64() throws {
      let tree = try TemporaryDirectory()
      let home = try mkhome(tree, projects: 2)
      let cases: [(String, String)] = [
        ("name scratch\nsentinal target Cargo.toml\n", ":2: unknown rule 'sentinal'"),
        ("sentinel target\n", ":1: 'sentinel' takes"),
        ("disable no-such-rule\n", ":1: no built-in rule is called 'no-such-rule'"),
        ("mechanisms legacy,bogus\n", ":1: unknown mechanism 'bogus'"),
        ("path relative/file\n", ":1: 'relative/file' is neither an absolute path nor ~/..."),
      ]
      for (text, message) in cases {
        let rules = tree.file("rules", text)
        let result = sweep(["--rules", rules], home: home)
        #expect(result.status == 64, "\(text): \(result)")
        #expect(result.errors.hasPrefix("skipbackup: \(rules)\(message)"), "\(result)")
        #expect(getfattrMarkedPaths(home).isEmpty)
      }
      let missing = sweep(["--rules", tree.path + "/absent"], home: home)
      #expect(missing.status == 64, "\(missing)")
      #expect(missing.errors.hasPrefix("skipbackup: \(tree.path)/absent: "), "\(missing)")
      #expect(getfattrMarkedPaths(home).isEmpty)
    }

    @Test func gitignoreAsksGitAndStopsWithoutIt() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/repo/.gitignore", "*.log\nout/\n")
      tree.file("home/repo/keep.txt")
      tree.file("home/repo/run.log")
      tree.file("home/repo/sub/deep.log")
      tree.file("home/repo/out/a.o")
      tree.file("home/notrepo/run.log")
      #expect(run(["git", "init", "-q", Argument(home + "/repo")]).status == 0)
      let rules = tree.file("rules", "gitignore\n")

      let withoutGit = sweep(
        ["--rules", rules, "--no-builtin-rules"], home: home, environment: ["PATH": "/nonexistent"])
      #expect(withoutGit.status == 1, "\(withoutGit)")
      #expect(withoutGit.errors.contains("gitignore (\(rules):1): git is not on PATH"))
      #expect(getfattrMarkedPaths(home).isEmpty)

      let result = sweep(["--rules", rules, "--no-builtin-rules"], home: home)
      #expect(result.status == 0, "\(result)")
      // With --directory, git names a directory whose whole content it ignores.
      #expect(markedItems(home) == ["repo/run.log", "repo/sub", "repo/out"])
      #expect(recordOf(home + "/repo/out") == "resource gitignore")
      // git stops ignoring *.log: those marks go, out/ stays.
      tree.file("home/repo/.gitignore", "out/\n")
      let again = sweep(["--rules", rules, "--no-builtin-rules"], home: home)
      #expect(again.status == 0, "\(again)")
      #expect(markedItems(home) == ["repo/out"])
      #expect(again.output.contains("git no longer ignores it"), "\(again)")
    }

    /// A repository's own configuration names programs
    /// (`core.fsmonitor` is the reproduction; hooks, filters, a pager,
    /// includes beside it), and the caller's environment points git
    /// elsewhere; the gitignore rule runs none of them, and still marks
    /// what git ignores. Root with `safe.directory=*` on another user's
    /// repository too.
    @Test func aRepositorysConfigurationRunsNothing() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      let repo = home + "/repo"
      tree.file("home/repo/.gitignore", "*.log\n")
      tree.file("home/repo/.gitattributes", "* filter=evil diff=evil\n")
      tree.file("home/repo/run.log")
      tree.file("home/repo/keep.txt")
      #expect(run(["git", "init", "-q", Argument(repo)]).status == 0)
      let pwned = tree.path + "/PWNED"
      let command = "touch \(pwned); echo"
      let settings = [
        ("core.fsmonitor", command), ("core.pager", command), ("pager.ls-files", "true"),
        ("filter.evil.clean", command), ("filter.evil.smudge", command),
        ("filter.evil.process", command), ("diff.evil.textconv", command),
        ("core.sshCommand", command),
        ("include.path", tree.file("included", "[core]\n\tfsmonitor = \(command)\n")),
      ]
      for (key, value) in settings {
        #expect(
          run(["git", "-C", Argument(repo), "config", "--add", Argument(key), Argument(value)])
            .status == 0)
      }
      for hook in [
        "post-index-change", "pre-commit", "reference-transaction", "fsmonitor-watchman",
      ] {
        let path = tree.file("home/repo/.git/hooks/" + hook, "#!/bin/sh\ntouch \(pwned)\n")
        chmod(path, 0o755)
      }
      let rules = tree.file("rules", "gitignore\n")
      let hostile = [
        "GIT_DIR": tree.path + "/nowhere", "GIT_WORK_TREE": tree.path,
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='\(command)'",
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": command, "GIT_EXEC_PATH": tree.path + "/nowhere",
      ]
      let result = sweep(
        ["--rules", rules, "--no-builtin-rules"], home: home, environment: hostile)
      #expect(result.status == 0, "\(result)")
      #expect(markedItems(home) == ["repo/run.log"])
      #expect(access(pwned, F_OK) != 0, "a repository's configuration ran a program")

      // Root, sweeping another user's repository, where the user's own
      // configuration trusts every directory.
      #expect(skipbackup("clear", "-R", Argument(home)).status == 0)
      #expect(run(["chown", "-R", "nobody:nogroup", Argument(repo)]).status == 0)
      let gitHome = tree.directory("githome")
      tree.file("githome/.gitconfig", "[safe]\n\tdirectory = *\n")
      let asRoot = sweep(
        ["--rules", rules, "--no-builtin-rules", home], home: home,
        environment: ["HOME": gitHome])
      #expect(asRoot.status == 0, "\(asRoot)")
      #expect(markedItems(home) == ["repo/run.log"])
      #expect(access(pwned, F_OK) != 0, "a repository's configuration ran a program as root")
    }

    /// A group member plants a sweep record on the owner's
    /// hand-marked file; neither the owner's `--undo` nor a sweep takes
    /// the owner's nodump flag and xdg mark away. A record on an item only
    /// its owner may write is still honoured.
    @Test func aRecordOthersMayHaveWrittenTakesNothingBack() throws {
      let tree = try TemporaryDirectory()
      chmod(tree.path, 0o755)
      let home = tree.directory("home")
      let notes = tree.file("home/notes")
      #expect(run(["chgrp", "nogroup", Argument(notes)]).status == 0)
      chmod(notes, 0o664)
      #expect(skipbackup("mark", "-m", "nodump,xdg", Argument(notes)).status == 0)
      let forged = run(
        ["setfattr", "-n", "user.skipbackup.sweep.nodump,xdg:forged", Argument(notes)],
        asNobody: true)
      #expect(forged.status == 0, "\(forged)")
      #expect(recordOf(notes) == "nodump,xdg forged")
      func nodump() -> Bool {
        run(["lsattr", "-d", Argument(notes)]).output.prefix(while: { $0 != " " }).contains("d")
      }

      for arguments in [["--undo"], []] {
        let result = sweep(arguments + [home], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(peerMarks(notes) == [.xdg], "\(arguments)")
        #expect(nodump(), "\(arguments)")
      }
      let undo = sweep(["--undo", "-v", home], home: home)
      #expect(undo.output.contains("\(notes)    (left as it is: others may write it"), "\(undo)")

      // Only the owner may write it now: the same record is honoured.
      chmod(notes, 0o644)
      #expect(sweep(["--undo", home], home: home).status == 0)
      #expect(peerMarks(notes).isEmpty)
      #expect(!nodump())
    }

    /// The owner's `clear -m xdg` on an item others may write removes a
    /// record found there rather than write it again as the owner's: once
    /// the item is the owner's alone, a forged `nodump,xdg` record turned
    /// into `nodump` would make `--undo` clear the owner's own nodump flag.
    @Test func clearNeverWritesAgainARecordOthersMayHaveWritten() throws {
      let tree = try TemporaryDirectory()
      chmod(tree.path, 0o755)
      let home = tree.directory("home")
      let notes = tree.file("home/notes")
      #expect(run(["chgrp", "nogroup", Argument(notes)]).status == 0)
      chmod(notes, 0o664)
      #expect(skipbackup("mark", "-m", "nodump,xdg", Argument(notes)).status == 0)
      let forged = run(
        ["setfattr", "-n", "user.skipbackup.sweep.nodump,xdg:forged", Argument(notes)],
        asNobody: true)
      #expect(forged.status == 0, "\(forged)")
      #expect(skipbackup("clear", "-m", "xdg", Argument(notes)).status == 0)
      #expect(recordOf(notes) == nil)
      chmod(notes, 0o644)
      #expect(sweep(["--undo", home], home: home).status == 0)
      #expect(
        run(["lsattr", "-d", Argument(notes)]).output.prefix(while: { $0 != " " }).contains("d"))
    }

    /// A tree whose `home` holds one project, `a`, with a node_modules that
    /// the built-in rules mark; the tree is open to the user nobody.
    private func nodeProject() throws -> TemporaryDirectory {
      let tree = try TemporaryDirectory()
      chmod(tree.path, 0o755)
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      return tree
    }

    /// A forged record on an item others may write does not vouch for the
    /// attribute names beside it: a group member who plants a record and
    /// an xdg attribute that is no mark (`true`) on the owner's
    /// node_modules does not make the sweep say "already marked" and leave
    /// it unmarked. Trust is decided where the state is read, so the marks
    /// are read by their values, as on any item without a record.
    @Test func aForgedRecordDoesNotMakeANameAMark() throws {
      let tree = try nodeProject()
      let home = tree.path + "/home"
      let modules = home + "/a/node_modules"
      #expect(run(["chgrp", "nogroup", Argument(modules)]).status == 0)
      chmod(modules, 0o775)
      for attribute in [
        ["-n", "user.skipbackup.sweep.xdg:node_modules"],
        ["-n", "user.xdg.robots.backup", "-v", "true"],
      ] {
        let forged = run(
          ["setfattr"] + attribute.map { Argument($0) } + [Argument(modules)], asNobody: true)
        #expect(forged.status == 0, "\(forged)")
      }
      #expect(recordOf(modules) == "xdg node_modules")

      let result = sweep(["-v", home], home: home)
      #expect(result.status == 0, "\(result)")
      #expect(markedItems(home) == ["a/node_modules"], "\(result)")
      #expect(result.errors.contains("marked 1, cleared 0, already marked 0"), "\(result)")
    }

    /// An item gone when the sweep writes or removes its marks goes the way
    /// of every vanished entry of a walk (`Reporter.unreadable`). `--undo`
    /// looks it up again at the walk's end and takes its marks back if it
    /// is there again (renamed away and back); a sweep, whose walk keeps
    /// whole listings for the rules, counts it vanished at once, as it did.
    /// The debug build's forced `ENOENT` on the first call stands for that
    /// moment.
    @Test func anItemGoneWhenItIsMarkedOrClearedIsTheWalksVanishedEntry() throws {
      let tree = try nodeProject()
      let home = tree.path + "/home"
      let swept = sweep(
        ["-v", home], home: home, environment: ["SKIPBACKUP_FORCE_ERRNO": "setxattrat:ENOENT:1:1"])
      #expect(swept.status == 0, "\(swept)")
      #expect(markedItems(home).isEmpty, "\(swept)")
      #expect(swept.errors.contains("marked 0, cleared 0"), "\(swept)")
      #expect(swept.errors.contains("vanished 1"), "\(swept)")

      #expect(sweep([home], home: home).status == 0)
      #expect(markedItems(home) == ["a/node_modules"])
      let undone = sweep(
        ["--undo", "-v", home], home: home,
        environment: ["SKIPBACKUP_FORCE_ERRNO": "removexattrat:ENOENT:1:1"])
      #expect(undone.status == 0, "\(undone)")
      #expect(markedItems(home).isEmpty, "\(undone)")
      #expect(recordOf(home + "/a/node_modules") == nil, "\(undone)")
      #expect(!undone.errors.contains("vanished"), "\(undone)")
    }

    /// Git giving no answer (a corrupt index: exit 128) is
    /// not git no longer ignoring, and a ROOT below the work tree's top
    /// asks git there: neither takes back a mark git still wants.
    @Test func gitGivingNoAnswerOrARootBelowTheTopTakesNothingBack() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/repo/.gitignore", "*.log\n")
      tree.file("home/repo/keep.txt")
      tree.file("home/repo/run.log")
      tree.file("home/repo/src/main.c")
      tree.file("home/repo/src/build.log")
      #expect(run(["git", "init", "-q", Argument(home + "/repo")]).status == 0)
      let rules = tree.file("rules", "gitignore\n")
      let swept: Set = ["repo/run.log", "repo/src/build.log"]
      #expect(sweep(["--rules", rules, "--no-builtin-rules"], home: home).status == 0)
      #expect(markedItems(home) == swept)

      for root in [home + "/repo/src", home + "/repo/src/"] {
        let below = sweep(["--rules", rules, "--no-builtin-rules", "-v", root], home: home)
        #expect(below.status == 0, "\(below)")
        #expect(markedItems(home) == swept, "\(root): \(below)")
      }

      let index = home + "/repo/.git/index"
      #expect(FileManager.default.createFile(atPath: index, contents: Data("garbage".utf8)))
      let unanswered = sweep(["--rules", rules, "--no-builtin-rules"], home: home)
      #expect(unanswered.status == 1, "\(unanswered)")
      #expect(unanswered.errors.contains("git ls-files could not say what git ignores here"))
      #expect(markedItems(home) == swept, "\(unanswered)")
      unlink(index)
      #expect(sweep(["--rules", rules, "--no-builtin-rules"], home: home).status == 0)
      #expect(markedItems(home) == swept)
    }

    /// A dry sweep meets what the sweep would: here nobody
    /// may not write root's node_modules, and both say so, with exit 1.
    @Test func aDrySweepReportsTheFailuresTheSweepWouldMeet() throws {
      let tree = try nodeProject()
      let home = tree.path + "/home"
      let dry = sweep(["-n"], home: home, asNobody: true)
      let real = sweep([], home: home, asNobody: true)
      #expect(real.status == 1, "\(real)")
      #expect(dry.status == real.status, "\(dry)")
      for result in [dry, real] {
        #expect(
          result.errors.hasPrefix("skipbackup: \(home)/a/node_modules: permission denied"),
          "\(result)")
      }
      #expect(getfattrMarkedPaths(home).isEmpty)
    }

    /// A symlinked $HOME, or a ROOT given through a link
    /// (with or without a trailing slash), is swept, and undone; it was a
    /// silent no-op with exit 0.
    @Test func aHomeOrRootThroughALinkIsSwept() throws {
      let tree = try TemporaryDirectory()
      tree.file("real/a/package.json")
      tree.file("real/a/node_modules/x")
      tree.symlink("home", to: "real")
      let home = tree.path + "/home"
      let real = tree.path + "/real"
      for arguments in [[], [home], [home + "/"]] {
        let result = sweep(arguments, home: home)
        #expect(result.status == 0, "\(result)")
        #expect(markedItems(real) == ["a/node_modules"], "\(arguments): \(result)")
        let undo = sweep(["--undo"] + arguments, home: home)
        #expect(undo.status == 0, "\(undo)")
        #expect(markedItems(real).isEmpty, "\(arguments): \(undo)")
      }
    }

    /// A keep glob written through a symbolic link, `.` or
    /// `..` keeps what it names (`keep ~/proj/app*` with `proj -> code`
    /// matched nothing, so kept items were marked).
    @Test func aKeepGlobThroughALinkDotOrDotDotStillKeeps() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/code/app1/package.json")
      tree.file("home/code/app1/node_modules/x")
      tree.file("home/code/lib/package.json")
      tree.file("home/code/lib/node_modules/x")
      tree.symlink("home/proj", to: "code")
      for keep in ["~/proj/app*", "~/proj/./app*", "~/code/../proj/app*", "~/proj/app*/."] {
        let rules = tree.file("rules", "keep \(keep)\n")
        let result = sweep(["--rules", rules], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(markedItems(home) == ["code/lib/node_modules"], "\(keep): \(result)")
        #expect(sweep(["--undo"], home: home).status == 0)
      }
    }

    /// `--rules ""` is a usage error (it was "no rules
    /// file", and with --no-builtin-rules took back every sweep mark);
    /// `--rules /dev/zero` is refused (it aborted for want of memory); a
    /// NUL byte in a line is refused (a path rule marked a shorter path).
    @Test func anEmptyEndlessOrNULHoldingRulesFileIsRefused() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      tree.file("home/x")
      #expect(sweep([], home: home).status == 0)
      let empty = sweep(["--rules", "", "--no-builtin-rules"], home: home)
      #expect(empty.status == 64, "\(empty)")
      #expect(empty.errors.contains("--rules takes a file name, not an empty one."))
      #expect(markedItems(home) == ["a/node_modules"])
      let zero = sweep(["--rules", "/dev/zero"], home: home)
      #expect(zero.status == 64, "\(zero)")
      #expect(
        zero.errors
          == "skipbackup: /dev/zero: cannot read the rules file: larger than 1 MiB, which no rules file is\n"
      )
      let rules = tree.path + "/rules"
      #expect(
        FileManager.default.createFile(
          atPath: rules, contents: Data("path \(home)/x\0/more\n".utf8)))
      let nul = sweep(["--rules", rules], home: home)
      #expect(nul.status == 64, "\(nul)")
      #expect(nul.errors.hasPrefix("skipbackup: \(rules):1: the line holds a NUL byte"), "\(nul)")
      #expect(markedItems(home) == ["a/node_modules"])
    }

    /// `clear -m xdg` on a swept item leaves the record of
    /// its other marks (which `--undo` still takes back); a sweep with more
    /// mechanisms adds them to items it marked before; explain advises
    /// that sweep, not a hand mark.
    @Test func clearingOneMarkOrAddingMechanismsKeepsTheSweepsRecord() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      let modules = home + "/a/node_modules"
      #expect(sweep([], home: home).status == 0)
      #expect(recordOf(modules) == "resource node_modules")
      let advice = skipbackup("explain", Argument(modules))
      let prefix = "borg2        backs it up; to leave it out: "
      let line = try #require(advice.lines.first { $0.hasPrefix("  " + prefix) }, "\(advice)")
      let command = try #require(
        line.dropFirst(prefix.count + 2).components(separatedBy: ", the sweep of its directory")
          .first)
      #expect(command == "skipbackup sweep -m resource,xdg -- \(home)/a", "\(advice)")
      // The advice as written, from elsewhere, with a HOME that does not
      // hold the item: it sweeps the item's directory, not $HOME.
      let elsewhere = tree.directory("elsewhere")
      let tools = (skipbackupPath as NSString).deletingLastPathComponent
      let more = run(
        ["sh", "-c", Argument(command)], directory: elsewhere,
        environment: [
          "HOME": elsewhere, "XDG_CONFIG_HOME": "", "PATH": tools + ":/usr/bin:/bin",
        ])
      #expect(more.status == 0, "\(more)")
      #expect(peerMarks(modules) == [.resource, .xdg], "\(more)")
      #expect(recordOf(modules) == "resource,xdg node_modules")
      let again = sweep(["-m", "resource,xdg", "-v"], home: home)
      #expect(again.errors.contains("marked 0, cleared 0, already marked 1"), "\(again)")
      // What this run kept out, said as such; and no total
      // line from a run that changed nothing.
      #expect(again.errors.hasSuffix("newly kept out 0 bytes (0 B)\n"), "\(again)")
      #expect(again.output.isEmpty, "\(again)")

      #expect(skipbackup("clear", "-m", "xdg", Argument(modules)).status == 0)
      #expect(peerMarks(modules) == [.resource])
      #expect(recordOf(modules) == "resource node_modules")
      #expect(sweep(["--undo"], home: home).status == 0)
      #expect(peerMarks(modules).isEmpty)
      #expect(recordOf(modules) == nil)
    }

    @Test func statusNamesTheRuleAndMarkAndClearTakeTheRecordAway() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      tree.file("home/b/package.json")
      tree.file("home/b/node_modules/x")
      #expect(sweep([], home: home).status == 0)
      let status = skipbackup("status", "-v", Argument(home + "/a/node_modules"))
      #expect(
        status.lines == [
          "[Excluded]    \(home)/a/node_modules    (marked: resource; by sweep rule node_modules)"
        ], "\(status)")
      let json = jsonObjects(
        skipbackup("status", "--format", "json", Argument(home + "/a/node_modules")))
      #expect(json.first?["sweep_rule"] as? String == "node_modules")

      // mark makes a's mark a hand mark; clear removes b's with its record.
      #expect(skipbackup("mark", Argument(home + "/a/node_modules")).status == 0)
      #expect(recordOf(home + "/a/node_modules") == nil)
      #expect(peerMarks(home + "/a/node_modules") == [.resource])
      #expect(skipbackup("clear", Argument(home + "/b/node_modules")).status == 0)
      #expect(recordOf(home + "/b/node_modules") == nil)
      #expect(peerMarks(home + "/b/node_modules").isEmpty)
      // No sweep takes a's mark back, even without its sentinel; undo neither.
      unlink(home + "/a/package.json")
      #expect(sweep([], home: home).status == 0)
      #expect(sweep(["--undo"], home: home).status == 0)
      #expect(peerMarks(home + "/a/node_modules") == [.resource])
    }

    @Test func anUnreadableDirectoryIsReportedAndTheRestIsSwept() throws {
      let tree = try TemporaryDirectory()
      let home = tree.directory("home")
      tree.file("home/a/package.json")
      tree.file("home/a/node_modules/x")
      tree.file("home/locked/inside/package.json")
      tree.file("home/z/Cargo.toml")
      tree.file("home/z/target/x")
      #expect(run(["chown", "-R", "nobody:nogroup", Argument(home)]).status == 0)
      chmod(home + "/locked", 0)
      defer { chmod(home + "/locked", 0o755) }
      let result = sweep([home], home: home, asNobody: true)
      #expect(result.status == 1, "\(result)")
      #expect(
        diagnostic(result, naming: home + "/locked")?.hasPrefix("permission denied") == true,
        "\(result)")
      #expect(markedItems(home) == ["a/node_modules", "z/target"])
    }

    @Test func theSystemdUnitsPassSystemdAnalyzeVerify() throws {
      let units = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../dist/systemd").standardized.path
      let runtime = try TemporaryDirectory()
      let files = [
        "systemd/skipbackup-sweep.service", "systemd/skipbackup-sweep.timer",
        "examples/skipbackup-backup.service", "examples/skipbackup-backup.timer",
      ].map {
        Argument(units + "/../" + $0)
      }
      let result = run(
        ["systemd-analyze", "--user", "verify"] + files,
        environment: ["XDG_RUNTIME_DIR": runtime.path])
      #expect(result.status == 0, "\(result)")
      // verify only warns about unknown keys: any output is a defect.
      #expect(result.standardError.isEmpty, "\(result)")
      for timer in ["systemd/skipbackup-sweep.timer", "examples/skipbackup-backup.timer"] {
        #expect(
          try String(contentsOfFile: units + "/../" + timer, encoding: .utf8)
            .contains("OnCalendar=daily"), "\(timer)")
      }
      // The check can fail: a unit whose program does not exist is refused.
      let broken = runtime.file(
        "broken.service", "[Service]\nType=oneshot\nExecStart=/nonexistent/skipbackup sweep\n")
      let refused = run(
        ["systemd-analyze", "--user", "verify", Argument(broken)],
        environment: ["XDG_RUNTIME_DIR": runtime.path])
      #expect(refused.status != 0, "\(refused)")
    }
  }
}
