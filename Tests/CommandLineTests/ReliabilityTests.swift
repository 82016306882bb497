import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

// Ten ways output or work was lost, and the tests that failed before their fixes:
//  1 exit 0 on EPIPE: aReaderThatGoesAway{IsAWriteErrorWithSIGPIPEIgnored,
//    FailsEveryCommandThatPrints} (here)
//  2 silent output failures: aFullDeviceOrAClosedOutputIsAWriteError,
//    anExportThatCannotBeWrittenLeavesTheOldRulesFile (here)
//  3 ACLs: SafeSaveTests.aSaveKeepsThePOSIXACL, aCopyKeepsThePOSIXACL
//  4 attributes dropped: SafeSaveTests.aSaveThatWouldLoseAnAttributeFailsNamingIt
//  5 temporary files: SafeSaveTests.theNextSaveRemovesADeadSavesFileButNotALiveOnes,
//    scripts/torture save
//  6 NUL line: InputTests.aLineHoldingANulIsAnErrorByItsLineNumber
//  7 swaps and EPERM: RecursionTests.directoriesSwappedForLinksDuringTheWalk... (-m
//    nodump,cachedir), ErrorTests.anEPERMFromALinkSwappedInAndOut... (library),
//    scripts/torture swap
//  8 renamed away and back: VanishedEntryTests, scripts/torture back
//  9 library edges: SafeSaveTests.aSaveThroughASymbolicLinkNeverTurnsTheLinkIntoAFile,
//    aCopyFromAnythingButARegularFileIsRefusedAtOnce
// 10 reasons: BadInputReasonTests.swift, SkipBackupTests/RefusalReasonTests.swift,
//    theProgressLineIsErasedWhenASignalEndsTheRun,
//    markingCachedirChangesTheDirectorysModificationTimeAsDocumented (here)
// The kernel-hidden paths: SkipBackupTests/MockedErrnoTests.swift.

extension CLITests {
  /// What a user sees when a run is cut short, and what the tool promises
  /// about the files it does not mark.
  @Suite struct ReliabilityTests {
    /// The progress line is drawn on a terminal only: a pseudo-terminal
    /// stands in for one. `--files-from -` keeps the run alive between two
    /// walks, so the line is on screen when the signal comes.
    static let progressUnderASignal = #"""
      import os, select, signal, subprocess, sys, time
      tool, tree, number = sys.argv[1], sys.argv[2], int(sys.argv[3])
      master, slave = os.openpty()
      reader, writer = os.pipe()
      def as_from_a_shell():
          # The test runner may ignore or block these; a terminal's shell does not.
          for number_ in (signal.SIGINT, signal.SIGTERM):
              signal.signal(number_, signal.SIG_DFL)
          signal.pthread_sigmask(signal.SIG_SETMASK, [])
      process = subprocess.Popen(
          [tool, "mark", "-R", "--files-from", "-"],
          stdin=reader, stdout=subprocess.DEVNULL, stderr=slave, preexec_fn=as_from_a_shell)
      os.close(slave)
      os.close(reader)
      os.write(writer, (tree + "\n").encode())
      time.sleep(1.2)
      os.write(writer, (tree + "\n").encode())
      screen = b""
      deadline = time.time() + 60
      while b"items/s" not in screen and time.time() < deadline:
          if select.select([master], [], [], 0.5)[0]:
              screen += os.read(master, 4096)
      process.send_signal(number)
      process.wait(60)
      while select.select([master], [], [], 0.5)[0]:
          try:
              chunk = os.read(master, 4096)
          except OSError:
              break
          if not chunk:
              break
          screen += chunk
      print(process.returncode)
      print(repr(screen[screen.rfind(b"items/s"):]))
      """#

    @Test(arguments: [SIGINT, SIGTERM])
    func theProgressLineIsErasedWhenASignalEndsTheRun(signal: Int32) throws {
      let tree = try TemporaryDirectory()
      for index in 0..<4000 { tree.file("d\(index % 10)/f\(index)") }
      let result = python(
        Self.progressUnderASignal,
        [Argument(skipbackupPath), Argument(tree.path), Argument("\(signal)")])
      // Still dead by the signal, and the line drawn last is erased: "\r" and "erase line".
      #expect(result.lines.first == "\(-signal)", "\(result)")
      #expect(result.lines.last == #"b'items/s\x1b[K\r\x1b[K'"#, "\(result)")
    }

    /// The one exception to "modification times never change": cachedir
    /// adds an entry to the directory. It is stated wherever the promise is.
    @Test func markingCachedirChangesTheDirectorysModificationTimeAsDocumented() throws {
      let tree = try TemporaryDirectory()
      let cache = tree.directory("cache")
      let before = times(cache).modification
      letTheClockTick()
      #expect(skipbackup("mark", "-m", "cachedir", Argument(cache)).status == 0)
      #expect(times(cache).modification != before, "CACHEDIR.TAG is a new entry")
      let exception = "except that -m cachedir adds CACHEDIR.TAG, a new entry"
      let help = skipbackup("mark", "--help").output.split(whereSeparator: \.isWhitespace)
      #expect(help.joined(separator: " ").contains(exception))
      let root = HelpTests.packageRoot
      let guide = try String(
        contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
      let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
      for document in [guide, readme] {
        #expect(
          document.replacingOccurrences(of: "\n", with: " ").contains(
            "cachedir, which adds CACHEDIR.TAG to the directory and so changes its"))
      }
    }

    /// A tree whose every file is marked, with names long enough that the
    /// output is larger than a pipe holds.
    static func markedTree(files: Int = 3000) throws -> TemporaryDirectory {
      let tree = try TemporaryDirectory()
      let long = String(repeating: "n", count: 60)
      for index in 0..<files { tree.file("d\(index % 10)/\(long)\(index)") }
      return tree
    }

    /// `mark -R -v | head -1` under systemd, which ignores SIGPIPE: once
    /// exit 0 after marking a fraction of the tree, silently.
    @Test func aReaderThatGoesAwayIsAWriteErrorWithSIGPIPEIgnored() throws {
      let tree = try Self.markedTree()
      let piped = Self.readOneByteAndGoAway(["mark", "-R", "-v", tree.path])
      #expect(piped.lines.first == "1", "\(piped)")
      #expect(
        Array(piped.lines.dropFirst()) == ["skipbackup: write error: Broken pipe"], "\(piped)")
      // With SIGPIPE at its default, the run still dies by the signal.
      let killed = shell(
        #"("$SKIPBACKUP" mark -R -v "$1"; echo "status $?" >&2) | head -1 >/dev/null"#
          .replacingOccurrences(of: "$1", with: tree.path))
      #expect(killed.errors == "status 141\n", "\(killed)")
    }

    /// Runs the tool with SIGPIPE ignored and its output on a pipe whose
    /// reader takes one byte and goes away; prints the exit status, then
    /// what the tool wrote to standard error.
    static func readOneByteAndGoAway(_ arguments: [String]) -> ProcessResult {
      python(
        #"""
        import os, subprocess, sys
        process = subprocess.Popen(
            ["env", "--ignore-signal=PIPE", *sys.argv[1:]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.read(process.stdout.fileno(), 1)
        process.stdout.close()
        errors = process.stderr.read()
        print(process.wait())
        sys.stdout.write(errors.decode())
        """#, [Argument(skipbackupPath)] + arguments.map { Argument($0) })
    }

    /// `status -R` and `export` piped to a reader that goes
    /// away also exited 0, so `export ... | head && backup` ran with rules
    /// missing. Every file is marked on its own, so each prints a record per file.
    @Test(arguments: [["status", "-R"], ["export", "--for", "rsync"], ["list", "--excluded"]])
    func aReaderThatGoesAwayFailsEveryCommandThatPrints(command: [String]) throws {
      let tree = try Self.markedTree()
      let marked = shell(
        #"find "$1" -type f -print0 | "$SKIPBACKUP" mark -0 --files-from -"#
          .replacingOccurrences(of: "$1", with: tree.path))
      try #require(marked.status == 0, "\(marked)")
      let piped = Self.readOneByteAndGoAway(command + [tree.path])
      #expect(piped.lines.first == "1", "\(piped)")
      #expect(
        Array(piped.lines.dropFirst()) == ["skipbackup: write error: Broken pipe"], "\(piped)")
    }

    /// A full device and a closed standard output: once exit 1 and silence.
    @Test func aFullDeviceOrAClosedOutputIsAWriteError() throws {
      let tree = try Self.markedTree(files: 50)
      _ = skipbackup(arguments: ["mark", "-R"] + (0..<10).map { Argument(tree.path + "/d\($0)") })
      for (command, reason) in [
        (#""$SKIPBACKUP" list -0 "$T" >/dev/full"#, "No space left on device"),
        (#""$SKIPBACKUP" export --for rsync -o /dev/full "$T""#, "No space left on device"),
        (#""$SKIPBACKUP" status -R "$T" >&-"#, "Bad file descriptor"),
      ] {
        let result = shell(command.replacingOccurrences(of: "$T", with: tree.path))
        #expect(result.status == 1, "\(command): \(result)")
        #expect(result.errors == "skipbackup: write error: \(reason)\n", "\(command): \(result)")
      }
    }

    /// `export -o` writes a new file and renames it into place only when it
    /// is complete: a write that fails (here past RLIMIT_FSIZE, EFBIG) leaves
    /// the old rules file as it was, and nothing beside it.
    /// In a directory of its own under /tmp or /dev/shm alike: a file is
    /// judged by what it is, never by its path's text (one under /dev was
    /// once written in place, and cut short).
    @Test(arguments: ["/tmp", "/dev/shm"])
    func anExportThatCannotBeWrittenLeavesTheOldRulesFile(in base: String) throws {
      let tree = try Self.markedTree(files: 400)
      let files = (0..<400).map { "d\($0 % 10)/" + String(repeating: "n", count: 60) + "\($0)" }
      let marked = skipbackup(
        "mark", "--files-from", "-", input: Array(files.joined(separator: "\n").utf8),
        directory: tree.path)
      try #require(marked.status == 0, "\(marked)")
      let output = try TemporaryDirectory(in: base)
      let rules = output.file("rules", "old rules\n")
      // TMPDIR names no directory for ThreadSanitizer's runtime, which
      // starts by writing 512 KB to $TMPDIR/tsan.rodata.PID and mapping it
      // (MapRodata, compiler-rt's tsan_platform_linux.cpp): under this limit
      // the write stops at 4096 bytes and the first read past them is a
      // SIGBUS before main. Without the directory it maps nothing; the
      // tool itself never reads TMPDIR.
      let result = run(
        [
          "prlimit", "--fsize=4096", "env", "--ignore-signal=XFSZ", Argument(skipbackupPath),
          "export",
          "--for", "rsync", "-o", Argument(rules), Argument(tree.path),
        ], environment: ["TMPDIR": output.path + "/absent"])
      #expect(result.status == 1, "\(result)")
      #expect(result.errors == "skipbackup: write error: File too large\n", "\(result)")
      #expect(try String(contentsOfFile: rules, encoding: .utf8) == "old rules\n")
      #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["rules"])
      // Without the limit it is written whole.
      let whole = skipbackup("export", "--for", "rsync", "-o", Argument(rules), Argument(tree.path))
      #expect(whole.status == 0, "\(whole)")
      // Larger than the limit that stopped the first try: that one would have been cut.
      #expect(FileManager.default.contents(atPath: rules)!.count > 4096)
      #expect(try FileManager.default.contentsOfDirectory(atPath: output.path) == ["rules"])
    }
  }
}
