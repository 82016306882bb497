import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// `skipbackup du`: included plus excluded is exactly what GNU du counts,
  /// on trees with marked directories and files and hard links.
  @Suite struct DuTests {
    /// A tree with every mechanism, a marked directory with marks inside,
    /// a file with two marks, hard links within each side and one across,
    /// a symbolic link, a FIFO, an empty directory and a sparse file.
    private func markedTree(_ tree: TemporaryDirectory) -> String {
      let root = tree.directory("root")
      tree.file("root/plain", String(repeating: "p", count: 10_000))
      tree.file("root/inc/a/big", String(repeating: "b", count: 300_000))
      tree.file("root/inc/a/small", "s")
      tree.file("root/inc/b/mid", String(repeating: "m", count: 70_000))
      tree.directory("root/inc/empty")
      let cache = tree.directory("root/cache")
      setfattr(cache, .xdg)
      tree.file("root/cache/blob", String(repeating: "c", count: 150_000))
      setfattr(tree.directory("root/cache/sub"), .legacy)
      setfattr(tree.file("root/cache/sub/deeper", String(repeating: "d", count: 3_000)), .legacy)
      setfattr(tree.file("root/both", String(repeating: "t", count: 20_000)), .legacy)
      setfattr(tree.path + "/root/both", .resource)
      // Hard links: one inode in two included places, one in an included
      // and an excluded place.
      tree.file("root/inc/linked", String(repeating: "l", count: 40_000))
      link(tree.path + "/root/inc/linked", tree.path + "/root/inc/b/linked-again")
      tree.file("root/inc/shared", String(repeating: "h", count: 60_000))
      setfattr(tree.directory("root/ex2"), .resource)
      link(tree.path + "/root/inc/shared", tree.path + "/root/ex2/shared-too")
      // Marks `all` leaves out.
      let nodump = tree.directory("root/nodump")
      tree.file("root/nodump/f", String(repeating: "n", count: 5_000))
      #expect(run(["chattr", "+d", Argument(nodump)]).status == 0)
      tree.file("root/cachedir/f", String(repeating: "k", count: 7_000))
      #expect(
        skipbackup("mark", "-m", "cachedir", Argument(tree.path + "/root/cachedir")).status == 0)
      tree.symlink("root/link", to: "plain")
      tree.fifo("root/fifo")
      let sparse = tree.path + "/root/sparse"
      #expect(run(["truncate", "-s", "5M", Argument(sparse)]).status == 0)
      return root
    }

    private func gnuDu(_ arguments: String..., path: String) -> Int {
      let result = run(["du", "-s"] + arguments.map { Argument($0) } + [Argument(path)])
      return Int(result.output.split(separator: "\t").first ?? "") ?? -1
    }

    private func du(_ arguments: String...) throws -> [String: Any] {
      let result = skipbackup(
        arguments: ["du", "--format", "json"] + arguments.map { Argument($0) })
      try #require(result.status == 0, "\(result)")
      let objects = jsonObjects(result)
      try #require(objects.count == 1, "\(result)")
      return objects[0]
    }

    private func side(_ object: [String: Any], _ key: String) -> (
      files: Int, directories: Int, bytes: Int
    ) {
      let counts = object[key] as? [String: Any] ?? [:]
      return (
        counts["files"] as? Int ?? -1, counts["directories"] as? Int ?? -1,
        counts["bytes"] as? Int ?? -1
      )
    }

    private func topPaths(_ object: [String: Any], _ key: String) -> [(String, Int)] {
      (object[key] as? [[String: Any]] ?? []).map {
        ($0["path"] as? String ?? "", $0["bytes"] as? Int ?? -1)
      }
    }

    @Test(arguments: [[], ["-m", "all,nodump,cachedir"], ["-m", "legacy"]])
    func includedPlusExcludedIsWhatGNUDuCounts(mechanisms: [String]) throws {
      let tree = try TemporaryDirectory()
      let root = markedTree(tree)
      for apparent in [false, true] {
        let usage = try du(arguments: mechanisms + (apparent ? ["--apparent-size"] : []) + [root])
        let included = side(usage, "included")
        let excluded = side(usage, "excluded")
        let bytes = apparent ? gnuDu("-b", path: root) : gnuDu("-B1", path: root)
        #expect(included.bytes + excluded.bytes == bytes, "\(usage)")
        #expect(
          included.files + included.directories + excluded.files + excluded.directories
            == gnuDu("--inodes", path: root), "\(usage)")
        #expect(excluded.bytes > 0 && included.bytes > 0)
      }
    }

    /// A ROOT given through a link (with or without a
    /// trailing slash) is followed, as `du -D` does: it counted 0 B.
    @Test func aRootGivenThroughALinkIsFollowed() throws {
      let tree = try TemporaryDirectory()
      _ = markedTree(tree)
      tree.symlink("link", to: "root")
      let link = tree.path + "/link"
      for root in [link, link + "/"] {
        let usage = try du(arguments: [root])
        let total = side(usage, "included").bytes + side(usage, "excluded").bytes
        #expect(total == gnuDu("-B1", path: link + "/"), "\(root): \(usage)")
        #expect(side(usage, "excluded").bytes > 0)
      }
    }

    /// Repeated or overlapping ROOTs count each item once,
    /// ROOT by ROOT as `du -s -B1` counts them (a ROOT already counted is
    /// left out; an earlier ROOT met below a later one is left out of it).
    @Test func overlappingOrRepeatedRootsCountEachItemOnce() throws {
      let tree = try TemporaryDirectory()
      _ = markedTree(tree)
      for roots in [
        ["root", "root"], ["root/inc", "root"], ["root", "root/inc"],
        ["root/inc/a", "root/inc/a/big", "root"], ["root/plain", "root"],
      ] {
        let gnu = run(["du", "-s", "-B1"] + roots.map { Argument($0) }, directory: tree.path)
        let expected = gnu.lines.map { line in
          let fields = line.split(separator: "\t", maxSplits: 1)
          return "\(fields[1]) \(fields[0])"
        }
        let result = skipbackup(
          arguments: ["du", "--format", "json"] + roots.map { Argument($0) }, directory: tree.path)
        #expect(result.status == 0, "\(result)")
        let got = jsonObjects(result).map { object in
          "\(object["root"] as? String ?? "?") "
            + "\(side(object, "included").bytes + side(object, "excluded").bytes)"
        }
        #expect(got == expected, "\(roots)")
      }
    }

    private func du(arguments: [String]) throws -> [String: Any] {
      let result = skipbackup(
        arguments: ["du", "--format", "json"] + arguments.map { Argument($0) })
      try #require(result.status == 0, "\(result)")
      let objects = jsonObjects(result)
      try #require(objects.count == 1, "\(result)")
      return objects[0]
    }

    @Test func eachMechanismAndTheTopListsCountWhatDuCountsForThoseItems() throws {
      let tree = try TemporaryDirectory()
      let root = markedTree(tree)
      let usage = try du("-m", "all,nodump,cachedir", root)
      let cache = gnuDu("-B1", path: root + "/cache")
      let both = gnuDu("-B1", path: root + "/both")
      let nodump = gnuDu("-B1", path: root + "/nodump")
      let cachedir = gnuDu("-B1", path: root + "/cachedir")
      let shared = gnuDu("-B1", path: root + "/inc/shared")
      let ex2Alone = gnuDu("-B1", path: root + "/ex2")  // with the linked file
      let byMechanism = usage["by_mechanism"] as? [String: Int] ?? [:]
      // What lies under a marked directory counts under its mechanisms, and
      // a file with two marks counts under each.
      #expect(byMechanism["xdg"] == cache, "\(usage)")
      #expect(byMechanism["legacy"] == both, "\(usage)")
      // ex2's linked file counts where the walk met it first.
      let resource = byMechanism["resource"] ?? -1
      #expect(resource == both + ex2Alone || resource == both + ex2Alone - shared, "\(usage)")
      #expect(byMechanism["nodump"] == nodump, "\(usage)")
      #expect(byMechanism["cachedir"] == cachedir, "\(usage)")
      #expect(Set(byMechanism.keys) == ["legacy", "resource", "xdg", "nodump", "cachedir"])
      let excluded = side(usage, "excluded")
      #expect(excluded.bytes == cache + both + nodump + cachedir + resource - both, "\(usage)")
      // cache, cache/blob, cache/sub, cache/sub/deeper, both, ex2, maybe
      // ex2/shared-too, nodump, nodump/f, cachedir, cachedir/f, its tag.
      #expect(excluded.directories == 5, "\(usage)")
      #expect(excluded.files == 6 || excluded.files == 7, "\(usage)")

      let top = topPaths(usage, "top_excluded")
      #expect(top.first?.0 == root + "/cache" && top.first?.1 == cache, "\(top)")
      #expect(
        Set(top.map(\.0))
          == Set(["cache", "both", "ex2", "nodump", "cachedir"].map { root + "/" + $0 }))
      // Included directories: ranked by the included bytes below them, ROOT left out.
      let included = topPaths(usage, "top_included_directories")
      #expect(included.first?.0 == root + "/inc", "\(included)")
      #expect(!included.contains { $0.0 == root })
      let a = gnuDu("-B1", path: root + "/inc/a")
      #expect(included.contains { $0 == (root + "/inc/a", a) }, "\(included)")
      #expect(included.contains { $0.0 == root + "/inc/empty" })
      // --top bounds both lists.
      let one = try du("--top", "1", root)
      #expect(topPaths(one, "top_excluded").count == 1)
      #expect(topPaths(one, "top_included_directories").map(\.0) == [root + "/inc"])
    }

    @Test func aRootBelowAMarkedDirectoryIsExcludedWhole() throws {
      let tree = try TemporaryDirectory()
      setfattr(tree.directory("marked"), .legacy)
      tree.file("marked/inner/f", String(repeating: "x", count: 9_000))
      let root = tree.path + "/marked/inner"
      let usage = try du(root)
      #expect(side(usage, "included").bytes == 0)
      #expect(side(usage, "excluded").bytes == gnuDu("-B1", path: root))
      #expect(topPaths(usage, "top_excluded").map(\.0) == [root])
      #expect((usage["by_mechanism"] as? [String: Int])?["legacy"] == gnuDu("-B1", path: root))
    }

    @Test func aSweepRuleCountsTheBytesOfTheMarksItMade() throws {
      let tree = try TemporaryDirectory()
      let swept = tree.directory("root/node_modules")
      tree.file("root/node_modules/x.js", String(repeating: "j", count: 12_000))
      setfattr(swept, .xdg)
      // The record as a sweep writes it: in the attribute's name.
      setfattr(swept, "user.skipbackup.sweep.xdg:node_modules", hex: "")
      let usage = try du(tree.path + "/root")
      #expect(
        (usage["by_rule"] as? [String: Int]) == ["node_modules": gnuDu("-B1", path: swept)],
        "\(usage)")
    }

    @Test func textNamesSizesForAPersonAndTotalsSeveralRoots() throws {
      let tree = try TemporaryDirectory()
      let root = markedTree(tree)
      let other = tree.directory("other")
      tree.file("other/f", String(repeating: "o", count: 2_000_000))
      let result = skipbackup("du", Argument(root), Argument(other))
      #expect(result.status == 0, "\(result)")
      let text = result.output
      #expect(text.contains("MiB"), "\(text)")
      #expect(text.contains("largest excluded:\n"), "\(text)")
      #expect(text.contains("\ntotal\n"), "\(text)")
      #expect(text.contains(root + "/cache"), "\(text)")
      let json = skipbackup("du", "--format", "json", Argument(root), Argument(other))
      #expect(jsonObjects(json).count == 2, "one object a ROOT, no total")
    }

    /// An inode linked from two ROOTs counts under the first, as GNU du
    /// counts it given both, so the text total holds it once.
    @Test func aHardLinkAcrossRootsCountsOnceAsDuCountsIt() throws {
      let tree = try TemporaryDirectory()
      let first = tree.directory("r1")
      let second = tree.directory("r2")
      tree.file("r1/shared", String(repeating: "s", count: 300_000))
      link(first + "/shared", second + "/shared-too")
      tree.file("r2/own", String(repeating: "o", count: 5_000))
      setfattr(tree.file("r2/marked", String(repeating: "m", count: 7_000)), .xdg)
      func gnu(_ arguments: String...) -> [Int] {
        run(["du", "-s"] + arguments.map { Argument($0) } + [Argument(first), Argument(second)])
          .output.split(separator: "\n").map { Int($0.split(separator: "\t")[0]) ?? -1 }
      }
      let result = skipbackup("du", "--format", "json", Argument(first), Argument(second))
      #expect(result.status == 0, "\(result)")
      let objects = jsonObjects(result)
      try #require(objects.count == 2, "\(result)")
      let sides = objects.map { (side($0, "included"), side($0, "excluded")) }
      #expect(sides.map { $0.0.bytes + $0.1.bytes } == gnu("-B1"), "\(result)")
      let inodes = sides.map {
        $0.0.files + $0.0.directories + $0.1.files + $0.1.directories
      }
      #expect(inodes == gnu("--inodes"), "\(result)")
      #expect(inodes.reduce(0, +) == 5, "r1, r1/shared, r2, r2/own, r2/marked")
      // The text total: included r1/shared and r2/own, excluded r2/marked.
      let text = skipbackup("du", Argument(first), Argument(second))
      #expect(text.status == 0, "\(text)")
      let total = text.output.components(separatedBy: "\ntotal\n").last ?? ""
      let lines = total.split(separator: "\n")
      #expect(lines.count == 2 && lines[0].contains(" 2 files "), "\(text)")
      #expect(lines.count == 2 && lines[1].contains(" 1 file "), "\(text)")
    }

    @Test func anUnreadableRootIsReportedAndTheRestCounted() throws {
      let tree = try TemporaryDirectory()
      tree.file("root/f", "x")
      let missing = tree.path + "/missing"
      let result = skipbackup(
        "du", "--format", "json", Argument(missing), Argument(tree.path + "/root"))
      #expect(result.status == 1, "\(result)")
      #expect(diagnostic(result, naming: missing) != nil, "\(result)")
      #expect(jsonObjects(result).count == 1)
      let usage = skipbackup("du", "--top", "-1", Argument(tree.path))
      #expect(usage.status == 64, "\(usage)")
    }

    @Test func anUnreadableDirectoryIsReportedAndCountedAsDuCountsIt() throws {
      let tree = try TemporaryDirectory()
      tree.file("root/open/f", String(repeating: "x", count: 9_000))
      tree.file("root/closed/g", String(repeating: "y", count: 9_000))
      chmod(tree.path + "/root", 0o755)
      chmod(tree.path + "/root/closed", 0o700)
      let root = tree.path + "/root"
      let result = skipbackup("du", "--format", "json", Argument(root), asNobody: true)
      #expect(result.status == 1, "\(result)")
      #expect(diagnostic(result, naming: root + "/closed") != nil, "\(result)")
      let usage = try #require(jsonObjects(result).first)
      let gnu = run([
        "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "du", "-s", "-B1",
        Argument(root),
      ])
      #expect(Int(gnu.output.split(separator: "\t").first ?? "") == side(usage, "included").bytes)
    }

    @Test func aPathThatIsNotUTF8GetsItsBytesInBase64() throws {
      let tree = try TemporaryDirectory()
      let root = Array((tree.path + "/r").utf8) + [0xFE]
      #expect(mkdir(root.map { CChar(bitPattern: $0) } + [0], 0o755) == 0)
      let marked = root + Array("/b".utf8) + [0xFF]
      let descriptor = open(marked.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT, 0o644)
      #expect(descriptor >= 0)
      close(descriptor)
      setfattr(marked, .xdg)
      let result = skipbackup(arguments: ["du", "--format", "json", Argument(bytes: root)])
      #expect(result.status == 0, "\(result)")
      let object = try #require(jsonObjects(result).first)
      // The ROOT's bytes under the key every command uses, and each listed path's.
      #expect(pathBytes(of: object) == root, "\(result)")
      let top = object["top_excluded"] as? [[String: Any]] ?? []
      #expect(top.count == 1 && pathBytes(of: top[0]) == marked, "\(result)")
    }
  }
}
