import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The filesystem matrix: mark, clear, status, list, du, sweep, export and
/// run on each filesystem a home lives on or a backup reads, one small tree
/// a filesystem. Each cell gives the results it gives on ext4, or one line
/// that names the filesystem and what it lacks. docs/format.md's table of
/// filesystems is what this suite finds.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct FilesystemMatrixTests {
  /// A filesystem a home lives on, which keeps user attributes.
  enum Home: String, CaseIterable, CustomTestStringConvertible {
    case ext4, xfs, btrfs, tmpfs, overlay, fuse
    var testDescription: String { rawValue }

    /// The filesystem, mounted, and the tree's root on it (on btrfs, in a
    /// subvolume of its own, as a home is).
    func make() throws -> (TestFilesystem, String) {
      let filesystem: TestFilesystem
      switch self {
      case .ext4: filesystem = try TestFilesystem(.ext4, size: "32M")
      // mkfs.xfs refuses a filesystem smaller than 300 MB.
      case .xfs: filesystem = try TestFilesystem(.xfs, size: "300M")
      case .btrfs:
        let image = try BtrfsImage()
        return (image, try image.subvolume("home"))
      case .tmpfs: filesystem = try TestFilesystem(mounting: "tmpfs")
      case .overlay: filesystem = try TestFilesystem(overlay: ())
      case .fuse: filesystem = try TestFilesystem(bindfs: [])
      }
      let root = filesystem.mountPoint + "/home"
      Make.directory(Bytes(root))
      return (filesystem, root)
    }
  }

  /// A filesystem that keeps no user attributes at all, and the words its
  /// line names it by.
  enum Bare: String, CaseIterable, CustomTestStringConvertible {
    case ramfs, fuseWithoutAttributes
    var testDescription: String { rawValue }

    func make() throws -> TestFilesystem {
      switch self {
      case .ramfs: try TestFilesystem(mounting: "ramfs")
      case .fuseWithoutAttributes: try TestFilesystem(bindfs: ["--xattr-none"])
      }
    }

    var named: String {
      switch self {
      case .ramfs: "the filesystem here, ramfs, keeps no user extended attributes"
      case .fuseWithoutAttributes:
        "the filesystem here, a FUSE filesystem, keeps no user extended attributes"
      }
    }
  }

  /// The tree of every cell: a file and a directory marked by `mark`, a
  /// file marked by setfattr, a node_modules the sweep marks, and a name
  /// with a newline that each tool must carry as bytes.
  private static func makeTree(at root: String, peerMarks: Bool = true) {
    for directory in ["keep", "docs", "cache", "project", "project/node_modules"] {
      Make.directory(Bytes(root + "/" + directory))
    }
    for file in [
      "keep/a", "docs/b", "secret", "cache/c", "project/package.json", "project/node_modules/x.js",
    ] {
      Make.file(Bytes(root + "/" + file))
    }
    Make.file(Bytes(root + "/odd\nname"))
    if peerMarks { setfattr(root + "/docs/b", .xdg) }
  }

  /// Marks the tree as a person would: `mark` on a file and a directory,
  /// then `sweep`.
  private static func markTree(at root: String) throws {
    try check(skipbackup("mark", Argument(root + "/secret"), Argument(root + "/cache")))
    try check(skipbackup("sweep", "-q", Argument(root)))
  }

  /// What every command reads from the marked tree, relative to ROOT.
  private static let excluded: Set<Bytes> = [
    Bytes("cache"), Bytes("docs/b"), Bytes("project/node_modules"), Bytes("secret"),
  ]
  private static let included: Set<Bytes> = [
    Bytes(""), Bytes("keep"), Bytes("keep/a"), Bytes("docs"), Bytes("project"),
    Bytes("project/package.json"), Bytes("odd\nname"),
  ]
  /// Every item of the tree, for a filesystem where nothing can be marked.
  private static let everything: Set<Bytes> = included.union([
    Bytes("cache"), Bytes("cache/c"), Bytes("docs/b"), Bytes("project/node_modules"),
    Bytes("project/node_modules/x.js"), Bytes("secret"),
  ])

  @Test(arguments: Home.allCases)
  func everyCommandGivesTheResultsItGivesOnExt4(home: Home) throws {
    let (filesystem, root) = try home.make()
    Self.makeTree(at: root)
    try Self.markTree(at: root)
    #expect(getfattr(root + "/secret", Names.resource) != nil, "\(home): mark wrote no attribute")
    #expect(
      getfattr(root + "/project/node_modules", Names.resource) != nil,
      "\(home): the sweep marked nothing")
    try Self.expectReadResults(root, included: Self.included, excluded: Self.excluded)
    let frozen = skipbackup(
      "run", "-q", "--snapshot", Argument(root), "--", "find", Argument(root), "-print0")
    if home == .btrfs {
      try #require(frozen.status == 0, "\(frozen)")
      #expect(Self.relative(frozen.nulSeparated, to: root) == Self.included)
    } else {
      #expect(frozen.status == 1 && frozen.standardOutput.isEmpty, "\(frozen)")
      #expect(
        frozen.errors == "skipbackup: \(root): not on btrfs, the filesystem run --snapshot can "
          + "snapshot; run it without --snapshot (the live view), or see docs/backups.md\n",
        "\(frozen)")
    }
    try check(skipbackup("clear", Argument(root + "/secret")))
    #expect(getfattr(root + "/secret", Names.resource) == nil, "\(home): clear left the mark")
    #expect(
      try check(skipbackup("status", Argument(root + "/secret"))).lines.first?.hasPrefix(
        "[Included]") == true)
    withExtendedLifetime(filesystem) {}
  }

  /// squashfs and erofs, made from a marked tree with its attributes: every
  /// command reads the marks as on ext4, and mark, clear and a sweep that
  /// would write say in one line that the image is read-only.
  @Test(arguments: [TestFilesystem.Image.squashfs, .erofs])
  func aReadOnlyImageReadsItsMarksAndRefusesChangesInOneLine(
    image kind: TestFilesystem.Image
  ) throws {
    let source = try TemporaryDirectory(prefix: "skipbackup-source")
    let tree = source.directory("home")
    Self.makeTree(at: tree)
    try Self.markTree(at: tree)
    let image = try TestFilesystem(kind, of: tree)
    let root = image.mountPoint
    try Self.expectReadResults(root, included: Self.included, excluded: Self.excluded)
    for command in [["mark", root + "/keep/a"], ["clear", root + "/secret"]] {
      let result = skipbackup(arguments: command.map { Argument($0) })
      #expect(result.status == 1, "\(result)")
      #expect(
        result.errors.split(separator: "\n").map(String.init) == [
          "skipbackup: \(command[1]): read-only file system: \(kind.rawValue) is an image "
            + "nothing writes to, so its marks are read but never changed (make the image "
            + "again from a tree marked as it should be) (\(Self.call(result)))"
        ], "\(result)")
    }
    // A tree the sweep finds marked needs no write.
    try check(skipbackup("sweep", "-q", Argument(root)))
  }

  /// ramfs, and a FUSE mount that passes no attributes on: nothing there
  /// is marked, so every reader sees the whole tree, and a mark is one line
  /// naming the filesystem.
  @Test(arguments: Bare.allCases)
  func aFilesystemWithoutUserAttributesSaysSoInOneLine(bare: Bare) throws {
    let filesystem = try bare.make()
    let root = filesystem.mountPoint + "/home"
    Make.directory(Bytes(root))
    Self.makeTree(at: root, peerMarks: false)
    let peer = run([
      "setfattr", "-n", Argument(Names.xdg), "-v", "true", Argument(root + "/docs/b"),
    ])
    #expect(peer.status != 0 && peer.errors.contains("Operation not supported"), "\(peer)")
    let marked = skipbackup("mark", Argument(root + "/secret"))
    #expect(marked.status == 1, "\(marked)")
    let lines = marked.errors.split(separator: "\n").map(String.init)
    #expect(lines.count == 1, "\(marked)")
    #expect(
      lines.first?.hasPrefix("skipbackup: \(root)/secret: \(bare.named)") == true, "\(marked)")
    // The sweep's record and mark on node_modules: one line, the same.
    let swept = skipbackup("sweep", "-q", Argument(root))
    #expect(swept.status == 1, "\(swept)")
    #expect(
      swept.errors.split(separator: "\n").map {
        $0.hasPrefix("skipbackup: \(root)/project/node_modules: \(bare.named)")
      } == [true],
      "\(swept)")
    try Self.expectReadResults(root, included: Self.everything, excluded: [])
    withExtendedLifetime(filesystem) {}
  }

  /// status, list, du, export (through rsync) and run, each on `root`.
  private static func expectReadResults(
    _ root: String, included: Set<Bytes>, excluded: Set<Bytes>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let status = try check(
      skipbackup("status", Argument(root + "/secret"), Argument(root + "/keep/a")))
    #expect(
      status.lines.map { $0.split(separator: " ").first.map(String.init) }
        == [excluded.contains(Bytes("secret")) ? "[Excluded]" : "[Included]", "[Included]"],
      "\(status)", sourceLocation: sourceLocation)
    let listed = try check(skipbackup("list", "-0", Argument(root)))
    #expect(
      relative(listed.nulSeparated, to: root) == excluded, "list: \(listed)",
      sourceLocation: sourceLocation)
    let listedIncluded = try check(skipbackup("list", "--included", "-0", Argument(root)))
    #expect(
      relative(listedIncluded.nulSeparated, to: root) == included,
      "list --included: \(listedIncluded)",
      sourceLocation: sourceLocation)
    // du's two sides add up to what GNU du counts.
    let usage = try check(skipbackup("du", "--apparent-size", "--format", "json", Argument(root)))
    let object = try #require(jsonObjects(usage).first, sourceLocation: sourceLocation)
    let sides = ["included", "excluded"].compactMap { object[$0] as? [String: Any] }
    let bytes = sides.compactMap { $0["bytes"] as? Int }.reduce(0, +)
    let gnu = try check(run(["du", "-s", "-b", Argument(root)]))
    #expect(
      "\(bytes)" == gnu.output.split(separator: "\t").first.map(String.init), "\(usage) \(gnu)",
      sourceLocation: sourceLocation)
    // export's rules, as rsync obeys them.
    let place = try TemporaryDirectory(prefix: "skipbackup-export")
    let rules = place.path + "/rules"
    try check(skipbackup("export", "--for", "rsync", "-o", Argument(rules), Argument(root)))
    let destination = place.directory("copy")
    try check(
      run(
        [
          "rsync", "-a", "--from0", Argument("--exclude-from=" + rules), Argument(root + "/"),
          Argument(destination),
        ]))
    let copied = try pathSet(under: Bytes(destination))
    #expect(
      copied == included, "rsync: \(difference(copied, included))", sourceLocation: sourceLocation)
    // run's view, as find walks it.
    let view = skipbackup("run", "-q", Argument(root), "--", "find", Argument(root), "-print0")
    try #require(view.status == 0, "\(view)", sourceLocation: sourceLocation)
    #expect(
      relative(view.nulSeparated, to: root) == included, "run: \(view)",
      sourceLocation: sourceLocation)
  }

  /// Each path below `root`, relative to it; `root` itself as "".
  private static func relative(_ paths: [Bytes], to root: String) -> Set<Bytes> {
    Set(
      paths.map { path in
        var relative = Array(path.dropFirst(root.utf8.count))
        if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
        return relative
      })
  }

  /// The call and errno a line ends with, as the tool wrote them.
  private static func call(_ result: ProcessResult) -> String {
    guard let open = result.errors.range(of: " (", options: .backwards) else { return "" }
    return String(result.errors[open.upperBound...].dropLast(2))
  }
}
