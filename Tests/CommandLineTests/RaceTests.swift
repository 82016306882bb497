import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// At the exact point where a racing process hurt:
  /// the debug build runs a program of the test's just before the Nth call
  /// of a system call (`SKIPBACKUP_RACE`, Sources/SkipBackupSystem/Mocking.swift),
  /// so each race happens on every run, where scripts/torture's timed races
  /// met them 2 times in 120,000 item checks (a mark racing the sweep) and 8
  /// times in 1,000 runs (a link swapped in under the sweep). The call
  /// numbers are the run's own, read with strace on this tree: the sweep
  /// writes its record (the first `setxattrat`) and then its mark (the
  /// second); `mark -R` opens the ROOT, lists it, and then opens its entry
  /// (the third `openat`); `clear` removes the sweep's record (the first
  /// `lremovexattr`) and then the mark (the second). Each racing program
  /// leaves a file behind, and each test checks it is there: a race that
  /// did not happen fails.
  @Suite struct RaceTests {
    /// A home whose one project has a `node_modules` the built-in rules mark.
    private struct Home {
      let tree: TemporaryDirectory
      var home: String { tree.path + "/home" }
      var modules: String { home + "/code/p/node_modules" }
      var ran: String { tree.path + "/race-ran" }

      init() throws {
        tree = try TemporaryDirectory()
        tree.file("home/code/p/package.json", "{}")
        tree.directory("home/code/p/node_modules")
      }

      /// An executable script of `lines`, which also leaves `ran` behind.
      func script(_ name: String, _ lines: String) -> String {
        let path = tree.file(name, "#!/bin/sh\nset -e\n\(lines)\ntouch '\(ran)'\n")
        chmod(path, 0o755)
        return path
      }

      func sweep(_ arguments: [String] = [], race: String? = nil) -> ProcessResult {
        var variables = ["HOME": home, "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""]
        if let race { variables["SKIPBACKUP_RACE"] = race }
        return run(
          [Argument(skipbackupPath), "sweep"] + arguments.map { Argument($0) } + [Argument(home)],
          environment: variables)
      }

      /// The sweep's record on `path`, as getfattr dumps its names.
      func records(_ path: String) -> [String] {
        getfattrDump(path).filter { $0.hasPrefix("user.skipbackup.sweep") }
      }
    }

    @Test func aHandMarkRacingTheSweepStaysAHandMarkThatUndoLeaves() throws {
      let home = try Home()
      // A person's mark, written by setfattr between the sweep's record and
      // its mark: the mark is theirs, and the record must not claim it.
      let mark = home.script(
        "mark.sh",
        "setfattr -n \(PeerMark.resource.attribute) -v 0x\(PeerMark.resource.valueHex) '\(home.modules)'"
      )
      let swept = home.sweep(["-v"], race: "setxattrat:2:\(mark)")
      #expect(swept.status == 0, "\(swept)")
      #expect(FileManager.default.fileExists(atPath: home.ran), "the race did not happen: \(swept)")
      #expect(swept.errors.contains("already marked 1"), "\(swept)")
      #expect(home.records(home.modules).isEmpty, "\(getfattrDump(home.modules))")
      // So the undo takes nothing back: the person's mark stays.
      let undone = home.sweep(["--undo"])
      #expect(undone.status == 0, "\(undone)")
      #expect(peerMarks(home.modules) == [.resource])
    }

    @Test func aClearRacingTheSweepLeavesTheSweepsMarkWithItsRecord() throws {
      let home = try Home()
      // `clear` between the record and the mark finds no mark to clear, and
      // leaves the record to the sweep: the mark written after it is the
      // sweep's, and must carry its record, or no undo would take it back.
      let clear = home.script("clear.sh", "'\(skipbackupPath)' clear '\(home.modules)'")
      let swept = home.sweep(race: "setxattrat:2:\(clear)")
      #expect(swept.status == 0, "\(swept)")
      #expect(FileManager.default.fileExists(atPath: home.ran), "the race did not happen: \(swept)")
      #expect(peerMarks(home.modules) == [.resource])
      let records = home.records(home.modules)
      #expect(
        records.count == 1 && records[0].hasPrefix("user.skipbackup.sweep.resource:node_modules"),
        "\(records)")
      let undone = home.sweep(["--undo"])
      #expect(undone.status == 0, "\(undone)")
      #expect(peerMarks(home.modules).isEmpty)
      #expect(home.records(home.modules).isEmpty)
    }

    @Test func aSweepBetweenClearsRecordAndMarkLeavesNeitherBehind() throws {
      let home = try Home()
      let first = home.sweep()
      #expect(first.status == 0, "\(first)")
      #expect(peerMarks(home.modules) == [.resource])
      // A sweep between clear's two removals (the record, the first
      // `lremovexattr`, then the mark): it sees a mark without a record, a
      // hand mark, and leaves it to the clear. Had the mark gone first,
      // this sweep would have marked again and the clear taken its record:
      // a sweep's mark that no undo takes back.
      let sweep = home.script(
        "sweep.sh",
        "HOME='\(home.home)' XDG_CONFIG_HOME= XDG_CACHE_HOME= '\(skipbackupPath)' sweep -q '\(home.home)'"
      )
      let cleared = run(
        [Argument(skipbackupPath), "clear", "-v", Argument(home.modules)],
        environment: ["SKIPBACKUP_RACE": "lremovexattr:2:\(sweep)"])
      #expect(cleared.status == 0, "\(cleared)")
      #expect(
        FileManager.default.fileExists(atPath: home.ran), "the race did not happen: \(cleared)")
      #expect(peerMarks(home.modules).isEmpty, "\(getfattrDump(home.modules))")
      #expect(home.records(home.modules).isEmpty, "\(getfattrDump(home.modules))")
    }

    @Test func aLinkSwappedInUnderTheSweepIsSkippedAndCountedNotFollowed() throws {
      let home = try Home()
      let target = home.tree.directory("target")
      let moved = home.tree.path + "/moved"
      // Just before the sweep writes its record on node_modules, the
      // directory becomes a link to a directory outside the home.
      let swap = home.script(
        "swap.sh", "mv '\(home.modules)' '\(moved)'\nln -s '\(target)' '\(home.modules)'")
      let swept = home.sweep(["-v"], race: "setxattrat:1:\(swap)")
      #expect(FileManager.default.fileExists(atPath: home.ran), "the race did not happen: \(swept)")
      #expect(swept.status == 0, "\(swept)")
      #expect(swept.errors.contains("skipped 1"), "\(swept)")
      #expect(swept.errors.contains("errors 0"), "\(swept)")
      // Nothing was written through the link, nor on what was moved away.
      #expect(peerMarks(target).isEmpty)
      #expect(peerMarks(moved).isEmpty)
      #expect(home.records(target).isEmpty && home.records(moved).isEmpty)
    }

    @Test func aLinkSwappedInUnderMarkNodumpIsSkippedAndCountedNotFollowed() throws {
      let home = try Home()
      let root = home.tree.directory("root")
      let item = home.tree.directory("root/item")
      let target = home.tree.directory("target")
      let moved = home.tree.path + "/moved"
      let swap = home.script("swap.sh", "mv '\(item)' '\(moved)'\nln -s '\(target)' '\(item)'")
      let marked = run(
        [Argument(skipbackupPath), "mark", "-R", "-v", "-m", "nodump", Argument(root)],
        environment: ["SKIPBACKUP_RACE": "openat:3:\(swap)"])
      #expect(
        FileManager.default.fileExists(atPath: home.ran), "the race did not happen: \(marked)")
      #expect(marked.status == 0, "\(marked)")
      #expect(marked.errors.contains("skipped 1"), "\(marked)")
      // lsattr is the oracle for the nodump flag: on the ROOT, not through
      // the link, not on the directory moved away.
      let flags = run(["lsattr", "-d", Argument(root), Argument(target), Argument(moved)])
      #expect(flags.status == 0, "\(flags)")
      let nodump = flags.lines.filter { $0.split(separator: " ")[0].contains("d") }
      #expect(nodump.map { $0.split(separator: " ").last.map(String.init) } == [root], "\(flags)")
    }
  }
}
