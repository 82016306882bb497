import Foundation
import Testing
import TestSupport

extension CLITests {
  /// `skipbackup list`: the topmost excluded items, or every included one,
  /// byte for byte, checked against what getfattr -R finds.
  @Suite struct ListTests {
    /// A tree marked by setfattr only, with every kind of value and name the
    /// reading rules and the walk have to get right. Returns the root.
    private func markedTree(_ tree: TemporaryDirectory) -> String {
      let root = tree.directory("root")
      tree.file("root/plain")
      setfattr(tree.file("root/legacy-one"), Names.legacy, hex: "01")
      setfattr(tree.file("root/legacy-two"), Names.legacy, hex: "02")
      setfattr(tree.file("root/legacy-zero"), Names.legacy, hex: "00")
      setfattr(tree.file("root/xdg-true"), Names.xdg, hex: hex("true".bytes))
      setfattr(tree.file("root/xdg-false"), .xdg)
      setfattr(tree.file("root/resource-any-value"), Names.resource, hex: "00")
      setfattr(tree.file("root/other-attribute"), "user.other", hex: "01")
      // A marked directory with marked items below it: only it is topmost.
      let cache = tree.directory("root/cache")
      setfattr(cache, .xdg)
      setfattr(tree.file("root/cache/blob"), .resource)
      setfattr(tree.directory("root/cache/sub"), .legacy)
      setfattr(tree.file("root/cache/sub/deeper"), .legacy)
      // Marks deep down in unmarked directories.
      setfattr(tree.file("root/a/b/c/deep-file"), .resource)
      setfattr(tree.directory("root/a/b/marked-dir"), .legacy)
      tree.file("root/a/b/marked-dir/inside")
      tree.file("root/a/unmarked")
      // Odd names.
      setfattr(tree.file(named: "with space".bytes, in: "root"), .legacy)
      setfattr(tree.file(named: "new\nline".bytes, in: "root"), .resource)
      setfattr(tree.file(named: [0xFF, 0x20, 0x62, 0x61, 0x64], in: "root"), .xdg)
      setfattr(tree.file(named: "-dash".bytes, in: "root"), .resource)
      setfattr(tree.file(named: "back\\slash".bytes, in: "root/a"), .legacy)
      tree.file(named: [0x75, 0x6E, 0xFE], in: "root/a")
      // Things that keep no user attributes, and a link out of the tree.
      setfattr(tree.file("outside/marked"), .resource)
      tree.symlink("root/escape", to: "../outside")
      tree.symlink("root/a/dangling", to: "nowhere")
      tree.fifo("root/a/fifo")
      return root
    }

    @Test func listNullPrintsExactlyTheTopmostItemsGetfattrFindsMarked() throws {
      let tree = try TemporaryDirectory()
      let root = markedTree(tree)
      let expected = topmost(getfattrMarkedPaths(root))
      // The tree is what it is meant to be: a check of the check.
      #expect(expected.count == 12, "\(expected.map(display))")
      #expect(expected.contains(tree.bytes("root/cache".bytes)))
      #expect(!expected.contains(tree.bytes("root/cache/blob".bytes)))

      let result = skipbackup("list", "-0", Argument(root))
      #expect(result.status == 0, "\(result)")
      #expect(result.standardError.isEmpty)
      #expect(result.standardOutput.last == 0, "every path ends with a NUL")
      let listed = result.nulSeparated
      #expect(listed.count == Set(listed).count, "no path twice")
      #expect(Set(listed) == expected, "\(Set(listed).symmetricDifference(expected).map(display))")

      // The same with --null and an explicit --excluded.
      let long = skipbackup("list", "--excluded", "--null", Argument(root))
      #expect(long.standardOutput == result.standardOutput)
    }

    @Test func listAfterTheToolMarkedAgreesWithGetfattrToo() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      for name in ["a/x", "a/y", "b/z", "c/d/e/f", "g"] { tree.file("root/" + name) }
      #expect(
        skipbackup("mark", "-m", "legacy", Argument(root + "/a"), Argument(root + "/c/d/e/f"))
          .status
          == 0)
      #expect(skipbackup("mark", "-R", "-m", "xdg", Argument(root + "/c")).status == 0)
      let expected = topmost(getfattrMarkedPaths(root))
      #expect(expected == [tree.bytes("root/a".bytes), tree.bytes("root/c".bytes)])
      #expect(Set(skipbackup("list", "-0", Argument(root)).nulSeparated) == expected)
    }

    @Test func includedIsEveryItemNoMarkExcludes() throws {
      let tree = try TemporaryDirectory()
      let root = markedTree(tree)
      let result = skipbackup("list", "--included", "-0", Argument(root))
      #expect(result.status == 0, "\(result)")
      let listed = result.nulSeparated
      #expect(listed.count == Set(listed).count)
      // Everything find sees, less what is excluded, is what is listed.
      let find = run(["find", Argument(root), "-print0"])
      let excluded = topmost(getfattrMarkedPaths(root))
      let everything = Set(find.nulSeparated)
      let included = everything.filter { path in
        !excluded.contains { path == $0 || path.starts(with: $0 + [UInt8(ascii: "/")]) }
      }
      #expect(Set(listed) == included, "\(Set(listed).symmetricDifference(included).map(display))")
      #expect(listed.contains(root.bytes), "the root is an item too")
      #expect(listed.contains(tree.bytes("root/escape".bytes)), "links are listed, not entered")
      #expect(!listed.contains { String(decoding: $0, as: UTF8.self).contains("outside") })
    }

    @Test func newlineSeparatedOutputAndRelativeRoots() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.directory("root/marked")
      setfattr(marked, .legacy)
      tree.file("root/marked/inside")
      tree.file("root/plain")
      let excluded = skipbackup("list", "root", directory: tree.path)
      #expect(excluded.output == "root/marked\n")
      let dot = skipbackup("list", ".", directory: tree.path + "/root")
      #expect(dot.output == "./marked\n")
      let slash = skipbackup("list", "--included", "root/", directory: tree.path)
      #expect(Set(slash.lines) == ["root", "root/plain"])
    }

    @Test func aRootBelowAMarkedDirectoryIsPrintedWhole() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.directory("marked")
      setfattr(marked, .resource)
      let sub = tree.directory("marked/sub")
      tree.file("marked/sub/file")
      #expect(skipbackup("list", Argument(sub)).output == sub + "\n")
      #expect(skipbackup("list", "--included", Argument(sub)).output.isEmpty)
    }

    @Test func mechanismNarrowsWhichMarksCount() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let legacy = tree.file("root/legacy")
      setfattr(legacy, .legacy)
      let xdg = tree.directory("root/xdg")
      setfattr(xdg, .xdg)
      let resource = tree.file("root/xdg/resource")
      setfattr(resource, .resource)
      #expect(Set(skipbackup("list", Argument(root)).lines) == [legacy, xdg])
      #expect(Set(skipbackup("list", "-m", "apple", Argument(root)).lines) == [legacy, resource])
      #expect(skipbackup("list", "-m", "legacy", Argument(root)).lines == [legacy])
      #expect(Set(skipbackup("list", "-m", "resource,xdg", Argument(root)).lines) == [xdg])
      #expect(
        Set(skipbackup("list", "--included", "-m", "xdg", Argument(root)).lines) == [root, legacy])
    }

    @Test func severalRootsAndFileRoots() throws {
      let tree = try TemporaryDirectory()
      let one = tree.file("one/marked")
      setfattr(one, .legacy)
      let two = tree.file("two/file")
      setfattr(two, .resource)
      let result = skipbackup(
        "list", Argument(tree.path + "/one"), Argument(two), Argument(tree.path + "/three-missing"))
      #expect(result.status == 1)
      #expect(result.lines == [one, two])
    }
  }
}
