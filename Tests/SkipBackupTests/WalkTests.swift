import Foundation
import Testing
import TestSupport

import SkipBackupCore
import SystemPackage

/// The descriptor-relative walk, alone and on several threads.
@Suite(.onTestThreads) struct WalkTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  final class Collector: TreeVisitor {
    var paths: [String] = []
    var inherited: [String: String] = [:]
    var failures: [SkipBackupError] = []

    func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
      let path = String(decoding: entry.pathBytes, as: UTF8.self)
      paths.append(path)
      if let length = entry.markedAncestorLength {
        inherited[path] = String(decoding: entry.pathBytes[..<length], as: UTF8.self)
      }
      let marked = (try? MechanismSet.all.isMarked(entry.item)) ?? false
      return marked ? .descendMarked : .descend
    }

    func walkFailed(_ error: SkipBackupError) { failures.append(error) }
  }

  /// A tree of `directories` × `files`, every seventh directory marked.
  func makeTree(directories: Int, files: Int) -> Set<String> {
    var expected: Set<String> = [tree.path]
    for directory in 0..<directories {
      let name = "d\(directory / 10)/e\(directory)"
      tree.directory(name)
      expected.insert(tree.path + "/d\(directory / 10)")
      expected.insert(tree.path + "/" + name)
      if directory % 7 == 0 { setfattr(tree.path + "/" + name, Names.legacy, hex: "01") }
      for file in 0..<files {
        expected.insert(tree.file("\(name)/f\(file)"))
      }
    }
    return expected
  }

  func check(_ collectors: [Collector], against expected: Set<String>) {
    let all = collectors.flatMap(\.paths)
    #expect(all.count == expected.count, "each item once")
    #expect(Set(all) == expected)
    var marked: Set<String> = []
    for collector in collectors {
      #expect(collector.failures.isEmpty)
      for (path, from) in collector.inherited {
        #expect(path.hasPrefix(from + "/"))
        marked.insert(from)
      }
    }
    for directory in marked { #expect(getfattrHex(directory, Names.legacy) == "0x01") }
    let inherited = collectors.reduce(0) { $0 + $1.inherited.count }
    #expect(inherited > 0)
  }

  @Test func aSingleWalkVisitsEveryItemOnce() {
    let expected = makeTree(directories: 40, files: 20)
    let collector = Collector()
    _ = walkTree(root: FilePath(tree.path), visitors: [collector])
    check([collector], against: expected)
  }

  /// A root its caller holds open is read through that descriptor: its
  /// path, which now leads to another directory, only names it, and its
  /// mark is read from the directory held.
  @Test func aRootHeldOpenIsWalkedThroughItsDescriptorNotItsPath() throws {
    tree.directory("walked/inner")
    tree.file("walked/inner/kept")
    setfattr(tree.path + "/walked", Names.legacy, hex: "01")
    let held = open(tree.path + "/walked", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try #require(held >= 0)
    defer { close(held) }
    #expect(rename(tree.path + "/walked", tree.path + "/moved") == 0)
    tree.directory("walked")
    tree.file("walked/swapped-in")
    let collector = Collector()
    _ = walkTree(
      root: FilePath(tree.path + "/walked"), options: TreeWalkOptions(rootDirectory: held),
      visitors: [collector])
    let root = tree.path + "/walked"
    #expect(collector.paths == [root, root + "/inner", root + "/inner/kept"])
    #expect(collector.inherited[root + "/inner/kept"] == root)
    #expect(collector.failures.isEmpty)
  }

  @Test func aParallelWalkVisitsEveryItemOnceAndInheritsTheSame() {
    let expected = makeTree(directories: 200, files: 30)
    let collectors = (0..<4).map { _ in Collector() }
    _ = walkTree(root: FilePath(tree.path), visitors: collectors, parallelAfter: 50)
    check(collectors, against: expected)
    // The helpers took part.
    #expect(collectors.dropFirst().contains { !$0.paths.isEmpty })
  }

  @Test func aSmallTreeIsWalkedInOrderByOneThread() {
    let expected = makeTree(directories: 5, files: 5)
    let collectors = (0..<4).map { _ in Collector() }
    _ = walkTree(root: FilePath(tree.path), visitors: collectors)
    check(collectors, against: expected)
    #expect(collectors.dropFirst().allSatisfy { $0.paths.isEmpty })
    // In order: exactly the sequence a walk with one visitor gives, and depth
    // first, each directory's whole subtree right after it.
    let single = Collector()
    _ = walkTree(root: FilePath(tree.path), visitors: [single])
    let paths = collectors[0].paths
    #expect(paths == single.paths)
    for (index, path) in paths.enumerated() {
      let below = paths.indices.filter { paths[$0].hasPrefix(path + "/") }
      #expect(
        below.isEmpty || below == Array((index + 1)...(index + below.count)),
        "the subtree of \(path) is not contiguous after it")
    }
  }
}
