import SkipBackupCore
import SkipBackupView
import SystemPackage
import Testing

/// The planner in process, on hand-made walk results: which view each
/// mount point and nested subvolume becomes, what moves into it, the order
/// views are mounted in and the view each is reached from. No system call:
/// a wrong plan here is a view that shows or hides the wrong items.
struct ViewPlanTests {
  private func root(_ path: String, hidden: [String] = [], emptied: [String] = []) -> ViewRoot {
    var root = ViewRoot(path: FilePath(path), hidden: hidden.map { Array($0.utf8) })
    root.emptied = emptied.map { Array($0.utf8) }
    return root
  }

  private func strings(_ paths: [[UInt8]]) -> [String] {
    paths.map { String(decoding: $0, as: UTF8.self) }
  }

  @Test func viewsAreMountedOutsideInAndEachIsReachedFromTheDeepestViewItIsIn() {
    let plan = ViewPlan([
      root("/r/a/b"), root("/r"), root("/other/deep"), root("/r/a"), root("/r/ab"),
    ])
    #expect(plan.views.map(\.path) == ["/r", "/r/a", "/r/ab", "/r/a/b", "/other/deep"])
    // "/r/ab" is not inside "/r/a": paths are compared name by name.
    #expect(plan.owners == [nil, 0, 0, 1, nil])
    #expect(plan.inside(3).map { String(decoding: $0, as: UTF8.self) } == "b")
    #expect(plan.inside(2).map { String(decoding: $0, as: UTF8.self) } == "ab")
    #expect(plan.inside(0) == nil)
  }

  @Test func theViewOfSlashHoldsEveryOtherView() {
    let plan = ViewPlan([root("/home/u"), root("/")])
    #expect(plan.owners == [nil, 0])
    #expect(plan.inside(1).map { String(decoding: $0, as: UTF8.self) } == "home/u")
  }

  @Test func theWalksThreadsFindingsAreSortedOnceEach() {
    let found = ["b/x", "a", "b/x", "a/\u{1}", "B"].map { Array($0.utf8) }
    #expect(strings(ViewPlan.hidden(found)) == ["B", "a", "a/\u{1}", "b/x"])
    // A marked subvolume's placeholder is hidden, not emptied.
    let emptied = ViewPlan.emptied(
      ["m", "sv", "m"].map { Array($0.utf8) }, hidden: [Array("sv".utf8)])
    #expect(strings(emptied) == ["m"])
  }

  @Test func aFilesystemMountedInsideARootTakesWhatTheRootHidesBelowIt() {
    var roots = [root("/r", hidden: ["m/x", "m/y/z", "mx", "n"])]
    guard let (owner, inside) = ViewPlan.showing(Array("/r/m".utf8), in: roots) else {
      Issue.record("the mount point is shown")
      return
    }
    #expect(
      ViewPlan.add(
        .directory(sameFilesystem: false), at: "/r/m", inside: inside, of: owner, to: &roots,
        oneFileSystem: false))
    #expect(roots.map(\.path) == ["/r", "/r/m"])
    #expect(strings(roots[0].hidden) == ["mx", "n"])
    #expect(strings(roots[1].hidden) == ["x", "y/z"])
  }

  @Test func withOneFileSystemAMountPointIsEmptiedAndABindMountOfTheSameFilesystemRefused() {
    var roots = [root("/r")]
    #expect(
      ViewPlan.add(
        .directory(sameFilesystem: false), at: "/r/m", inside: Array("m".utf8)[...], of: 0,
        to: &roots, oneFileSystem: true))
    #expect(strings(roots[0].emptied) == ["m"])
    #expect(
      !ViewPlan.add(
        .directory(sameFilesystem: true), at: "/r/b", inside: Array("b".utf8)[...], of: 0,
        to: &roots, oneFileSystem: true))
    #expect(roots.count == 1)
    #expect(strings(roots[0].emptied) == ["m"])
  }

  @Test func aFileMountedOnAFileIsBoundOverTheView() {
    var roots = [root("/r")]
    #expect(
      ViewPlan.add(
        .file, at: "/r/d/f", inside: Array("d/f".utf8)[...], of: 0, to: &roots,
        oneFileSystem: false))
    #expect(roots.count == 1)
    #expect(strings(roots[0].fileMounts) == ["d/f"])
  }

  @Test func aMountPointNoViewShowsGetsNoView() {
    let roots = [root("/", hidden: ["h/marked"], emptied: ["e"]), root("/r")]
    for point in ["/h/marked", "/h/marked/below", "/e/m", "/proc/fs", "/run/user/0"] {
      #expect(ViewPlan.showing(Array(point.utf8), in: roots) == nil, "\(point)")
    }
    // The deepest view is the owner.
    #expect(ViewPlan.showing(Array("/r/m".utf8), in: roots)?.0 == 1)
    #expect(ViewPlan.showing(Array("/h".utf8), in: roots)?.0 == 0)
    // Outside every view.
    #expect(ViewPlan.showing(Array("/x".utf8), in: [root("/r")]) == nil)
    // In a snapshot a hidden mount point is judged again, not what is below it.
    #expect(ViewPlan.showing(Array("/h/marked".utf8), in: roots, frozen: true)?.0 == 0)
    #expect(ViewPlan.showing(Array("/h/marked/below".utf8), in: roots, frozen: true) == nil)
  }

  @Test func aRootBelowADirectoryAnotherViewShowsEmptyHasNoPlace() {
    let plan = ViewPlan([root("/r/m/in"), root("/r", emptied: ["m"]), root("/r/m")])
    #expect(plan.placeless.map(\.inner) == ["/r/m/in"])
    #expect(plan.placeless.map(\.outer) == ["/r"])
    #expect(strings(plan.placeless.map(\.emptied)) == ["m"])
    #expect(ViewPlan([root("/r", emptied: ["m"]), root("/r/n")]).placeless.isEmpty)
  }
}
