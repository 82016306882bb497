// The command line, parsed into each engine's plain configuration: every
// option reaches the field it names, the defaults are each command's own,
// usage errors stop before any engine runs, and check's fast reading of its
// common spellings is the parser's reading.

import ArgumentParser
import SkipBackupBrowse
import SkipBackupCore
import SkipBackupExplain
import SkipBackupExport
import SkipBackupListing
import SkipBackupMarking
import SkipBackupReport
import SkipBackupSweep
import SkipBackupUsage
import SkipBackupView
import SystemPackage
import Testing
import TestSupport

@testable import skipbackup

@Suite(.onTestThreads) struct EngineConfigurationTests {
  /// The command `arguments` parse into, as the executable parses them.
  private func parsed<Command: ParsableCommand>(_ arguments: [String], as _: Command.Type) throws
    -> Command
  {
    let command = try SkipBackupCommand.parseAsRoot(arguments)
    return try #require(command as? Command, "\(arguments) parsed as \(type(of: command))")
  }

  @Test func markAndClear() throws {
    #expect(
      try parsed(["mark", "a"], as: MarkCommand.self).engine
        == MarkingRun(action: .mark, mechanisms: [.resource], items: ItemSelection(paths: ["a"])))
    #expect(
      try parsed(
        [
          "mark", "-R", "-x", "-L", "-m", "xdg,legacy", "-m", "nodump", "-v", "--form", "smb", "--",
          "-a", "b",
        ], as: MarkCommand.self
      ).engine
        == MarkingRun(
          action: .mark, mechanisms: [.legacy, .xdg, .nodump],
          items: ItemSelection(
            paths: ["-a", "b"], recursive: true, dereference: true, oneFileSystem: true),
          verbose: true, form: .smb))
    #expect(
      try parsed(["mark", "-nq0", "--files-from", "-"], as: MarkCommand.self).engine
        == MarkingRun(
          action: .mark, mechanisms: [.resource],
          items: ItemSelection(paths: [], filesFrom: "-", nullSeparated: true), quiet: true,
          dryRun: true))
    #expect(
      try parsed(["clear", "--mechanism=apple", "--files-from=list", "c"], as: ClearCommand.self)
        .engine
        == MarkingRun(
          action: .clear, mechanisms: .apple, items: ItemSelection(paths: ["c"], filesFrom: "list"))
    )
    #expect(
      try parsed(["clear", "c"], as: ClearCommand.self).engine
        == MarkingRun(action: .clear, mechanisms: .all, items: ItemSelection(paths: ["c"])))
  }

  @Test func listStatusAndCheck() throws {
    #expect(
      try parsed(["list", "r"], as: ListCommand.self).engine
        == ListRun(roots: ["r"], mechanisms: .all))
    #expect(
      try parsed(
        ["list", "--included", "-0x", "-q", "-m", "apple", "r", "s"], as: ListCommand.self
      )
      .engine
        == ListRun(
          roots: ["r", "s"], mechanisms: .apple, selection: .included, nullTerminated: true,
          oneFileSystem: true, quiet: true))
    #expect(
      try parsed(["status", "-Rv", "--format", "json", "p"], as: StatusCommand.self).engine
        == StatusRun(
          items: ItemSelection(paths: ["p"], recursive: true), mechanisms: .all, format: .json,
          verbose: true))
    #expect(
      try parsed(["check", "-L", "-m", "nodump", "p", "q"], as: CheckCommand.self).engine
        == CheckRun(paths: ["p", "q"], mechanisms: [.nodump], dereference: true))
    // -m's value joined to it, as check's fast reading has always taken it.
    #expect(
      try parsed(["status", "-mxdg,legacy", "p"], as: StatusCommand.self).engine.mechanisms
        == [.legacy, .xdg])
  }

  @Test func explainAndExport() throws {
    #expect(
      try parsed(["explain", "-L", "--format", "json", "--", "-p"], as: ExplainCommand.self).engine
        == ExplainRun(paths: ["-p"], dereference: true, format: .json))
    #expect(
      try parsed(["export", "--for", "borg", "r"], as: ExportCommand.self).engine
        == ExportRun(root: "r", tool: .borg, mechanisms: .all))
    #expect(
      try parsed(
        ["export", "--for=tar", "-o", "rules", "-x", "-q", "-m", "nodump,cachedir", "r"],
        as: ExportCommand.self
      ).engine
        == ExportRun(
          root: "r", tool: .tar, mechanisms: [.nodump, .cachedir], output: "rules",
          oneFileSystem: true, quiet: true))
    #expect(
      try parsed(["export", "--for", "deja-dup"], as: ExportCommand.self).appEngine
        == AppExportRun(app: .dejaDup, roots: [], mechanisms: .all))
    #expect(
      try parsed(
        ["export", "--for=vorta", "--apply", "--profile", "Home", "-q", "a", "b"],
        as: ExportCommand.self
      ).appEngine
        == AppExportRun(
          app: .vorta, roots: ["a", "b"], apply: true, profile: "Home", mechanisms: .all,
          quiet: true))
  }

  @Test func duAndRun() throws {
    #expect(
      try parsed(["du"], as: DuCommand.self).engine == UsageRun(roots: ["."], mechanisms: .all))
    #expect(
      try parsed(
        [
          "du", "-x", "--apparent-size", "--top", "0", "--format", "json", "-q", "-m", "xdg", "a",
          "b",
        ],
        as: DuCommand.self
      ).engine
        == UsageRun(
          roots: ["a", "b"], mechanisms: [.xdg], apparentSize: true, top: 0, format: .json,
          oneFileSystem: true, quiet: true))
    #expect(
      try parsed(["run", "r", "--", "tar", "-c", "--", "r"], as: RunCommand.self).engine
        == ViewRun(
          roots: ["r"], command: [Array("tar".utf8), Array("-c".utf8), Array("--".utf8), [0x72]],
          mechanisms: .all))
    // A leading -- ends the options: -x is then a ROOT.
    #expect(
      try parsed(
        ["run", "-x", "--sweep", "--snapshot", "-q", "-m", "apple", "--", "-x", "s", "--", "true"],
        as: RunCommand.self
      ).engine
        == ViewRun(
          roots: ["-x", "s"], command: [Array("true".utf8)], mechanisms: .apple,
          oneFileSystem: true, sweepFirst: true, snapshot: true, quiet: true))
  }

  @Test func sweepAndBrowse() throws {
    // No ROOT: the engine sweeps $HOME, which it reads when it runs.
    #expect(try parsed(["sweep"], as: SweepCommand.self).engine == SweepRun(roots: []))
    #expect(
      try parsed(
        [
          "sweep", "-xnv", "--rules", "my rules", "--no-builtin-rules", "-m", "xdg", "--format",
          "json", "a", "b",
        ], as: SweepCommand.self
      ).engine
        == SweepRun(
          roots: ["a", "b"], rulesFile: "my rules", builtInRules: false, mechanisms: [.xdg],
          oneFileSystem: true, dryRun: true, verbose: true, format: .json))
    #expect(
      try parsed(["sweep", "--undo", "-q", "r"], as: SweepCommand.self).engine
        == SweepRun(roots: ["r"], undo: true, quiet: true))
    #expect(
      try parsed(["sweep", "--list-rules"], as: SweepCommand.self).engine
        == SweepRun(roots: [], listRules: true))

    // No -m: every mechanism counts, m writes what mark writes and c
    // removes what clear removes.
    let plain = try parsed(["browse"], as: BrowseCommand.self).engine
    #expect(plain == BrowseRun(root: ".", confirmAbove: 1 << 30))
    #expect(plain.counted == .all && plain.marking == [.resource])
    #expect(plain.marking == (try parsed(["mark", "p"], as: MarkCommand.self).engine.mechanisms))
    #expect(
      plain.clearing == (try parsed(["clear", "p"], as: ClearCommand.self).engine.mechanisms))
    let given = try parsed(
      ["browse", "-x", "-m", "nodump", "--confirm-above", "500M", "r"], as: BrowseCommand.self
    ).engine
    #expect(
      given
        == BrowseRun(root: "r", mechanisms: [.nodump], oneFileSystem: true, confirmAbove: 500 << 20)
    )
    #expect(given.counted == [.nodump] && given.marking == [.nodump] && given.clearing == [.nodump])
    #expect(
      try parsed(["browse", "--confirm-above", "0", "r"], as: BrowseCommand.self).engine
        .confirmAbove
        == 0)
  }

  /// What the user must change first is refused by the parser, with exit
  /// status 64 (2 for check), before any engine is made.
  @Test(arguments: [
    ["mark"], ["mark", "-v", "-q", "a"], ["status", "-0", "a"], ["list", "-m", "bogus", "r"],
    ["export", "r"], ["export", "--for", "zip", "r"], ["export", "--for", "borg", "a", "b"],
    ["export", "--for", "deja-dup", "--profile", "p"], ["export", "--for", "vorta", "-o", "f"],
    ["export", "--for", "tar", "--apply", "r"], ["explain"], ["clear", "--form", "smb", "a"],
    ["status", "--format", "xml", "a"], ["sweep", "--undo", "--list-rules"],
    ["sweep", "--rules", "", "r"], ["sweep", "-m", "bogus"], ["sweep", "--format", "xml"],
    ["browse", "--confirm-above", "5X"], ["browse", "--confirm-above", "-1"], ["browse", "a", "b"],
    ["du", "--apparent-size", "--top"], ["run", "-m", "bogus", "r", "--", "true"],
  ])
  func usageErrorsAreRefusedBeforeAnEngine(arguments: [String]) {
    #expect(throws: (any Error).self) { try SkipBackupCommand.parseAsRoot(arguments) }
    do {
      _ = try SkipBackupCommand.parseAsRoot(arguments)
    } catch {
      #expect(SkipBackupCommand.exitCode(for: error).rawValue == 64, "\(arguments): \(error)")
    }
  }

  /// run takes every word after its options as they come (ROOTs, then
  /// COMMAND), so a misspelt option is told as the parser tells it for
  /// every other command, with the nearest of run's; one after a ROOT is
  /// told that options go first, and one with no ROOT or no COMMAND what
  /// is missing; list's two selections refused together in words of ours.
  @Test(arguments: [
    (
      ["run", "--snapshto", "r", "--", "true"],
      "Unknown option '--snapshto'. Did you mean '--snapshot'?"
    ),
    (["run", "-X", "r", "--", "true"], "Unknown option '-X'"),
    (["run", "--sweeep", "r", "--", "true"], "Unknown option '--sweeep'. Did you mean '--sweep'?"),
    (["run", "--bogus-thing", "r", "--", "true"], "Unknown option '--bogus-thing'"),
    (["run", "r", "--snapshot", "--", "true"], "--snapshot: options go before the ROOTs"),
    // ROOT forgotten: the -- only ended the options.
    (
      ["run", "--", "true"],
      "Give at least one ROOT, then --, then COMMAND: no -- follows true (a -- before the first ROOT only ends the options)."
    ),
    (["run", "r", "true"], "Give at least one ROOT, then --, then COMMAND: no -- follows r."),
    (["run", "r", "--"], "Give the COMMAND to run after ROOT... --."),
    (["run", "--", "--", "true"], "Give at least one ROOT, then --, then COMMAND."),
    (["list", "--excluded", "--included", "r"], "--excluded and --included cannot go together"),
    (["list", "--included", "--excluded", "r"], "--excluded and --included cannot go together"),
    (["du", "--top", "-1", "r"], "--top must be 0 or more, not -1"),
  ])
  func usageErrorsSayWhatIsWrong(arguments: [String], says: String) {
    do {
      _ = try SkipBackupCommand.parseAsRoot(arguments)
      Issue.record("\(arguments) parsed")
    } catch {
      #expect(SkipBackupCommand.exitCode(for: error).rawValue == 64, "\(arguments): \(error)")
      let message = SkipBackupCommand.message(for: error)
      #expect(message.hasPrefix(says), "\(arguments): \(message)")
    }
  }

  /// `check PATH...` with no option is read without the parser, for speed;
  /// that reading gives the parser's configuration, and any option sends the
  /// line to the parser.
  @Test(arguments: [["check", "p"], ["check", "p", "q"], ["check", "-", "p"], ["check", "a b"]])
  func checksFastReadingIsTheParsersReading(arguments: [String]) throws {
    let fast = try #require(CheckCommand.fastEngine(arguments), "\(arguments)")
    #expect(fast == (try parsed(arguments, as: CheckCommand.self).engine), "\(arguments)")
  }

  @Test(arguments: [
    ["check", "--help"], ["check"], ["check", "-m"], ["check", "-m", "bogus", "p"],
    ["check", "-Lp"], ["check", "--version"], ["status", "p"], ["check", "-L", "p"],
    ["check", "p", "-m", "xdg"], ["check", "--", "-p"], ["check", "--mechanism=xdg", "p"],
  ])
  func whatChecksFastReadingDoesNotKnowGoesToTheParser(arguments: [String]) {
    #expect(CheckCommand.fastEngine(arguments) == nil, "\(arguments)")
  }
}
