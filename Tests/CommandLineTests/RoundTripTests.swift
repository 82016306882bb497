import Foundation
import Testing
import TestSupport

/// Marks travel with the files: copies made by rsync -aX, cp -a and GNU tar
/// --xattrs carry the same attributes, byte for byte, and read as the same
/// exclusions; and the bytes a Mac writes read as marks.
@Suite(.onTestThreads) struct RoundTripTests {
  enum Copier: String, CaseIterable, CustomTestStringConvertible {
    case rsync, cp, tar
    var testDescription: String { rawValue }
  }

  /// Items marked by each mechanism through the tool, and unmarked ones.
  private func markedTree() throws -> (TemporaryDirectory, String) {
    let tree = try TemporaryDirectory()
    let source = tree.path + "/source"
    for path in [
      "legacy file", "resource file", "xdg file", "apple file", "kept file",
      "legacy dir/inside", "resource dir/sub/inside", "xdg dir/inside", "kept dir/resource inside",
      "kept dir/kept inside", "$HOME [*]/resource inside",
    ] {
      tree.file("source/" + path)
    }
    for (mechanism, paths) in [
      ("legacy", ["legacy file", "legacy dir"]),
      (
        "resource",
        ["resource file", "resource dir", "kept dir/resource inside", "$HOME [*]/resource inside"]
      ),
      ("xdg", ["xdg file", "xdg dir"]),
      ("apple", ["apple file"]),
    ] {
      try check(
        skipbackup(
          arguments: ["mark", "-m", Argument(mechanism)] + paths.map { Argument(source + "/" + $0) }
        ))
    }
    setfattr(source + "/kept file", Names.xdg, hex: hex(Array("true".utf8)))
    return (tree, source)
  }

  /// The topmost excluded items under `root`, relative to it.
  private func excluded(_ root: String) throws -> Set<Bytes> {
    let result = try check(skipbackup("list", "--excluded", "-0", Argument(root)))
    return Set(result.nulSeparated.map { Array($0.dropFirst(root.utf8.count + 1)) })
  }

  @Test(arguments: Copier.allCases)
  func marksSurviveACopy(copier: Copier) throws {
    let (tree, source) = try markedTree()
    defer { withExtendedLifetime(tree) {} }
    let copy = tree.path + "/copy"
    switch copier {
    case .rsync:
      try check(run(["rsync", "-aX", Argument(source + "/"), Argument(copy + "/")]))
    case .cp:
      try check(run(["cp", "-a", Argument(source), Argument(copy)]))
    case .tar:
      let archive = tree.path + "/marks.tar"
      try check(
        run([
          "tar", "--create", "--xattrs", "--xattrs-include=user.*", "--file", Argument(archive),
          "-C", Argument(source), ".",
        ]))
      Make.directory(Bytes(copy))
      try check(
        run([
          "tar", "--extract", "--xattrs", "--xattrs-include=user.*", "--file", Argument(archive),
          "-C", Argument(copy),
        ]))
    }

    // getfattr sees the same attributes, byte for byte, on every item.
    let items = try pathSet(under: Bytes(source))
    #expect(items.count == 18)
    for item in items {
      let relative = String(decoding: item, as: UTF8.self)
      let original = getfattrDump(source + "/" + relative)
      let copied = getfattrDump(copy + "/" + relative)
      #expect(copied == original, "\(copier): \(relative)")
    }
    #expect(getfattrHex(copy + "/resource file", Names.resource) == "0x" + Names.resourceValueHex)
    #expect(getfattrHex(copy + "/legacy dir", Names.legacy) == "0x01")
    #expect(getfattr(copy + "/xdg dir", Names.xdg) == Array("false".utf8))

    // And skipbackup reads the same exclusions on both sides.
    let expected: Set<Bytes> = Set(
      [
        "legacy file", "resource file", "xdg file", "apple file", "legacy dir", "resource dir",
        "xdg dir", "kept dir/resource inside", "$HOME [*]/resource inside",
      ].map(Bytes.init))
    #expect(try excluded(source) == expected)
    #expect(try excluded(copy) == expected)
  }

  /// A tree as it arrives from a Mac through rsync -X, which puts the Mac's
  /// attribute names under user.: the legacy byte and the resource value's
  /// binary property list, written by setfattr, read as excluded.
  @Test func attributesAMacWritesReadAsMarks() throws {
    let tree = try TemporaryDirectory()
    defer { withExtendedLifetime(tree) {} }
    let legacy = tree.file("from mac/legacy")
    let resource = tree.directory("from mac/resource dir")
    let inside = tree.file("from mac/resource dir/inside")
    let kept = tree.file("from mac/kept")
    setfattr(legacy, "user.com.apple.MobileBackup", hex: "01")
    setfattr(
      resource, "user.com.apple.metadata:com_apple_backup_excludeItem", hex: Names.resourceValueHex)

    let status = try check(
      skipbackup(
        "status", "-v", Argument(legacy), Argument(resource), Argument(inside), Argument(kept)))
    #expect(
      status.lines == [
        "[Excluded]    \(legacy)    (marked: legacy)",
        "[Excluded]    \(resource)    (marked: resource)",
        "[Excluded]    \(inside)    (inherited from \(resource))",
        "[Included]    \(kept)",
      ])
    #expect(skipbackup("check", Argument(inside)).status == 0)
    #expect(skipbackup("check", Argument(kept)).status == 1)
  }
}
