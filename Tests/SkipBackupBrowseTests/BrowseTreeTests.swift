// browse's side of the sized walk, in process: the tree its threads build
// when nearly every directory is handed over, its sums against GNU du, and
// a mark changed in place against a walk of the tree so marked.

import Foundation
import SkipBackupBrowse
import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SystemPackage
import Testing
import TestSupport

@Suite(.onTestThreads) struct BrowseTreeTests {
  /// The tree of `root` as BrowseRun builds it, by `threads` walkers that
  /// start handing directories over after the first item, its sums worked out.
  private func tree(of root: String, threads: Int = 8) -> (BrowseTree, [TreePart]) {
    let links = SharedLinks()
    let diagnostics = Diagnostics()
    let progress = Progress(enabled: false)
    let builders = (0..<threads).map { _ in
      TreeBuilder(
        mechanisms: .all, rootLength: root.utf8.count, links: links,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    _ = walkTree(root: FilePath(root), visitors: builders, parallelAfter: 1)
    let parts = builders.map { $0.takePart() }
    var tree = BrowseTree(rootPath: Array(root.utf8), parts: parts)
    tree.computeSums()
    #expect(diagnostics.failures == 0)
    return (tree, parts)
  }

  private func path(_ tree: BrowseTree, _ node: Int32) -> String {
    node == 0
      ? String(decoding: tree.rootPath, as: UTF8.self)
      : String(decoding: tree.rootPath + [0x2F] + tree.relativePath(of: node), as: UTF8.self)
  }

  /// Every item is one node under its own directory, with its own marks;
  /// every directory's backed-up and left-out bytes add up to what GNU du
  /// counts of it, and the left-out ones to what du counts of the marked
  /// items in it, whichever threads met its entries.
  @Test func everyDirectorysSumsAreGNUDusWhicheverThreadsHoldIt() throws {
    let scratch = try TemporaryDirectory()
    let sized = SizedTree(at: scratch.path + "/root")
    let sizes = Dictionary(
      gnuDu(["-a", "-B1"], [sized.root]).map { ($0.path, $0.value) },
      uniquingKeysWith: { a, _ in a })
    let directories = Set(gnuDu(["-B1"], [sized.root]).map(\.path))
    let items = run(["find", Argument(sized.root)]).lines
    let tops = sized.excluded.map(\.path)
    let marked = Dictionary(
      (sized.excluded + sized.markedInside).map { ($0.path, $0.attribute) },
      uniquingKeysWith: { a, _ in a })

    for _ in 0..<3 {
      let (tree, parts) = self.tree(of: sized.root)
      #expect(parts.filter { $0.nodes.count > 0 }.count > 1, "the walk was not shared")
      #expect(tree.count == items.count)
      var seen = Set<String>()
      for index in 0..<tree.count {
        let node = Int32(index)
        let path = path(tree, node)
        seen.insert(path)
        #expect(tree.nodes.parent[index] >= 0 || node == 0, "\(path) hangs on no directory")
        let attribute = marked[path]
        let marks = tree.nodes.marks[index]
        #expect(
          marks
            == (attribute == Names.legacy
              ? .legacy
              : attribute == Names.resource ? .resource : attribute == Names.xdg ? .xdg : []),
          "\(path): \(marks)")
        guard directories.contains(path) else { continue }
        let total = sizes[path]!
        let inside = tops.first { SizedTree.path(path, isAtOrBelow: $0) }
        let excluded =
          inside != nil
          ? total
          : tops.filter { SizedTree.path($0, isAtOrBelow: path) }.reduce(0) { $0 + sizes[$1]! }
        #expect(tree.included[index] + tree.excludedBytes[index] == total, "\(path)")
        #expect(tree.excludedBytes[index] == excluded, "\(path)")
      }
      #expect(seen == Set(items))
    }
  }

  /// Marking a directory in the browser, and clearing the marked directory
  /// above other marks, bring every sum where a new walk of the tree, so
  /// marked on disk, puts it.
  @Test func aMarkChangedInPlaceSumsAsAWalkOfTheTreeSoMarked() throws {
    let scratch = try TemporaryDirectory()
    let sized = SizedTree(at: scratch.path + "/root")
    var (tree, _) = self.tree(of: sized.root)
    // Marked or cleared (an empty set): inside what stays excluded, and above.
    let changes: [(String, MechanismSet, String)] = [
      ("a3/b2", .xdg, Names.xdg), ("a2/b3", [], Names.legacy), ("a2", [], Names.xdg),
      ("a3", .legacy, Names.legacy), ("a3/b2", [], Names.xdg),
    ]
    for (relative, marks, attribute) in changes {
      let path = sized.root + "/" + relative
      let node = try #require(tree.node(at: Array(path.utf8)))
      tree.update(node, marks: marks, rule: nil)
      if marks.isEmpty {
        #expect(run(["setfattr", "-h", "-x", Argument(attribute), Argument(path)]).status == 0)
      } else {
        SizedTree.mark(path, attribute)
      }
      let (walked, _) = self.tree(of: sized.root)
      var sums: [String: (Int64, Int64)] = [:]
      for index in 0..<walked.count {
        sums[self.path(walked, Int32(index))] = (
          walked.included[index], walked.excludedBytes[index]
        )
      }
      // Directories: of an inode's two links, either may be the one met first.
      for index in 0..<tree.count where tree.isDirectory(Int32(index)) {
        let path = self.path(tree, Int32(index))
        let fresh = try #require(sums[path], "\(path) is not in a new walk")
        #expect(
          tree.included[index] == fresh.0 && tree.excludedBytes[index] == fresh.1,
          "after \(relative) \(marks): \(path): \(tree.included[index]), \(tree.excludedBytes[index]) against \(fresh)"
        )
      }
    }
  }
}
