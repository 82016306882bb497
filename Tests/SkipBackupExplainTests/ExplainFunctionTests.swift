// explain's judgements in process, where their logic is: which marks each
// tool's row reads on the item and the directories above it, the one thing
// each line tells the user to do, and the shell words it writes, read back
// by bash, the shell the user pastes them into.

import SkipBackupCore
@testable import SkipBackupExplain
import Testing
import TestSupport

@Suite(.onTestThreads) struct ExplainFunctionTests {
  private static func facts(_ name: String) throws -> ToolFacts {
    try #require(ToolFacts.all.first { $0.name == name }, "\(name) is a row")
  }

  private static func item(
    own: MechanismSet = [], above: [MechanismSet] = [], directory: Bool = false, tag: Bool = false
  ) -> ItemMarks {
    ItemMarks(own: own, above: above, isDirectory: directory, isCacheTag: tag)
  }

  /// A tool skips an item whose own marks, or any directory's above it, it
  /// reads; a CACHEDIR.TAG's own directory's tag keeps the tag itself for
  /// tar and restic, and a tag further up does not.
  @Test func whatEachToolSkips() throws {
    let borg2 = try Self.facts("borg2")
    #expect(borg2.skips(Self.item(own: [.xdg])))
    #expect(borg2.skips(Self.item(above: [[], [], [.nodump]])))
    #expect(!borg2.skips(Self.item(own: [.resource, .legacy], above: [[.cachedir]])))
    for name in ["tar", "restic"] {
      let tool = try Self.facts(name)
      #expect(tool.skips(Self.item(above: [[.cachedir]])), "\(name)")
      #expect(!tool.skips(Self.item(above: [[.cachedir]], tag: true)), "\(name)")
      #expect(tool.skips(Self.item(above: [[], [.cachedir]], tag: true)), "\(name)")
    }
    let borg1 = try Self.facts("borg1")
    // borg 1 leaves the tagged directory out, tag and all.
    #expect(borg1.skips(Self.item(above: [[.cachedir]], tag: true)))
    let rsync = try Self.facts("rsync")
    #expect(!rsync.skips(Self.item(own: .all, above: [.all], directory: true)))
  }

  @Test func theOneThingToDo() throws {
    let borg2 = try Self.facts("borg2")
    #expect(
      borg2.needs(target: Array("/h/a b".utf8), targetIsDirectory: false, exportMarks: [])
        == "skipbackup mark -m xdg '/h/a b'")
    // A sweep's item: the sweep of its directory adds the mark.
    #expect(
      borg2.needs(
        target: Array("/h/p/node_modules".utf8), targetIsDirectory: true, exportMarks: [.resource],
        sweptWith: [.resource])
        == "skipbackup sweep -m resource,xdg -- /h/p, the sweep of its directory, adds xdg to the "
        + "sweep's marks there (a mark by hand would take the item from the sweep)")
    #expect(
      borg2.needs(
        target: Array("/h/fifo".utf8), targetIsDirectory: false, exportMarks: [],
        unmarkable: "a FIFO")
        == "a FIFO keeps no marks on Linux: mark the directory that holds it (/h), or leave it "
        + "out with borg2's own exclude option")
    let tar = try Self.facts("tar")
    #expect(
      tar.needs(target: Array("/h/cache".utf8), targetIsDirectory: true, exportMarks: [])
        == "skipbackup mark -m cachedir /h/cache")
    // A file tar cannot be told about by a tag: the export, reading the
    // marks that exclude it, or marking it first when none does.
    let marked = tar.needs(
      target: Array("/h/f".utf8), targetIsDirectory: false, exportMarks: [.xdg])
    #expect(marked.hasPrefix("with ROOT a directory above it: "), "\(marked)")
    #expect(marked.contains("skipbackup list -m xdg "), "\(marked)")
    let unmarked = tar.needs(target: Array("-f".utf8), targetIsDirectory: false, exportMarks: [])
    #expect(unmarked.hasPrefix("skipbackup mark -- -f, then with ROOT"), "\(unmarked)")
    #expect(!unmarked.contains("-m "), "\(unmarked)")
    let timeMachine = try Self.facts("timemachine")
    #expect(
      timeMachine.needs(target: Array("/h/x".utf8), targetIsDirectory: false, exportMarks: [])
        == "skipbackup mark -m resource /h/x, then copy with rsync -aX")
  }

  /// Each path explain writes is one shell word naming its exact bytes, and
  /// shows no control character: bash reads each back as those bytes.
  @Test func eachPathIsOneShellWordBashReadsBack() {
    let paths: [[UInt8]] = [
      Array("/plain/path-1.txt".utf8), Array("/with space".utf8), Array("/it's".utf8),
      Array("/new\nline".utf8), Array("/tab\tand\u{7F}del".utf8), [0x2F, 0xFF, 0xFE, 0x61],
      Array("/c1\u{85}next".utf8), Array("/émoji 🙂".utf8), Array("/$HOME `x` \\ \"q\" *".utf8),
      Array("-v".utf8), Array("--".utf8),
    ]
    let words = paths.map(shellQuoted)
    for word in words {
      #expect(!word.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(word)")
      #expect(!word.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(word)")
    }
    let script = "printf '%s\\0' " + words.joined(separator: " ")
    let read = run(["bash", "-c", Argument(script)])
    #expect(read.status == 0, "\(read.errors)")
    #expect(read.nulSeparated == paths)
    #expect(pathArgument(Array("-v".utf8)) == "-- -v")
    #expect(pathArgument(Array("/a".utf8)) == "/a")
  }
}
