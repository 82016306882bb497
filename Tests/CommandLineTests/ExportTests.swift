import Foundation
import Testing
import TestSupport

/// What `skipbackup export` writes, byte for byte, and when it refuses.
@Suite(.onTestThreads) struct ExportTests {
  /// A root with one marked file for each name, and an unmarked one.
  private func tree(_ names: [Bytes]) throws -> (TemporaryDirectory, String) {
    let tree = try TemporaryDirectory()
    let root = tree.path + "/root"
    Make.directory(Bytes(root))
    Make.directory(Bytes(root + "/d"))
    Make.file(Bytes(root + "/d/kept"))
    for name in names {
      Make.file(Bytes(root + "/d/") + name)
      setfattr(Bytes(root + "/d/") + name, Names.legacy, hex: "01")
    }
    return (tree, root)
  }

  /// The rules of `export --for tool ROOT`, sorted.
  private func rules(_ tool: String, _ root: String, separator: UInt8 = 10) throws -> [Bytes] {
    let result = try check(skipbackup("export", "--for", Argument(tool), Argument(root)))
    #expect(result.standardOutput.last == separator)
    return result.standardOutput.split(separator: separator).map(Array.init).sorted {
      $0.lexicographicallyPrecedes($1)
    }
  }

  private static let names: [Bytes] = [
    Bytes("st*r"), Bytes("trail "), Bytes("$HOME"), Bytes("nl\nx"), Bytes("back\\slash"),
    Bytes("bad") + [0xFF],
  ]

  @Test func rsyncRules() throws {
    let (tree, root) = try tree(Self.names)
    defer { withExtendedLifetime(tree) {} }
    let expected: [Bytes] = [
      Bytes("/d/$HOME"), Bytes("/d/back\\slash"), Bytes("/d/bad") + [0xFF], Bytes("/d/nl\nx"),
      Bytes("/d/st\\*r"), Bytes("/d/trail "),
    ]
    #expect(try rules("rsync", root, separator: 0) == expected)
  }

  @Test func tarRules() throws {
    let (tree, root) = try tree(Self.names.filter { !$0.contains(10) })
    defer { withExtendedLifetime(tree) {} }
    let expected: [Bytes] = [
      Bytes("./d/$HOME"), Bytes("./d/back\\\\slash"), Bytes("./d/bad") + [0xFF],
      Bytes("./d/st\\*r"), Bytes("./d/trail[ ]"),
    ]
    #expect(try rules("tar", root) == expected)
  }

  @Test func resticRules() throws {
    let (tree, root) = try tree(Self.names)
    defer { withExtendedLifetime(tree) {} }
    let newline = Bytes("[^") + [1, 0x2D, 9, 11, 0x2D] + Bytes("\u{10FFFF}]")
    let expected: [Bytes] = [
      Bytes(root + "/d/$$HOME"), Bytes(root + "/d/back\\\\slash"), Bytes(root + "/d/bad") + [0xFF],
      Bytes(root + "/d/nl") + newline + Bytes("x"), Bytes(root + "/d/st\\*r"),
      Bytes(root + "/d/trail[ ]"),
    ]
    #expect(try rules("restic", root) == expected)
  }

  @Test func borgRules() throws {
    let (tree, root) = try tree(Self.names)
    defer { withExtendedLifetime(tree) {} }
    let stored = String(root.dropFirst())
    let expected: [Bytes] = [
      Bytes("pf:" + stored + "/d/$HOME"), Bytes("pf:" + stored + "/d/back\\slash"),
      Bytes("pf:" + stored + "/d/st*r"),
      Bytes("re:^" + regex(stored) + "/d/bad\\udcff\\Z"),
      Bytes("re:^" + regex(stored) + "/d/nl\\nx\\Z"),
      Bytes("re:^" + regex(stored) + "/d/trail\\x20\\Z"),
    ].sorted { $0.lexicographicallyPrecedes($1) }
    #expect(try rules("borg", root) == expected)
  }

  /// The temporary directory's path as the borg writer escapes it.
  private func regex(_ path: String) -> String {
    path.map { $0.isLetter || $0.isNumber || $0 == "/" || $0 == "_" ? "\($0)" : "\\\($0)" }
      .joined()
  }

  @Test(arguments: ["rsync", "tar", "restic", "borg"])
  func anExcludedRootWritesNothing(tool: String) throws {
    let (tree, root) = try tree([])
    defer { withExtendedLifetime(tree) {} }
    try check(skipbackup("mark", Argument(root + "/d")))
    let output = tree.path + "/exclude"
    let marked = skipbackup(
      "export", "--for", Argument(tool), "-o", Argument(output), Argument(root + "/d"))
    #expect(marked.status == 1)
    #expect(
      marked.errors
        == "skipbackup: \(root)/d: excluded from backups as a whole (marked: resource), so no "
        + "\(tool) exclusion file is written: a backup of it should hold nothing\n")
    #expect(!FileManager.default.fileExists(atPath: output))

    let below = skipbackup(
      "export", "--for", Argument(tool), "-o", Argument(output), Argument(root + "/d/kept"))
    #expect(below.status == 1)
    #expect(below.errors.contains("(below the marked directory \(root)/d)"), "\(below)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// rsync and tar follow a ROOT that is a symbolic link (a trailing slash,
  /// a chdir); restic and borg back up the link itself.
  @Test func aSymbolicLinkRoot() throws {
    let (tree, _) = try tree([Bytes("marked")])
    defer { withExtendedLifetime(tree) {} }
    let link = tree.path + "/link"
    Make.symbolicLink("root", at: Bytes(link))
    #expect(
      try check(skipbackup("export", "--for", "rsync", Argument(link))).output == "/d/marked\0")
    #expect(
      try check(skipbackup("export", "--for", "tar", Argument(link))).output == "./d/marked\n")
    #expect(try check(skipbackup("export", "--for", "restic", Argument(link))).output == "")
    #expect(try check(skipbackup("export", "--for", "borg", Argument(link))).output == "")
  }

  /// nodump and cachedir marks can be exported too, by name.
  @Test func nodumpAndCachedirByName() throws {
    let (tree, root) = try tree([])
    defer { withExtendedLifetime(tree) {} }
    Make.file(Bytes(root + "/flagged"))
    try check(run(["chattr", "+d", Argument(root + "/flagged")]))
    try check(skipbackup("mark", "-m", "cachedir", Argument(root + "/d")))
    let exported = try check(
      skipbackup("export", "--for", "tar", "-m", "nodump,cachedir", Argument(root)))
    #expect(Set(exported.lines) == ["./flagged", "./d"])
    #expect(try check(skipbackup("export", "--for", "tar", Argument(root))).output == "")
  }

  /// With -x, a filesystem mounted below ROOT is not entered, as the tool's
  /// own one-file-system option does not enter it.
  @Test(.enabled(if: canMount)) func oneFileSystem() throws {
    let (tree, root) = try tree([Bytes("marked")])
    defer { withExtendedLifetime(tree) {} }
    let mountPoint = tree.directory("root/mounted")
    try check(run(["mount", "-t", "tmpfs", "-o", "size=64k", "none", Argument(mountPoint)]))
    defer { _ = run(["umount", Argument(mountPoint)]) }
    Make.file(Bytes(mountPoint + "/inside"))
    setfattr(Bytes(mountPoint + "/inside"), Names.xdg, hex: hex(Array("false".utf8)))

    let everywhere = try check(skipbackup("export", "--for", "tar", Argument(root)))
    #expect(Set(everywhere.lines) == ["./d/marked", "./mounted/inside"])
    let here = try check(skipbackup("export", "--for", "tar", "-x", Argument(root)))
    #expect(here.lines == ["./d/marked"])

    let place = try BackupPlace()
    defer { withExtendedLifetime(place) {} }
    try check(
      place.shell(
        "skipbackup export --for rsync -x -o exclude.rsync \"$ROOT\" && "
          + "rsync -a -x --from0 --exclude-from=exclude.rsync \"$ROOT/\" \"$DEST/\"",
        root: root, in: place.work))
    let copied = try pathSet(under: Bytes(place.work + "/dest"))
    let included = try check(skipbackup("list", "--included", "-x", "-0", Argument(root)))
    let listed = Set(
      included.nulSeparated.map { Array($0.dropFirst(root.utf8.count).drop { $0 == 0x2F }) })
    #expect(copied == listed, "\(difference(copied, listed))")
    #expect(copied.contains(Bytes("mounted")) && !copied.contains(Bytes("mounted/inside")))
  }

  /// rsync drops a filter rule of 4,096 bytes or more: measured here, and a
  /// rule that long is refused by the export rather than written.
  @Test func rsyncRulesHaveALimit() throws {
    let (tree, root) = try tree([])
    defer { withExtendedLifetime(tree) {} }
    for (length, dropped) in [(4095, false), (4096, true)] {
      let rules = tree.path + "/rules"
      Make.file(Bytes(rules), "/" + String(repeating: "a", count: length - 1))
      let result = try check(
        run([
          "rsync", "-a", "--from0", Argument("--exclude-from=" + rules), Argument(root + "/"),
          Argument(tree.path + "/copy/"),
        ]))
      #expect(result.errors.contains("discarding over-long filter") == dropped, "\(result)")
    }

    // A marked file 21 directories of 200 bytes down: a 4,228-byte rule.
    try Make.deepTree(below: root)
    defer { Make.removeDeepTree(below: root) }
    let exported = skipbackup("export", "--for", "rsync", Argument(root))
    #expect(exported.status == 1)
    #expect(exported.standardOutput.isEmpty)
    #expect(
      exported.errors.contains(
        "rsync cannot exclude it: its rule takes 4228 bytes, and rsync drops filter rules "
          + "longer than 4095 bytes"), "\(exported)")
    // The other tools name it.
    for tool in ["tar", "restic", "borg"] {
      let rules = try check(skipbackup("export", "--for", Argument(tool), Argument(root)))
      #expect(rules.lines.count == 1, "\(tool)")
    }
  }

  /// restic takes the working directory from $PWD when $PWD names it, as Go's
  /// os.Getwd does: the export must too, or its absolute paths differ.
  @Test func resticRelativeRootThroughASymbolicLink() throws {
    let tree = try TrickyTree()
    defer { withExtendedLifetime(tree) {} }
    let place = try BackupPlace()
    try place.prepare(.restic)
    let link = place.work + "/via-link"
    Make.symbolicLink(tree.directory.path, at: Bytes(link))
    // In the directory that holds ROOT, reached as .../via-link.
    let result = place.shell(Recipe.restic, root: "root", in: link)
    #expect(result.status == 0, "\(result)")
    // The export alone, as the recipe's first step sees it.
    var environment = place.environment
    environment["PWD"] = link
    let exported = try check(
      run(
        [Argument(skipbackupPath), "export", "--for", "restic", "root"], directory: link,
        environment: environment))
    #expect(exported.output.hasPrefix(link + "/root/"), "\(exported)")
    // The recipe gives restic `cd root && pwd`: the path through the link.
    let backup = try place.backedUp(
      by: .restic, root: "root", absoluteRoot: link + "/root", ranIn: link)
    let listed = try listedIncluded(tree.root)
    let exact = backup == listed
    #expect(exact, "restic: \(difference(backup, listed))")
  }

  /// In a sticky directory others may write (as /tmp), root's
  /// `export -o` neither follows another user's link (to root's 0600 file,
  /// or to a device) nor writes their file, whatever fs.protected_symlinks
  /// and fs.protected_regular say (0 in many containers); its own output
  /// there is root's and no one else may write it.
  @Test func anotherUsersLinkOrFileInAStickyDirectoryIsRefused() throws {
    let (tree, root) = try tree([Bytes("marked")])
    defer { withExtendedLifetime(tree) {} }
    chmod(tree.path, 0o755)
    let shared = tree.path + "/shared"
    Make.directory(Bytes(shared))
    chmod(shared, 0o1777)
    let secret = tree.path + "/secret"
    #expect(FileManager.default.createFile(atPath: secret, contents: Data("root only\n".utf8)))
    chmod(secret, 0o600)
    let planted = """
      ln -s \(secret) \(shared)/link && ln -s /dev/null \(shared)/device \
        && umask 0 && echo theirs > \(shared)/theirs
      """
    try check(run(["sh", "-c", Argument(planted)], asNobody: true))

    for (name, what) in [
      ("link", "a symbolic link"), ("device", "a symbolic link"), ("theirs", "a regular file"),
    ] {
      let result = skipbackup(
        "export", "--for", "rsync", "-o", Argument(shared + "/" + name), Argument(root))
      #expect(result.status == 1, "\(name): \(result)")
      #expect(
        result.errors.hasPrefix(
          "skipbackup: \(shared)/\(name): \(what) that another user owns, in a sticky directory"),
        "\(result)")
    }
    #expect(try String(contentsOfFile: secret, encoding: .utf8) == "root only\n")
    #expect(try String(contentsOfFile: shared + "/theirs", encoding: .utf8) == "theirs\n")
    var status = stat()
    #expect(lstat(shared + "/theirs", &status) == 0 && status.st_uid != 0)

    // Root's own output there is written; root's own link there is not
    // followed either: what a link at the name leads to is never written.
    let own = shared + "/own"
    try check(skipbackup("export", "--for", "rsync", "-o", Argument(own), Argument(root)))
    #expect(lstat(own, &status) == 0 && status.st_uid == 0 && status.st_mode & 0o022 == 0)
    let target = tree.path + "/target"
    #expect(FileManager.default.createFile(atPath: target, contents: Data()))
    Make.symbolicLink(target, at: Bytes(shared + "/mine"))
    let mine = skipbackup(
      "export", "--for", "rsync", "-o", Argument(shared + "/mine"), Argument(root))
    #expect(mine.status == 1, "\(mine)")
    #expect(
      mine.errors
        == "skipbackup: \(shared)/mine: only a regular file can be copied or saved over, and "
        + "this is a symbolic link\n", "\(mine)")
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "")
    #expect(lstat(shared + "/mine", &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
  }
}
