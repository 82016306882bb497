import Foundation
import Testing
import TestSupport

/// The recipes of `skipbackup export --help` and docs/backups.md, run with
/// the real tools: each backup must hold exactly the included set.
enum Recipe {
  static let rsync = """
    LIST=$(mktemp) &&
      (cd "$ROOT" && skipbackup list --included -0 . >"$LIST") &&
      sed -z -i '/^\\.$/d' "$LIST" &&
      rsync -a --from0 --files-from="$LIST" --no-implied-dirs "$ROOT/" "$DEST/"
    """
  static let tar = """
    LIST=$(mktemp) &&
      (cd "$ROOT" && skipbackup list --included -0 . >"$LIST") &&
      tar --create --file=backup.tar --null --no-recursion --verbatim-files-from \\
        -C "$ROOT" -T "$LIST"
    """
  static let restic = """
    ROOT=$(cd "$ROOT" && pwd) && EXCLUDE=$(mktemp) &&
      skipbackup export --for restic -o "$EXCLUDE" "$ROOT" &&
      restic backup --exclude-file="$EXCLUDE" "$ROOT"
    """
  static let borg = """
    EXCLUDE=$(mktemp) &&
      skipbackup export --for borg -o "$EXCLUDE" "$ROOT" &&
      borg create --exclude-from="$EXCLUDE" \\
        "::{hostname}-{now:%Y-%m-%dT%H:%M:%S.%f}" "$ROOT"
    """
  /// The rsync mirror, which also drops newly marked items.
  static let rsyncMirror = """
    EXCLUDE=$(mktemp) &&
      skipbackup export --for rsync -o "$EXCLUDE" "$ROOT" &&
      rsync -a --delete --delete-excluded --from0 --exclude-from="$EXCLUDE" \\
        "$ROOT/" "$DEST/"
    """
  /// tar's exclusion file, which cannot name a path with a newline: no
  /// longer a recipe, but what `export --for tar` writes is still checked.
  static let tarExclusionFile = """
    skipbackup export --for tar -o exclude.tar "$ROOT" &&
      tar --create --file=backup.tar --anchored --wildcards \\
        --exclude-from=exclude.tar -C "$ROOT" .
    """

  static let all = [rsync, tar, restic, borg, rsyncMirror]

  /// docs/backups.md's script for a tree with an unreadable directory: back
  /// up the rest, and still end non-zero.
  static let rsyncDespiteUnreadable = """
    LIST=$(mktemp)
    (cd "$ROOT" && skipbackup list --included -0 . >"$LIST")
    listed=$?
    sed -z -i '/^\\.$/d' "$LIST" &&
      rsync -a --from0 --files-from="$LIST" --no-implied-dirs "$ROOT/" "$DEST/" &&
      [ "$listed" -eq 0 ]
    """
}

enum Tool: String, CaseIterable, CustomTestStringConvertible {
  case rsync, tar, restic, borg, rsyncMirror

  var testDescription: String { rawValue }

  var recipe: String {
    switch self {
    case .rsync: Recipe.rsync
    case .rsyncMirror: Recipe.rsyncMirror
    case .tar: Recipe.tar
    case .restic: Recipe.restic
    case .borg: Recipe.borg
    }
  }
}

/// How the recipe names ROOT.
enum RootForm: String, CaseIterable, CustomTestStringConvertible {
  /// `/tmp/.../root`, from another directory.
  case absolute
  /// `root`, from the directory that holds it.
  case relative
  /// `.`, from ROOT itself.
  case dot

  var testDescription: String { rawValue }
}

/// A place for a backup: a working directory, the repositories and the
/// environment the tools read.
struct BackupPlace {
  let directory: TemporaryDirectory
  var work: String { directory.path }

  init() throws {
    directory = try TemporaryDirectory(prefix: "skipbackup-backup")
    // The recipes' mktemp files go here, and go with the place; anyone may
    // write here, as /tmp, for the recipe run as nobody.
    Make.directory(Bytes(temporary))
    precondition(chmod(temporary, 0o1777) == 0, "cannot open \(temporary) to all")
  }

  /// TMPDIR for the recipes, which leave their list in it.
  var temporary: String { work + "/tmp" }

  var environment: [String: String] {
    let tool = URL(fileURLWithPath: skipbackupPath).deletingLastPathComponent().path
    return [
      "PATH": tool + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
      "DEST": work + "/dest",
      "TMPDIR": temporary,
      "RESTIC_REPOSITORY": work + "/restic-repository",
      "RESTIC_PASSWORD": "skipbackup",
      "RESTIC_CACHE_DIR": work + "/restic-cache",
      "BORG_REPO": work + "/borg-repository",
      "BORG_PASSPHRASE": "",
      "BORG_BASE_DIR": work + "/borg-base",
      "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
      "BORG_RELOCATED_REPO_ACCESS_IS_OK": "yes",
    ]
  }

  /// Runs `command` with `sh -c` in `directory`, ROOT set to `root`.
  func shell(_ command: String, root: String, in directory: String) -> ProcessResult {
    var environment = environment
    environment["ROOT"] = root
    environment["PWD"] = directory
    return run(["sh", "-c", Argument(command)], directory: directory, environment: environment)
  }

  /// Runs a tool's own command, such as `restic init`.
  func tool(_ arguments: [Argument], in directory: String? = nil) -> ProcessResult {
    run(arguments, directory: directory, environment: environment)
  }

  /// Creates the repository `tool` writes to.
  func prepare(_ tool: Tool) throws {
    switch tool {
    case .restic: try check(EmptyRepository.restic.copy(to: work + "/restic-repository"))
    case .borg: try check(EmptyRepository.borg.copy(to: work + "/borg-repository"))
    case .rsync, .tar, .rsyncMirror: break
    }
  }

  /// The paths the backup holds, relative to ROOT, restored or copied back
  /// by the tool itself. `root` is ROOT as the recipe gave it, run in
  /// `directory`; `absoluteRoot` is its absolute path.
  func backedUp(
    by tool: Tool, root: String, absoluteRoot: String, ranIn directory: String
  ) throws -> Set<Bytes> {
    let restore = work + "/restore"
    Make.directory(Bytes(restore))
    // Where the tool puts ROOT's contents: borg keeps a relative ROOT
    // relative (without its leading slashes), and `.` as the top; the restic
    // recipe gives restic the absolute path, which restic keeps.
    let stored = root == "." ? "" : root.hasPrefix("/") ? absoluteRoot : "/" + root
    switch tool {
    case .rsync, .rsyncMirror:
      return try pathSet(under: Bytes(work + "/dest"))
    case .tar:
      try check(
        run([
          "tar", "--extract", "--file", Argument(directory + "/backup.tar"), "-C",
          Argument(restore),
        ]))
      return try pathSet(under: Bytes(restore))
    case .restic:
      try check(self.tool(["restic", "restore", "latest", "--target", Argument(restore)]))
      return try pathSet(under: Bytes(restore + absoluteRoot))
    case .borg:
      let archives = try check(self.tool(["borg", "list", "--short"]))
      let archive = try #require(archives.lines.last)
      try check(self.tool(["borg", "extract", Argument("::" + archive)], in: restore))
      return try pathSet(under: Bytes(restore + stored))
    }
  }
}

@Suite(.serialized, .onTestThreads(startingFirst: true)) struct BackupToolTests {
  /// Every tool with every form of ROOT but one: the tar recipe writes
  /// backup.tar into the working directory, which for `.` is ROOT itself,
  /// so that pair is not run (rather than run and reported as passed).
  static let recipeRuns: [(Tool, RootForm)] = Tool.allCases.flatMap { tool in
    RootForm.allCases.filter { tool != .tar || $0 != .dot }.map { (tool, $0) }
  }

  /// Runs `tool`'s recipe on a tricky tree, ROOT named as `form` says, and
  /// compares the backup with the included set.
  @Test(arguments: recipeRuns)
  func backupHoldsExactlyTheIncludedSet(tool: Tool, form: RootForm) throws {
    let tree = try TrickyTree()
    defer { withExtendedLifetime(tree) {} }
    let place = try BackupPlace()
    try place.prepare(tool)
    let (root, directory): (String, String) =
      switch form {
      case .absolute: (tree.root, place.work)
      case .relative: ("root", tree.directory.path)
      case .dot: (".", tree.root)
      }

    let before = try pathSet(under: Bytes(tree.root))
    let result = place.shell(tool.recipe, root: root, in: directory)
    #expect(result.status == 0, "\(result)")
    // The list or exclusion file is written outside ROOT, whatever ROOT is.
    let after = try pathSet(under: Bytes(tree.root))
    #expect(after == before, "the recipe wrote into ROOT: \(difference(after, before))")

    let expected = try tree.expectedIncluded()
    let listed = try listedIncluded(tree.root)
    let listedAsExpected = listed == expected
    #expect(listedAsExpected, "skipbackup list --included: \(difference(listed, expected))")
    // The fixture is not vacuous: marked items are on disk and out of the
    // set, and the items beside them are in it.
    #expect(tree.marked.count > 100)
    let markedButIncluded = tree.marked.filter(expected.contains).map(\.display)
    #expect(markedButIncluded.isEmpty, "\(markedButIncluded)")
    let missing = tree.included.filter { !expected.contains($0) }.map(\.display)
    #expect(missing.isEmpty, "\(missing)")

    let backup = try place.backedUp(
      by: tool, root: root, absoluteRoot: tree.root, ranIn: directory)
    let exact = backup == listed
    #expect(exact, "\(tool) backup: \(difference(backup, listed))")
  }

  /// tar cannot exclude a path with a newline: the export says so, fails,
  /// writes the other rules, and the recipe's && keeps tar from running.
  @Test func tarRefusesANewlineAndTheRecipeStops() throws {
    let tree = try TrickyTree()
    defer { withExtendedLifetime(tree) {} }
    let place = try BackupPlace()
    let result = place.shell(Recipe.tarExclusionFile, root: tree.root, in: place.work)
    #expect(result.status == 1)
    #expect(result.errors.contains("tar cannot exclude it: its path holds a newline"))
    #expect(result.errors.contains(tree.root + "/files/nl\\nname: excluded, but"))
    #expect(!FileManager.default.fileExists(atPath: place.work + "/backup.tar"))
    let rules = try String(contentsOfFile: place.work + "/exclude.tar", encoding: .isoLatin1)
    #expect(rules.contains("./files/st\\*r\n"))
    #expect(!rules.contains("nl\nname"))
  }

  /// The borg recipe names each archive to the microsecond: run twice in
  /// the same second, it makes two archives (`::{now}` failed the second time).
  @Test func borgRecipeRunsTwiceInOneSecond() throws {
    let tree = try TrickyTree()
    defer { withExtendedLifetime(tree) {} }
    let place = try BackupPlace()
    try place.prepare(.borg)
    let twice = place.shell(Recipe.borg + " &&\n" + Recipe.borg, root: tree.root, in: place.work)
    #expect(twice.status == 0, "\(twice)")
    let archives = try check(place.tool(["borg", "list", "--short"]))
    #expect(archives.lines.count == 2, "\(archives)")
  }

  /// A mirror made by the include-list recipe keeps what was marked after
  /// it was copied: rsync's --delete needs the recursion that --files-from
  /// turns off. The mirror recipe drops it (--delete-excluded).
  @Test func onlyTheMirrorRecipeDropsANewlyMarkedItem() throws {
    let tree = try TrickyTree()
    defer { withExtendedLifetime(tree) {} }
    for recipe in [Recipe.rsync, Recipe.rsyncMirror] {
      let place = try BackupPlace()
      try check(place.shell(recipe, root: tree.root, in: place.work))
      #expect(FileManager.default.fileExists(atPath: place.work + "/dest/deep/a b/kept"))
      try check(skipbackup("mark", Argument(tree.root + "/deep/a b/kept")))
      try check(place.shell(recipe, root: tree.root, in: place.work))
      let kept = FileManager.default.fileExists(atPath: place.work + "/dest/deep/a b/kept")
      #expect(kept == (recipe == Recipe.rsync), "\(recipe)")
      try check(skipbackup("clear", Argument(tree.root + "/deep/a b/kept")))
    }
  }

  /// docs/backups.md's script for an unreadable directory, run as nobody
  /// (root reads every directory): the listing names the directory and
  /// fails, rsync still copies everything else that is included, and the
  /// script's status is the listing's failure.
  @Test func anUnreadableDirectoryLeavesTheRestBackedUpAndTheStatusNonZero() throws {
    let place = try BackupPlace()
    let root = place.work + "/root"
    for directory in [root, root + "/open", root + "/locked"] { Make.directory(Bytes(directory)) }
    for file in ["kept.txt", "marked.txt", "open/inner.txt", "locked/secret"] {
      Make.file(Bytes(root + "/" + file))
    }
    try check(skipbackup("mark", Argument(root + "/marked.txt")))
    Make.directory(Bytes(place.work + "/dest"))
    // nobody may enter every directory but `locked`, and write to DEST.
    #expect(chmod(place.work, 0o755) == 0 && chmod(place.work + "/dest", 0o777) == 0)
    #expect(chmod(root + "/locked", 0o700) == 0)
    var environment = place.environment
    environment["ROOT"] = root
    let result = run(
      ["sh", "-c", Argument(Recipe.rsyncDespiteUnreadable)], asNobody: true,
      directory: place.work, environment: environment)
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.contains("locked"), "\(result)")
    let copied = try pathSet(under: Bytes(place.work + "/dest"))
    // pathSet names DEST itself as the empty path.
    let expected = Set(["", "kept.txt", "open", "open/inner.txt", "locked"].map { Bytes($0) })
    #expect(copied == expected, "\(difference(copied, expected))")
  }

  /// The recipes the tests run are the ones `export --help` shows.
  @Test func helpShowsEachRecipe() {
    let help = skipbackup("export", "--help")
    #expect(help.status == 0)
    for recipe in Recipe.all {
      #expect(help.output.contains(recipe), "export --help lacks:\n\(recipe)")
    }
  }

  /// And the ones docs/backups.md shows.
  @Test func docsShowEachRecipe() throws {
    let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("docs/backups.md")
    let text = try String(contentsOf: docs, encoding: .utf8)
    for recipe in Recipe.all + [Recipe.rsyncDespiteUnreadable] {
      #expect(text.contains(recipe), "docs/backups.md lacks:\n\(recipe)")
    }
  }
}
