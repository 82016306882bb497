import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// `skipbackup mark` and `skipbackup clear`: which bytes they write, what
  /// they leave alone, and what -n, -v, -q and -R do. Every mark is read back
  /// with getfattr and Python, never with the tool itself.
  @Suite struct MarkClearTests {
    @Test func markWritesTheResourceValueByDefault() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let directory = tree.directory("directory")
      let result = skipbackup("mark", Argument(file), Argument(directory))
      #expect(result.status == 0, "\(result)")
      #expect(result.standardOutput.isEmpty && result.standardError.isEmpty, "\(result)")
      #expect(peerMarks(file) == [.resource])
      #expect(peerMarks(directory) == [.resource])
      // The 61 bytes of formats.md, as getfattr shows them.
      #expect(getfattrHex(file, Names.resource) == "0x" + Names.resourceValueHex)
    }

    @Test(arguments: [
      (["-m", "apple"], [PeerMark.legacy, .resource]),
      (["-m", "legacy,xdg"], [.legacy, .xdg]),
      (["-m", "xdg,legacy"], [.legacy, .xdg]),
      (["-m", "legacy", "-m", "xdg"], [.legacy, .xdg]),
      (["--mechanism=resource"], [.resource]),
      (["--mechanism", "legacy"], [.legacy]),
      (["-m", "xdg"], [.xdg]),
      (["-m", "all"], [.legacy, .resource, .xdg]),
      (["-m", "apple,all"], [.legacy, .resource, .xdg]),
    ])
    func mechanismChoosesTheMarks(options: [String], expected: [PeerMark]) throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let result = skipbackup(arguments: ["mark"] + options.map { Argument($0) } + [Argument(file)])
      #expect(result.status == 0, "\(result)")
      #expect(peerMarks(file) == Set(expected))
      // Other attributes are never written: only the chosen names appear.
      #expect(getfattrDump(file).count == expected.count, "\(getfattrDump(file))")
    }

    @Test(arguments: ["mark", "clear", "status", "list"])
    func unknownMechanismIsAUsageError(command: String) throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let result = skipbackup(Argument(command), "-m", "legacy,bogus", Argument(file))
      #expect(result.status == 64, "\(result)")
      #expect(result.standardOutput.isEmpty)
      #expect(result.errors.contains("unknown mechanism 'bogus'"), "\(result)")
      #expect(result.errors.contains("legacy, resource, xdg, apple, all"), "\(result)")
      #expect(getfattrDump(file).isEmpty, "nothing is written on a usage error")
    }

    @Test func markOnAMarkedItemWritesNothing() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      #expect(skipbackup("mark", "-m", "all", Argument(file)).status == 0)
      letTheClockTick()
      let before = changeTime(file)
      for options in [
        ["-m", "all"], [], ["-m", "legacy"], ["-m", "apple"], ["-R", "-m", "xdg"],
      ] {
        let again = skipbackup(
          arguments: ["mark"] + options.map { Argument($0) } + [Argument(file)])
        #expect(again.status == 0, "\(again)")
        #expect(again.standardError.isEmpty, "\(again)")
      }
      #expect(changeTime(file) == before, "a mark already there is not written again")
      #expect(peerMarks(file) == [.legacy, .resource, .xdg])

      // The control: a write does change the ctime, so the check above can fail.
      let other = tree.file("other")
      #expect(skipbackup("mark", Argument(other)).status == 0)
      letTheClockTick()
      let otherBefore = changeTime(other)
      #expect(skipbackup("mark", "-m", "legacy", Argument(other)).status == 0)
      #expect(changeTime(other) != otherBefore)
    }

    @Test func aResourceAttributeWithAnyValueIsAMarkAndIsKept() throws {
      // formats.md: the resource attribute counts whatever its value, so the
      // tool leaves a foreign value as it is rather than rewriting it.
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      setfattr(file, Names.resource, hex: "00")
      letTheClockTick()
      let before = changeTime(file)
      #expect(skipbackup("mark", Argument(file)).status == 0)
      #expect(changeTime(file) == before)
      #expect(getfattrHex(file, Names.resource) == "0x00")
    }

    @Test func aLegacyAttributeOfZeroIsNoMarkAndIsRewritten() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      setfattr(file, Names.legacy, hex: "00")
      let result = skipbackup("mark", "-v", "-m", "legacy", Argument(file))
      #expect(result.status == 0, "\(result)")
      #expect(result.output == "marked \(file)\n")
      #expect(getfattrHex(file, Names.legacy) == "0x01")
    }

    @Test func clearOnAnUnmarkedItemIsNoError() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let directory = tree.directory("directory")
      letTheClockTick()
      let before = (changeTime(file), changeTime(directory))
      let result = skipbackup("clear", Argument(file), Argument(directory))
      #expect(result.status == 0, "\(result)")
      #expect(result.standardOutput.isEmpty && result.standardError.isEmpty, "\(result)")
      #expect((changeTime(file), changeTime(directory)) == before)

      let verbose = skipbackup("clear", "-v", Argument(file))
      #expect(verbose.status == 0)
      #expect(verbose.standardOutput.isEmpty)
      #expect(
        verbose.errors
          == "skipbackup: cleared 0, not marked 1, skipped 0 (symbolic links, devices, FIFOs and sockets), errors 0\n"
      )
    }

    @Test func clearRemovesEveryMarkByDefaultAndOnlyMarks() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.file("marked")
      for mark in PeerMark.allCases { setfattr(marked, mark) }
      setfattr(marked, "user.other", hex: "6b656570")
      // Attributes that are there but are no marks stay.
      let notMarks = tree.file("not-marks")
      setfattr(notMarks, Names.xdg, hex: hex("true".bytes))
      setfattr(notMarks, Names.legacy, hex: "00")

      let result = skipbackup("clear", Argument(marked), Argument(notMarks))
      #expect(result.status == 0, "\(result)")
      #expect(peerMarks(marked).isEmpty)
      #expect(getfattrDump(marked) == ["user.other=0x6b656570"])
      #expect(getfattrHex(notMarks, Names.xdg) == "0x" + hex("true".bytes))
      #expect(getfattrHex(notMarks, Names.legacy) == "0x00")
    }

    @Test func clearWithAMechanismRemovesOnlyThatMark() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      for mark in PeerMark.allCases { setfattr(file, mark) }
      #expect(skipbackup("clear", "-m", "legacy", Argument(file)).status == 0)
      #expect(peerMarks(file) == [.resource, .xdg])
      #expect(skipbackup("clear", "-m", "apple", Argument(file)).status == 0)
      #expect(peerMarks(file) == [.xdg])
    }

    @Test func neitherMarkNorClearChangesContentsModificationTimeOrOtherAttributes() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file", "contents that must stay\n")
      let directory = tree.directory("directory")
      tree.file("directory/inside", "more")
      for path in [file, directory] {
        setfattr(path, "user.other", hex: "0102")
        // An old modification time, so that any change would show.
        var times = [
          timespec(tv_sec: 1_000_000_000, tv_nsec: 123),
          timespec(tv_sec: 1_000_000_000, tv_nsec: 456),
        ]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
      }
      let marks = PeerMark.allCases.map(\.attribute)
      let before = [file, directory].map { Fingerprint($0, ignoring: marks) }
      let inside = Fingerprint(tree.path + "/directory/inside", ignoring: marks)

      #expect(skipbackup("mark", "-m", "all", Argument(file), Argument(directory)).status == 0)
      #expect([file, directory].map { Fingerprint($0, ignoring: marks) } == before)
      #expect(peerMarks(file) == [.legacy, .resource, .xdg])

      #expect(skipbackup("clear", Argument(file), Argument(directory)).status == 0)
      #expect([file, directory].map { Fingerprint($0, ignoring: marks) } == before)
      #expect(peerMarks(file).isEmpty)

      #expect(skipbackup("mark", "-R", Argument(directory)).status == 0)
      #expect(skipbackup("clear", "-R", Argument(directory)).status == 0)
      #expect(Fingerprint(directory, ignoring: marks) == before[1])
      #expect(Fingerprint(tree.path + "/directory/inside", ignoring: marks) == inside)
    }

    @Test func dryRunPrintsWhatWouldChangeAndChangesNothing() throws {
      let tree = try TemporaryDirectory()
      let unmarked = tree.file("unmarked")
      let marked = tree.file("marked")
      setfattr(marked, .resource)
      letTheClockTick()
      let before = (changeTime(unmarked), changeTime(marked))

      let mark = skipbackup("mark", "-n", Argument(unmarked), Argument(marked))
      #expect(mark.status == 0, "\(mark)")
      #expect(mark.output == "would mark \(unmarked)\n")
      #expect(mark.standardError.isEmpty)
      #expect(peerMarks(unmarked).isEmpty)

      let clear = skipbackup("clear", "--dry-run", Argument(unmarked), Argument(marked))
      #expect(clear.status == 0, "\(clear)")
      #expect(clear.output == "would clear \(marked)\n")
      #expect(peerMarks(marked) == [.resource])

      // A mark of another mechanism would be added to the marked file too.
      let other = skipbackup("mark", "-n", "-m", "legacy", Argument(marked))
      #expect(other.output == "would mark \(marked)\n")
      #expect(peerMarks(marked) == [.resource])

      #expect((changeTime(unmarked), changeTime(marked)) == before)
    }

    /// A dry run reports what the run would fail with (a
    /// FIFO, /proc, `-m cachedir` on a file, another user's file, nodump
    /// on a FIFO), byte for byte as the run does, with the same exit
    /// status, and changes nothing (ctimes included).
    @Test func aDryRunReportsTheFailuresTheRunWouldMeet() throws {
      let tree = try TemporaryDirectory()
      chmod(tree.path, 0o755)
      let fifo = tree.path + "/fifo"
      #expect(mkfifo(fifo, 0o644) == 0)
      let file = tree.file("file")
      let directory = tree.directory("directory")
      letTheClockTick()
      let before = (changeTime(file), changeTime(directory))
      let cases: [([Argument], Bool)] = [
        (["mark", Argument(fifo)], false), (["mark", "-m", "nodump", Argument(fifo)], false),
        (["mark", "/proc/self/status"], false),
        (["mark", "-m", "cachedir", Argument(file)], false),
        (["mark", "-m", "legacy,nodump,cachedir", Argument(directory)], true),
        (["mark", "-m", "xdg", Argument(file)], true),
        (["mark", "-m", "nodump", Argument(file)], true),
        (["mark", "-m", "cachedir", Argument(directory)], true),
      ]
      for (arguments, asNobody) in cases {
        let dry = skipbackup(
          arguments: [arguments[0], "-n"] + arguments.dropFirst(), asNobody: asNobody)
        let real = skipbackup(arguments: arguments, asNobody: asNobody)
        #expect(real.status == 1, "\(arguments): \(real)")
        #expect(dry.status == real.status, "\(arguments): \(dry)")
        #expect(dry.errors == real.errors, "\(arguments)")
        #expect(dry.output.isEmpty, "\(arguments): \(dry)")
      }
      #expect(peerMarks(file).isEmpty && peerMarks(directory).isEmpty)
      #expect((changeTime(file), changeTime(directory)) == before)
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test func dryRunRecursiveWithVerboseEndsWithWhatItWouldDo() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/a")
      let marked = tree.file("root/b")
      setfattr(marked, .resource)
      let result = skipbackup("mark", "-n", "-v", "-R", Argument(root))
      #expect(result.status == 0, "\(result)")
      #expect(Set(result.lines) == ["would mark \(root)", "would mark \(root)/a"])
      #expect(
        result.errors
          == "skipbackup: would mark 2, already marked 1, skipped 0 (symbolic links, devices, FIFOs and sockets), errors 0\n"
      )
      #expect(peerMarks(root).isEmpty && peerMarks(root + "/a").isEmpty)
    }

    @Test func verbosePrintsEachChangeAndASummary() throws {
      let tree = try TemporaryDirectory()
      let unmarked = tree.file("unmarked")
      let marked = tree.file("marked")
      setfattr(marked, .resource)
      let mark = skipbackup("mark", "-v", Argument(unmarked), Argument(marked))
      #expect(mark.status == 0, "\(mark)")
      #expect(mark.output == "marked \(unmarked)\n")
      #expect(
        mark.errors
          == "skipbackup: marked 1, already marked 1, skipped 0 (symbolic links, devices, FIFOs and sockets), errors 0\n"
      )

      let missing = tree.path + "/missing"
      let clear = skipbackup("clear", "--verbose", Argument(unmarked), Argument(missing))
      #expect(clear.status == 1, "\(clear)")
      #expect(clear.output == "cleared \(unmarked)\n")
      #expect(
        clear.errors.hasSuffix(
          "skipbackup: cleared 1, not marked 0, skipped 0 (symbolic links, devices, FIFOs and sockets), errors 1\n"
        ), "\(clear)")
    }

    @Test func quietPrintsNothingButErrors() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let directory = tree.directory("directory")
      tree.file("directory/inside")
      let result = skipbackup("mark", "-q", "-R", Argument(file), Argument(directory))
      #expect(result.status == 0, "\(result)")
      #expect(result.standardOutput.isEmpty && result.standardError.isEmpty, "\(result)")
      #expect(peerMarks(directory + "/inside") == [.resource])

      let missing = tree.path + "/missing"
      let failing = skipbackup("clear", "--quiet", Argument(missing))
      #expect(failing.status == 1)
      #expect(diagnostic(failing, naming: missing)?.hasPrefix("no such file or directory") == true)

      let both = skipbackup("mark", "-v", "-q", Argument(file))
      #expect(both.status == 64, "\(both)")
      #expect(both.errors.contains("--verbose and --quiet cannot go together"))
    }

    @Test func recursiveMarksEveryFileAndDirectoryAndSkipsTheRest() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let items = [
        root, tree.directory("root/a"), tree.directory("root/a/b"), tree.file("root/f"),
        tree.file("root/a/g"), tree.file("root/a/b/h"), tree.directory("root/empty"),
      ]
      tree.symlink("root/link", to: "f")
      tree.symlink("root/a/dangling", to: "nowhere")
      tree.fifo("root/fifo")
      tree.socket("root/a/socket")
      var skipped = 4
      // A character device like /dev/null (major 1, minor 3), where mknod is allowed.
      if mknod(root + "/device", S_IFCHR | 0o600, dev_t(0x103)) == 0 { skipped += 1 }

      let mark = skipbackup("mark", "-R", "-v", Argument(root))
      #expect(mark.status == 0, "\(mark)")
      #expect(Set(mark.lines) == Set(items.map { "marked \($0)" }))
      #expect(
        mark.errors
          == "skipbackup: marked \(items.count), already marked 0, skipped \(skipped) (symbolic links, devices, FIFOs and sockets), errors 0\n"
      )
      for item in items { #expect(peerMarks(item) == [.resource], "\(item)") }

      let clear = skipbackup("clear", "-R", Argument(root))
      #expect(clear.status == 0, "\(clear)")
      #expect(clear.standardError.isEmpty)
      for item in items { #expect(peerMarks(item).isEmpty, "\(item)") }
    }

    @Test func withoutRecursiveOnlyTheDirectoryItselfIsMarked() throws {
      let tree = try TemporaryDirectory()
      let directory = tree.directory("directory")
      let inside = tree.file("directory/inside")
      #expect(skipbackup("mark", Argument(directory)).status == 0)
      #expect(peerMarks(directory) == [.resource])
      #expect(peerMarks(inside).isEmpty)
      // Clearing the file below is no error; the directory's mark stays.
      #expect(skipbackup("clear", Argument(inside)).status == 0)
      #expect(peerMarks(directory) == [.resource])
    }

    @Test func dereferenceMarksAndClearsTheTargetOfALink() throws {
      let tree = try TemporaryDirectory()
      let target = tree.file("target")
      let link = tree.symlink("link", to: "target")
      let directory = tree.directory("directory")
      let inside = tree.file("directory/inside")
      let directoryLink = tree.symlink("directory-link", to: "directory")

      #expect(skipbackup("mark", "-L", Argument(link)).status == 0)
      #expect(peerMarks(target) == [.resource])
      #expect(skipbackup("clear", "--dereference", Argument(link)).status == 0)
      #expect(peerMarks(target).isEmpty)

      let recursive = skipbackup("mark", "-R", "-L", Argument(directoryLink))
      #expect(recursive.status == 0, "\(recursive)")
      #expect(peerMarks(directory) == [.resource])
      #expect(peerMarks(inside) == [.resource])
    }
  }
}
