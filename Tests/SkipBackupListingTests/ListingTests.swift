// list, status and check's engines, called in process on trees marked by
// setfattr with generated hostile names: what they print is compared with
// what getfattr, find and Python's os.getxattr say of the same tree, and a
// listing that fails (EIO, from the mocking driver) is reported while the
// rest is still read.

import Foundation
import SkipBackupCore
import SkipBackupReport
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupListing

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `body` with streams on two captured files.
func capturing(_ body: (Streams) throws(ReportedFailure) -> Void) throws -> (
  CapturedStreams, ReportedFailure?
) {
  let captured = try CapturedStreams()
  do {
    try body(Streams(output: captured.output, errors: captured.errors))
    return (captured, nil)
  } catch {
    return (captured, error)
  }
}

@Suite(.onTestThreads) struct ListRunTests {
  /// `list -0` prints exactly the topmost items getfattr finds marked, and
  /// `list --included -0` exactly what find lists outside them (links and
  /// FIFOs included, the link never followed), each once, byte for byte.
  @Test func excludedAndIncludedAreWhatGetfattrAndFindSay() throws {
    let tree = try MarkedTree(seed: 41)
    let expected = tree.excluded
    #expect(expected.count > 20, "the tree is what it is meant to be")
    let (excluded, failure) = try capturing { streams throws(ReportedFailure) in
      try ListRun(
        roots: [FilePath(tree.root)], mechanisms: .all, nullTerminated: true, streams: streams
      )
      .run()
    }
    #expect(failure == nil, "\(excluded.description)")
    #expect(excluded.outputBytes.last == 0)
    #expect(excluded.outputRecords.count == expected.count, "no path twice")
    #expect(Set(excluded.outputRecords) == expected)

    let (included, _) = try capturing { streams throws(ReportedFailure) in
      try ListRun(
        roots: [FilePath(tree.root)], mechanisms: .all, selection: .included, nullTerminated: true,
        streams: streams
      ).run()
    }
    let wanted = tree.included
    #expect(included.outputRecords.count == wanted.count, "no path twice")
    #expect(
      Set(included.outputRecords) == wanted,
      "\(Set(included.outputRecords).symmetricDifference(wanted).map(display))")
    #expect(included.errorText.isEmpty)
  }

  /// A directory whose listing fails (EIO, forced on the second
  /// `getdents64`: the first subdirectory the walk enters) is named once
  /// with the kernel's reason; the rest of the tree and the next ROOT are
  /// still listed, and the run ends as a failure.
  @Test func aListingThatFailsIsReportedAndTheRestIsListed() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    for name in ["a", "b", "c"] { tree.file("root/" + name) }
    tree.file("root/sub/hidden")
    tree.file("root/sub/deeper/hidden")
    let next = tree.file("next")
    let (captured, failure) = try capturing { streams throws(ReportedFailure) in
      try MockingDriver.withMocking { driver throws(ReportedFailure) in
        driver.perform(before: .getdents64, number: 2) {
          driver.force(.ioError, on: .getdents64, times: 1)
        }
        try ListRun(
          roots: [FilePath(root), FilePath(next)], mechanisms: .all, selection: .included,
          streams: streams
        ).run()
      }
    }
    #expect(failure == .failure)
    #expect(
      Set(captured.outputLines) == [
        root, root + "/a", root + "/b", root + "/c", root + "/sub", next,
      ])
    let reason = python("import os; print(os.strerror(5))", []).first!
    #expect(
      captured.errorLines == [
        "skipbackup: \(root)/sub: input/output error (getdents64: \(reason))"
      ])
  }

  /// A ROOT below a marked directory is printed whole (excluded) and not
  /// walked; a ROOT that does not exist fails alone, the others printed in
  /// the order given.
  @Test func aRootBelowAMarkedDirectoryIsPrintedWholeAndAMissingOneFailsAlone() throws {
    let tree = try TemporaryDirectory()
    let marked = tree.directory("marked")
    setfattr(marked, .xdg)
    let below = tree.directory("marked/sub")
    tree.file("marked/sub/file")
    let other = tree.file("other/file")
    setfattr(other, .legacy)
    let missing = tree.path + "/missing"
    let (captured, failure) = try capturing { streams throws(ReportedFailure) in
      try ListRun(
        roots: [FilePath(below), FilePath(missing), FilePath(tree.path + "/other")],
        mechanisms: .all, streams: streams
      ).run()
    }
    #expect(failure == .failure)
    #expect(captured.outputLines == [below, other])
    #expect(captured.errorLines.count == 1)
    #expect(captured.errorLines.first?.hasPrefix("skipbackup: \(missing): no such file") == true)
  }

  /// Output that cannot be written (EIO forced on the first write) ends
  /// the run with status 1 and one line, never a silent exit 0 with a
  /// truncated list: what `list ... && backup` relies on.
  @Test func anOutputThatCannotBeWrittenEndsTheRunWithStatus1() throws {
    let tree = try TemporaryDirectory()
    let marked = tree.file("marked")
    setfattr(marked, .legacy)
    // The probe runs ListRun as `list ROOT` does, in a process of its own.
    let listed = run([Argument(probePath), "list", Argument(tree.path)])
    #expect(listed.status == 0 && listed.output == marked + "\n", "\(listed)")
    let failed = run(
      [Argument(probePath), "list", Argument(tree.path)],
      environment: ["SKIPBACKUP_FORCE_ERRNO": "write:EIO:1:1"])
    #expect(failed.status == 1, "\(failed)")
    #expect(failed.errors == "skipbackup: write error: Input/output error\n")
    #expect(failed.standardOutput.isEmpty, "\(failed)")
  }

}

@Suite(.onTestThreads) struct StatusRunTests {
  /// Python's reading of every item of the tree, written from formats.md's
  /// rules without this project's code: legacy when its first byte is not
  /// 0, resource whatever its value, xdg when it is exactly `false`; no
  /// marks on a link; inherited from the nearest marked directory above.
  /// It reads status's JSON Lines and prints each line that disagrees.
  static let pythonOracle = #"""
    import base64, json, os, sys
    names = {"legacy": "user.com.apple.MobileBackup",
             "resource": "user.com.apple.metadata:com_apple_backup_excludeItem",
             "xdg": "user.xdg.robots.backup"}
    def marks(path):
        if os.path.islink(path): return []
        found = []
        for mark, name in names.items():
            try: value = os.getxattr(path, name, follow_symlinks=False)
            except OSError: continue
            if mark == "legacy" and (not value or value[0] == 0): continue
            if mark == "xdg" and value != b"false": continue
            found.append(mark)
        return found
    root = os.fsencode(sys.argv[1])
    for line in sys.stdin.buffer:
        o = json.loads(line)
        keys = {"path", "excluded", "marks", "inherited_from"}
        path = base64.b64decode(o["path_base64"]) if "path_base64" in o else o["path"].encode()
        if "path_base64" in o: keys.add("path_base64")
        above = None
        parent = path
        while parent != root:
            parent = os.path.dirname(parent)
            if marks(parent):
                above = parent
                break
        got = o.get("inherited_from_base64")
        got = base64.b64decode(got) if got else (o["inherited_from"].encode() if o["inherited_from"] else None)
        if "inherited_from_base64" in o: keys.add("inherited_from_base64")
        want = marks(path)
        if set(o) != keys or o["marks"] != want or got != above or o["excluded"] != bool(want or above):
            print(repr(path), o, want, above)
    """#

  /// `status -R --format json` says of every item what Python reads
  /// itself: its marks, the directory it inherits from, whether it is
  /// excluded, and nothing else; one line for each item find lists.
  @Test func jsonLinesSayWhatPythonReads() throws {
    let tree = try MarkedTree(seed: 43)
    let (captured, failure) = try capturing { streams throws(ReportedFailure) in
      try StatusRun(
        items: ItemSelection(paths: [FilePath(tree.root)], recursive: true), mechanisms: .all,
        format: .json, streams: streams
      ).run()
    }
    #expect(failure == nil, "\(captured.description)")
    #expect(captured.outputLines.count == find(tree.root).count, "one line an item")
    let check = run(
      [python3, "-c", Argument(Self.pythonOracle), Argument(tree.root)],
      input: captured.outputBytes)
    #expect(check.status == 0 && check.output.isEmpty, "\(check)")
  }

  /// The text lines, as tmutil prints them: `[Excluded]` for exactly the
  /// items getfattr and find put under a mark, with -v the marks and the
  /// directory an exclusion comes from.
  @Test func textLinesSayExcludedForWhatTheMarksHold() throws {
    let tree = try MarkedTree(seed: 44, newlines: false)
    let (captured, failure) = try capturing { streams throws(ReportedFailure) in
      try StatusRun(
        items: ItemSelection(paths: [FilePath(tree.root)], recursive: true), mechanisms: .all,
        streams: streams
      ).run()
    }
    #expect(failure == nil, "\(captured.description)")
    let included = tree.included
    let expected = find(tree.root).map { path in
      (included.contains(path) ? "[Included]    " : "[Excluded]    ")
        + String(decoding: path, as: UTF8.self)
    }
    // Names that are not UTF-8 come out as their bytes on a file, which the
    // lines compare as the same lossy text.
    #expect(Set(captured.outputLines) == Set(expected))
    #expect(captured.outputLines.count == expected.count)

    let marked = tree.directory.directory("verbose")
    setfattr(marked, .resource)
    let both = tree.directory.file("verbose/both")
    setfattr(both, .legacy)
    setfattr(both, .xdg)
    let (verbose, _) = try capturing { streams throws(ReportedFailure) in
      try StatusRun(
        items: ItemSelection(paths: [FilePath(both), FilePath(marked)]), mechanisms: .all,
        verbose: true, streams: streams
      ).run()
    }
    #expect(
      verbose.outputLines == [
        "[Excluded]    \(both)    (marked: legacy, xdg; inherited from \(marked))",
        "[Excluded]    \(marked)    (marked: resource)",
      ])
  }

  /// An item that cannot be read is reported by its path and the others
  /// are still printed; the run ends as a failure.
  @Test func anItemThatCannotBeReadFailsAlone() throws {
    let tree = try TemporaryDirectory()
    let file = tree.file("file")
    let missing = tree.path + "/missing"
    let (captured, failure) = try capturing { streams throws(ReportedFailure) in
      try StatusRun(
        items: ItemSelection(paths: [FilePath(missing), FilePath(file)]), mechanisms: .all,
        streams: streams
      ).run()
    }
    #expect(failure == .failure)
    #expect(captured.outputLines == ["[Included]    \(file)"])
    #expect(captured.errorLines.count == 1)
    #expect(captured.errorLines.first?.hasPrefix("skipbackup: \(missing): ") == true)
  }
}

@Suite(.onTestThreads) struct CheckRunTests {
  /// 0 when every PATH is excluded (marked, or below a marked directory),
  /// 1 when any is included, 2 when any cannot be read, with that one
  /// reported; a link is checked as itself unless dereferenced.
  @Test func theExitStatusSaysWhetherEveryPathIsExcluded() throws {
    let tree = try TemporaryDirectory()
    let marked = tree.file("marked")
    setfattr(marked, .legacy)
    let directory = tree.directory("directory")
    setfattr(directory, .xdg)
    let below = tree.file("directory/below")
    let plain = tree.file("plain")
    let link = tree.path + "/link"
    try #require(symlink("marked", link) == 0)
    let missing = tree.path + "/missing"

    func status(_ paths: [String], dereference: Bool = false) throws -> (Int32, [String]) {
      let captured = try CapturedStreams()
      let status = CheckRun(
        paths: paths.map { FilePath($0) }, mechanisms: .all, dereference: dereference,
        streams: Streams(output: captured.output, errors: captured.errors)
      ).exitStatus()
      #expect(captured.outputBytes.isEmpty, "check prints nothing")
      return (status, captured.errorLines)
    }
    #expect(try status([marked, below, directory]) == (0, []))
    #expect(try status([marked, plain]) == (1, []))
    #expect(try status([link]) == (1, []))
    #expect(try status([link], dereference: true) == (0, []))
    #expect(try status([marked]) == (0, []))
    let (failed, lines) = try status([plain, missing, marked])
    #expect(failed == 2)
    #expect(lines.count == 1 && lines[0].hasPrefix("skipbackup: \(missing): no such file"))
  }
}
