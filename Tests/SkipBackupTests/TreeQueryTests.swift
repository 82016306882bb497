// The recursive queries, `MechanismSet.excludedItems(under:)` and
// `statuses(under:)`, iterated in process on hostile trees and compared
// with what getfattr -R and find say of the same tree, and with what the
// tool's `list` and `status -R` print for it: byte for byte, in the same
// order where the walk is on one thread (under 1,000 items). What nobody
// cannot read goes through the probe, the sequence in a process of its own.

import Foundation
import SkipBackup
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct TreeQueryTests {
  /// Every item of `sequence`, collected.
  static func collect<S: AsyncSequence>(
    _ sequence: S
  ) async throws(SkipBackupError) -> [S.Element] where S.Failure == SkipBackupError {
    var items: [S.Element] = []
    for try await item in sequence { items.append(item) }
    return items
  }

  /// The topmost excluded items of a tree of hostile names (newlines,
  /// bytes that are not UTF-8, a link out of the tree, a FIFO) are what
  /// getfattr -R finds marked, and exactly what `list -0` prints, in its
  /// order; each item's marks are those getfattr reads on it. Its statuses
  /// are every item find lists.
  @Test func excludedItemsAreWhatGetfattrFindsAndListPrints() async throws {
    let tree = try MarkedTree(seed: 43)
    let items = try await Self.collect(MechanismSet.all.excludedItems(under: FilePath(tree.root)))
    let paths = items.map(\.path.bytes)
    #expect(paths.count == Set(paths).count, "no path twice")
    #expect(Set(paths) == tree.excluded)
    #expect(paths.contains { $0.contains(UInt8(ascii: "\n")) }, "a name with a newline")
    #expect(paths.contains { $0.contains(0xFF) }, "a name that is not UTF-8")

    let list = skipbackup("list", "-0", Argument(tree.root))
    #expect(list.status == 0, "\(list)")
    #expect(list.nulSeparated == paths, "list's order: one walk thread under 1,000 items")

    // Each mark getfattr reads with a value that is a mark, by the rules of formats.md.
    let dumps = getfattrMarks(paths)
    for item in items {
      #expect(item.marks == dumps[item.path.bytes], "\(display(item.path.bytes))")
    }

    // The statuses of the same tree: each item find -print0 lists, once.
    let entries = try await Self.collect(MechanismSet.all.statuses(under: FilePath(tree.root)))
    let statusPaths = entries.map(\.path.bytes)
    #expect(statusPaths.count == Set(statusPaths).count, "no path twice")
    #expect(Set(statusPaths) == Set(find(tree.root)))
  }

  /// Every item find lists is there once with its state, excluded exactly
  /// when it is at or below a topmost marked item; `status -R` prints the
  /// same lines in the same order; each item's inheritance names the
  /// nearest marked directory above it.
  @Test func statusesAreWhatFindListsAndStatusPrints() async throws {
    // Without newlines in names: status's text is a line an item.
    let tree = try MarkedTree(seed: 44, newlines: false)
    let entries = try await Self.collect(MechanismSet.all.statuses(under: FilePath(tree.root)))
    let paths = entries.map(\.path.bytes)
    #expect(paths.first == Array(tree.root.utf8), "the root first")
    #expect(paths.count == Set(paths).count, "no path twice")
    #expect(Set(paths) == Set(find(tree.root)))
    let excluded = tree.excluded
    let marked = Set(getfattrMarkedPaths(tree.root))
    for entry in entries {
      let path = entry.path.bytes
      let under = excluded.contains { path == $0 || path.starts(with: $0 + [UInt8(ascii: "/")]) }
      #expect(entry.status.isExcluded == under, "\(display(path))")
      #expect(entry.status.marks.isEmpty == !marked.contains(path), "\(display(path))")
      let nearest = marked.filter { path.starts(with: $0 + [UInt8(ascii: "/")]) }
        .max { $0.count < $1.count }
      #expect(entry.status.inheritedFrom?.bytes == nearest, "\(display(path))")
    }

    let status = skipbackup("status", "-R", Argument(tree.root))
    #expect(status.status == 0, "\(status)")
    let lines = entries.map { entry in
      Array((entry.status.isExcluded ? "[Excluded]    " : "[Included]    ").utf8)
        + entry.path.bytes + [10]
    }
    #expect(status.standardOutput == Array(lines.joined()))
  }

  /// A root below a marked directory is the one excluded item, as `list`
  /// prints it, and every status below it inherits from that directory.
  @Test func aRootBelowAMarkedDirectoryIsExcludedWhole() async throws {
    let tree = try TemporaryDirectory()
    let marked = tree.directory("marked")
    setfattr(marked, .xdg)
    let root = tree.directory("marked/sub")
    let file = tree.file("marked/sub/file")
    setfattr(file, .legacy)
    let items = try await Self.collect(MechanismSet.all.excludedItems(under: FilePath(root)))
    #expect(items == [ExcludedItem(path: FilePath(root), marks: [])])
    let url = URL(fileURLWithPath: root)
    #expect(try await Self.collect(MechanismSet.all.excludedItems(under: url)) == items)
    #expect(skipbackup("list", Argument(root)).output == root + "\n")
    let entries = try await Self.collect(MechanismSet.all.statuses(under: FilePath(root)))
    #expect(Set(entries.map(\.path)) == [FilePath(root), FilePath(file)])
    #expect(try await Self.collect(MechanismSet.all.statuses(under: url)) == entries)
    for entry in entries {
      #expect(entry.status.inheritedFrom == FilePath(marked))
      #expect(entry.status.marks == (entry.path == FilePath(file) ? .legacy : []))
    }
  }

  /// A tree deeper than PATH_MAX is walked through descriptors: every
  /// level's status, and the marked leaf as the one excluded item.
  @Test func aTreeDeeperThanPathMax() async throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    defer { _ = run(["rm", "-rf", Argument(root)]) }
    let script = """
      import os, sys
      fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
      for _ in range(25):
          os.mkdir("d" * 200, dir_fd=fd)
          child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
          os.close(fd)
          fd = child
      leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
      os.setxattr(leaf, "user.com.apple.MobileBackup", b"\\x01")
      """
    let built = run([python3, "-c", Argument(script), Argument(root)])
    try #require(built.status == 0, "\(built)")
    let leaf =
      root + String(repeating: "/" + String(repeating: "d", count: 200), count: 25) + "/leaf"
    #expect(leaf.utf8.count > 4096 + 900, "well past PATH_MAX")
    let items = try await Self.collect(MechanismSet.all.excludedItems(under: FilePath(root)))
    #expect(items == [ExcludedItem(path: FilePath(leaf), marks: .legacy)])
    let entries = try await Self.collect(MechanismSet.all.statuses(under: FilePath(root)))
    #expect(entries.count == 27)
    #expect(
      entries.last
        == ItemStatus(path: FilePath(leaf), status: .init(marks: .legacy, inheritedFrom: nil)))
  }

  /// What nobody cannot read (two directories of root's, mode 0700) is
  /// passed over: the sequence gives what `list` prints, as nobody, then
  /// throws one error that names both, where `list` exits 1.
  @Test func whatCannotBeReadIsNamedAfterTheLastItem() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    let visible = tree.file("root/visible")
    setfattr(visible, .legacy)
    for name in ["closed", "shut"] {
      let closed = tree.directory("root/" + name)
      setfattr(tree.file("root/\(name)/hidden"), .legacy)
      chmod(closed, 0o700)
    }
    let listed = skipbackup("list", "-0", Argument(root), asNobody: true)
    #expect(listed.status == 1, "\(listed)")
    #expect(listed.nulSeparated == [Array(visible.utf8)])

    let excluded = probe("excluded", Argument(root), asNobody: true)
    #expect(excluded.status == 1, "\(excluded)")
    #expect(excluded.nulSeparated == listed.nulSeparated)
    let errors = excluded.errors.split(separator: "\n").map(String.init)
    #expect(errors.count == 3, "\(excluded)")
    #expect(errors.first?.hasPrefix(root + ": 2 items below could not be read") == true)
    for name in ["closed", "shut"] {
      #expect(
        errors.first?.contains("\(root)/\(name): permission denied (openat: ") == true,
        "each failure's own message: \(excluded)")
    }
    #expect(Set(errors.dropFirst()) == [root + "/closed", root + "/shut"])

    let statuses = probe("statuses", Argument(root), asNobody: true)
    #expect(statuses.status == 1, "\(statuses)")
    #expect(
      Set(statuses.nulSeparated)
        == Set(
          ["0 " + root, "1 " + visible, "0 " + root + "/closed", "0 " + root + "/shut"].map {
            Array($0.utf8)
          }))
    #expect(statuses.errors.hasPrefix(root + ": 2 items below could not be read"))
  }

  /// One item that cannot be read is the error itself: its path and the
  /// kernel's reason, as `list` says it.
  @Test func oneUnreadItemIsTheErrorItself() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    chmod(tree.directory("root/closed"), 0o700)
    let excluded = probe("excluded", Argument(root), asNobody: true)
    #expect(excluded.status == 1, "\(excluded)")
    #expect(excluded.errors.hasPrefix(root + "/closed: permission denied"), "\(excluded)")
    // Its unread items are itself.
    #expect(excluded.errors.split(separator: "\n").last.map(String.init) == root + "/closed")
    let listed = skipbackup("list", Argument(root), asNobody: true)
    #expect(listed.errors.hasPrefix("skipbackup: " + root + "/closed: permission denied"))
  }

  /// A root that does not exist is the one error, with no item.
  @Test func aMissingRootIsTheOneError() async {
    let missing = FilePath("/nonexistent-skipbackup-root")
    await #expect(throws: SkipBackupError.self) {
      _ = try await Self.collect(MechanismSet.all.statuses(under: missing))
    }
    do {
      _ = try await Self.collect(MechanismSet.all.excludedItems(under: missing))
      Issue.record("no error")
    } catch {
      #expect(error.path == missing && error.errno == .noSuchFileOrDirectory, "\(error)")
    }
    do {
      _ = try await Self.collect(
        MechanismSet.all.excludedItems(under: URL(string: "https://example.com/x")!))
      Issue.record("no error")
    } catch {
      #expect(error.description.hasPrefix("https://example.com/x: not a file URL"))
    }
  }

  /// `oneFileSystem` (`-x`): a mount point is an item, and nothing below it.
  @Test func oneFileSystemStopsAtAMountPoint() async throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    let point = tree.directory("root/mnt")
    guard let mount = TemporaryMount(at: point) else { return }
    defer { mount.unmount() }
    let inside = tree.file("root/mnt/inside")
    setfattr(inside, .legacy)
    let all = try await Self.collect(MechanismSet.all.statuses(under: FilePath(root)))
    #expect(Set(all.map(\.path)) == [FilePath(root), FilePath(point), FilePath(inside)])
    let one = try await Self.collect(
      MechanismSet.all.statuses(under: FilePath(root), oneFileSystem: true))
    #expect(Set(one.map(\.path)) == [FilePath(root), FilePath(point)])
    let excluded = try await Self.collect(
      MechanismSet.all.excludedItems(under: FilePath(root), oneFileSystem: true))
    #expect(excluded.isEmpty)
  }

  /// The descriptors open on `tree`: those /proc/self/fd links lead into it
  /// (other tests' descriptors, in this process too, lead elsewhere).
  static func descriptors(into tree: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.compactMap { name in
      guard
        let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "/proc/self/fd/" + name),
        target == tree || target.hasPrefix(tree + "/")
      else { return nil }
      return target
    }
  }

  /// On a 200,000-file tree, a `break` after 1,000 items and a cancelled
  /// task each stop the walk: no descriptor into the tree is left open
  /// once the loop is left, while the walk, running, held some.
  @Test func stoppingEarlyClosesEveryDescriptor() async throws {
    let tree = try TemporaryDirectory()
    let root = tree.path + "/tree"
    let made = run([python3, Argument(treeGenerator("mktree.py")), Argument(root), "200000"])
    try #require(made.status == 0, "\(made)")

    var seen = 0
    var openWhileWalking: [String] = []
    for try await _ in MechanismSet.all.statuses(under: FilePath(root)) {
      seen += 1
      if seen == 1_000 { openWhileWalking = Self.descriptors(into: root) }
      if seen == 2_000 { break }
    }
    #expect(!openWhileWalking.isEmpty, "the walk holds its directories open")
    #expect(Self.descriptors(into: root).isEmpty)

    // A task cancelled mid-walk: its loop ends without an error.
    let (started, signal) = AsyncStream.makeStream(of: Void.self)
    let task = Task {
      var count = 0
      for try await _ in MechanismSet.all.excludedItems(under: FilePath(root)) {
        count += 1
        if count == 100 { signal.yield() }
      }
      return count
    }
    for await _ in started { break }
    task.cancel()
    let count = try await task.value
    #expect(count >= 100 && count < 20_040, "stopped before the end: \(count)")
    #expect(Self.descriptors(into: root).isEmpty)
  }
}

/// Which mechanisms' marks getfattr reads on each of `paths`, by the value
/// rules of formats.md: legacy a first byte not 0, resource any value, xdg
/// exactly `false`.
private func getfattrMarks(_ paths: [[UInt8]]) -> [[UInt8]: MechanismSet] {
  let result = run(
    ["getfattr", "-h", "--absolute-names", "-e", "hex", "-d", "-m", "^user\\.", "--"]
      + paths.map { Argument(bytes: $0) })
  var marks: [[UInt8]: MechanismSet] = [:]
  for path in paths { marks[path] = [] }
  var current: [UInt8]?
  for line in result.standardOutput.split(separator: 10) {
    let header = Array("# file: ".utf8)
    if line.starts(with: header) {
      current = unescapeGetfattr(Array(line.dropFirst(header.count)))
      continue
    }
    guard let current, let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
    let name = String(decoding: line[..<equals], as: UTF8.self)
    let value = bytes(fromHex: String(decoding: line[(equals + 3)...], as: UTF8.self))
    switch name {
    case Names.legacy where value.first.map { $0 != 0 } ?? false: marks[current]?.insert(.legacy)
    case Names.resource: marks[current]?.insert(.resource)
    case Names.xdg where value == Array("false".utf8): marks[current]?.insert(.xdg)
    default: break
    }
  }
  return marks
}
