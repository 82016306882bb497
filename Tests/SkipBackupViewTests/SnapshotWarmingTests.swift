import SkipBackupView
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The pass that looks at a snapshot's entries beside COMMAND looks at
/// every entry of each root once, follows no link, and ends with nothing
/// to do at once. (Its early stop is what each `run --snapshot` of the
/// command-line tests ends with.)
@Suite(.onTestThreads)
struct SnapshotWarmingTests {
  @Test func aPassLooksAtEveryEntryOfEachRootOnce() throws {
    let scratch = try TemporaryDirectory()
    var roots: [SnapshotWarming.Root] = []
    for root in ["a", "b"] {
      for index in 0..<100 { scratch.file("\(root)/d/f\(index)") }
      // A link to the directory above: a pass that followed it would not end.
      #expect(symlink("..", scratch.path + "/\(root)/d/up") == 0)
      roots.append(SnapshotWarming.Root(path: FilePath(scratch.path + "/" + root)))
    }
    // Each root, its directory d, 100 files and the link.
    #expect(SnapshotWarming(roots: roots).finish(stoppingEarly: false) == 2 * 103)
    #expect(SnapshotWarming(roots: []).finish(stoppingEarly: false) == 0)
  }

  /// What the view hides, the tool never reads: the pass leaves it alone.
  @Test func aPassLeavesWhatTheViewHides() throws {
    let scratch = try TemporaryDirectory()
    for directory in ["a", "b", "c"] {
      for index in 0..<10 { scratch.file("root/\(directory)/f\(index)") }
    }
    let root = FilePath(scratch.path + "/root")
    let hidden = [Array("a".utf8), Array("b/f3".utf8), Array("c/f1".utf8), Array("c/f9".utf8)]
    // The root, b and c, 9 files of b and 8 of c.
    #expect(
      SnapshotWarming(roots: [SnapshotWarming.Root(path: root, hidden: hidden)])
        .finish(stoppingEarly: false) == 1 + 2 + 9 + 8)
  }
}
