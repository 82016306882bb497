import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `skipbackup run ROOT -- COMMAND`: the real tools, run plainly
/// through the view, back up exactly what `list --included` lists, with the
/// real metadata; the view is read-only, private, and leaves nothing behind.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct RunTests {
  /// Each tool's plain backup of ROOT, with no exclusion at all.
  enum Plain: String, CaseIterable, CustomTestStringConvertible {
    case restic, borg, tar, rsync
    var testDescription: String { rawValue }

    var command: String {
      switch self {
      case .restic: #"restic backup "$ROOT""#
      case .borg: #"borg create ::viewed "$ROOT""#
      case .tar: #"tar --create --file=backup.tar -C "$ROOT" ."#
      case .rsync: #"rsync -aXAH "$ROOT/" "$DEST/""#
      }
    }

    var tool: Tool {
      switch self {
      case .restic: .restic
      case .borg: .borg
      case .tar: .tar
      case .rsync: .rsync
      }
    }
  }

  @Test(arguments: Plain.allCases)
  func aPlainBackupThroughTheViewHoldsExactlyTheIncludedSet(tool: Plain) throws {
    let tree = try TrickyTree()
    let place = try BackupPlace()
    try place.prepare(tool.tool)
    let before = try pathSet(under: Bytes(tree.root))
    let result = place.shell(
      #"skipbackup run -q "$ROOT" -- "# + tool.command, root: tree.root, in: place.work)
    try #require(result.status == 0, "\(result)")
    let listed = try listedIncluded(tree.root)
    #expect(listed.count > 200 && listed.count < before.count - 100)
    let backup = try place.backedUp(
      by: tool.tool, root: tree.root, absoluteRoot: tree.root, ranIn: place.work)
    let exact = backup == listed
    #expect(exact, "\(tool) through the view: \(difference(backup, listed))")
    #expect(try pathSet(under: Bytes(tree.root)) == before, "the tree changed")
    #expect(!mountInfo().contains(tree.root), "a mount is left in the caller's namespace")
  }

  /// duplicity (Deja Dup's engine) backs up and restores exactly the
  /// included set through the view.
  @Test func duplicityThroughTheViewHoldsExactlyTheIncludedSet() throws {
    let tree = try TrickyTree()
    let place = try BackupPlace()
    let backup = place.shell(
      #"skipbackup run -q "$ROOT" -- duplicity --no-encryption --archive-dir "$PWD/archive" full "$ROOT" "file://$PWD/duplicity""#,
      root: tree.root, in: place.work)
    try #require(backup.status == 0, "\(backup)")
    let restore = place.shell(
      #"duplicity --no-encryption --archive-dir "$PWD/archive" restore "file://$PWD/duplicity" "$PWD/restore""#,
      root: tree.root, in: place.work)
    try #require(restore.status == 0, "\(restore)")
    let restored = try pathSet(under: Bytes(place.work + "/restore"))
    let listed = try listedIncluded(tree.root)
    #expect(restored == listed, "duplicity: \(difference(restored, listed))")
  }

  /// rclone copies regular files only (no links, FIFOs or empty
  /// directories by default): through the view, exactly the included ones.
  @Test func rcloneThroughTheViewCopiesExactlyTheIncludedFiles() throws {
    let tree = try TrickyTree()
    let place = try BackupPlace()
    let copy = place.shell(
      #"skipbackup run -q "$ROOT" -- rclone copy --config /dev/null "$ROOT" "$DEST""#,
      root: tree.root, in: place.work)
    try #require(copy.status == 0, "\(copy)")
    let copied = try check(
      run(["find", Argument(place.work + "/dest"), "-type", "f", "-printf", "%P\\0"]))
    let files = try check(run(["find", Argument(tree.root), "-type", "f", "-printf", "%P\\0"]))
    let listed = try listedIncluded(tree.root)
    let expected = Set(files.nulSeparated).intersection(listed)
    let got = Set(copied.nulSeparated)
    #expect(got == expected, "rclone: \(difference(got, expected))")
    #expect(expected.count > 100)
  }

  /// borg 2, which reads xdg and nodump marks itself, reads every mark
  /// through the view.
  @Test func borgTwoThroughTheViewHoldsExactlyTheIncludedSet() throws {
    let borg = try borg2Path()
    let tree = try TrickyTree()
    let place = try BackupPlace()
    let environment = [
      "BORG_REPO": place.work + "/borg2", "BORG_PASSPHRASE": "",
      "BORG_BASE_DIR": place.work + "/borg2-base",
    ]
    try check(run([Argument(borg), "repo-create", "-e", "none"], environment: environment))
    try check(
      run(
        [
          Argument(skipbackupPath), "run", "-q", Argument(tree.root), "--", Argument(borg),
          "create", "viewed", Argument(tree.root),
        ], environment: environment))
    let restore = place.work + "/restore"
    Make.directory(Bytes(restore))
    try check(
      run([Argument(borg), "extract", "viewed"], directory: restore, environment: environment))
    let restored = try pathSet(under: Bytes(restore + tree.root))
    let listed = try listedIncluded(tree.root)
    #expect(restored == listed, "borg 2: \(difference(restored, listed))")
  }

  /// Every included item shows, through the view, the real item's type,
  /// mode, owner, size, mtime, link count, link target and extended
  /// attributes (ACLs among them), merged directories too.
  @Test func theViewShowsTheRealMetadata() throws {
    let tree = try TrickyTree()
    // "deep" and ROOT are merged directories (they hold whiteouts); give
    // them an owner, a mode, an ACL and attributes of their own.
    for directory in [tree.root, tree.root + "/deep"] {
      try check(run(["chown", "1234:5678", Argument(directory)]))
      try check(run(["chmod", "2750", Argument(directory)]))
      try check(run(["setfacl", "-m", "u:nobody:rx,d:u:nobody:r", Argument(directory)]))
      setfattr(directory, "user.note", hex: "6869")
      try check(run(["touch", "-d", "2001-02-03 04:05:06.789", Argument(directory)]))
    }
    try check(run(["ln", Argument(tree.root + "/files/a"), Argument(tree.root + "/files/hard")]))
    try check(run(["touch", "-h", "-d", "2002-01-01", Argument(tree.root + "/files/a")]))
    let real = try metadata(tree.root, through: nil)
    let viewed = try metadata(tree.root, through: tree.root)
    let listed = try listedIncluded(tree.root)
    let expected = real.filter { listed.contains(bytes(fromHex: $0.key)) }
    #expect(Set(viewed.keys) == Set(expected.keys))
    var differences: [String] = []
    for (path, item) in expected where viewed[path] != item {
      let name = bytes(fromHex: path).display
      differences.append("\(name): real \(item), view \(viewed[path] ?? "none")")
    }
    #expect(differences.isEmpty, "\(differences.sorted().prefix(10))")
    #expect(expected.count > 200)
    let deep = hex(Bytes("deep"))
    #expect(expected[deep]?.contains("user.note") == true)
    #expect(expected[deep]?.contains("system.posix_acl_default") == true)
  }

  /// The same tool's listing of a backup made with the view and one made
  /// without it: every item of the viewed backup is recorded as the
  /// unviewed backup records it (restic ls --json, borg list --json-lines,
  /// tar -tv --xattrs), but for what a merged directory cannot keep (its
  /// ctime; restic's and borg's inode are not listed), and the viewed
  /// backup holds exactly the included items.
  @Test func eachToolRecordsTheSameItemsWithAndWithoutTheView() throws {
    let tree = try TrickyTree()
    setfattr(tree.root + "/deep", "user.note", hex: "6869")
    try check(run(["setfacl", "-m", "u:nobody:rx", Argument(tree.root + "/deep")]))
    let place = try BackupPlace()
    try place.prepare(.restic)
    try place.prepare(.borg)
    let script = #"""
      set -e
      restic backup -q --tag real "$ROOT"
      skipbackup run -q "$ROOT" -- restic backup -q --tag view "$ROOT"
      restic ls --json --tag real latest >restic-real
      restic ls --json --tag view latest >restic-view
      borg create ::real "$ROOT" && skipbackup run -q "$ROOT" -- borg create ::view "$ROOT"
      borg list --json-lines ::real >borg-real && borg list --json-lines ::view >borg-view
      tar -cf real.tar --xattrs --acls -C "$ROOT" .
      skipbackup run -q "$ROOT" -- tar -cf view.tar --xattrs --acls -C "$ROOT" .
      tar -tv --xattrs --full-time -f real.tar >tar-real && tar -tv --xattrs --full-time -f view.tar >tar-view
      """#
    try check(place.shell(script, root: tree.root, in: place.work))
    let compare = #"""
      import json, sys, collections
      kind, real, view, root = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
      def entries(name):
          items = collections.defaultdict(list)
          for line in open(name, encoding="utf-8", errors="surrogateescape"):
              if kind == "tar":
                  items[line.rstrip(chr(10))].append(line)
                  continue
              node = json.loads(line)
              if node.get("struct_type") == "snapshot":
                  continue
              node.pop("atime", None)
              if node.get("type") == "dir":
                  node.pop("ctime", None)
              items[node["path"]].append(json.dumps(node, sort_keys=True))
          return items
      real, view = entries(real), entries(view)
      count = sum(len(v) for v in view.values())
      # Each viewed record is among the real ones of its path: paths that are
      # not UTF-8 can print alike (JSON), and the real backup holds more.
      # restic records ROOT's parents, outside the view, as they are now.
      bad = [p for p in view if p.startswith(root) and
             collections.Counter(view[p]) - collections.Counter(real.get(p, []))]
      print(count, len(bad), bad[:5])
      """#
    let listed = try listedIncluded(tree.root)
    // restic records each directory above ROOT (not /) as well.
    let parents = tree.root.split(separator: "/").count - 1
    for (kind, expected) in [
      ("restic", listed.count + parents), ("borg", listed.count), ("tar", 0),
    ] {
      let result = try check(
        run(
          [
            python3, "-c", Argument(compare), Argument(kind),
            Argument(place.work + "/\(kind)-real"), Argument(place.work + "/\(kind)-view"),
            Argument(
              kind == "restic" ? tree.root : kind == "borg" ? String(tree.root.dropFirst()) : ""),
          ]))
      let fields = result.output.split(separator: " ", maxSplits: 2)
      // tar lists "." and the entries.
      if kind != "tar" { #expect(Int(fields[0]) == expected, "\(kind): \(result.output)") }
      #expect(fields[1] == "0", "\(kind): items recorded differently: \(result.output)")
    }
  }

  /// rsync -aiXAHn between the real tree and the view's copy reports no
  /// difference on any included item.
  @Test func rsyncFindsNoDifferenceBetweenTheViewAndTheRealItems() throws {
    let tree = try TrickyTree()
    setfattr(tree.root + "/deep", "user.note", hex: "6869")
    let place = try BackupPlace()
    let copy = place.shell(
      #"skipbackup run -q "$ROOT" -- rsync -aXAH "$ROOT/" "$DEST/""#, root: tree.root,
      in: place.work)
    try #require(copy.status == 0, "\(copy)")
    // Compare the copy against the real tree, item by item (--existing:
    // the excluded items are not in the copy, and are not compared).
    let compare = try check(
      run([
        "rsync", "-aiXAHn", "--existing", "--out-format=%i %n", Argument(tree.root + "/"),
        Argument(place.work + "/dest/"),
      ]))
    let changed = compare.lines.filter { !$0.isEmpty && !$0.hasPrefix(".d  ") }
    #expect(changed.isEmpty, "\(changed.prefix(10))")
  }
}

/// `skipbackup run`'s own promises around COMMAND: its exit status,
/// arguments and environment, the read-only view, what a kill leaves, an
/// ordinary user's view and refusals. A suite of its own so that the run
/// tests, serialized, are two chains rather than one twice as long.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct RunCommandTests {
  @Test func theExitStatusIsTheCommands() throws {
    let tree = try TrickyTree()
    // The test runner may start children with signals ignored or blocked,
    // which COMMAND inherits as given: Python restores them before killing itself.
    let killSelf = """
      import os, signal, sys
      number = int(sys.argv[1])
      if number != signal.SIGKILL:
          signal.signal(number, signal.SIG_DFL)
      signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
      os.kill(os.getpid(), number)
      """
    for (command, status) in [("exit 0", Int32(0)), ("exit 7", 7)] {
      let result = skipbackup("run", "-q", Argument(tree.root), "--", "sh", "-c", Argument(command))
      #expect(result.status == status, "\(command): \(result)")
    }
    for signal in [SIGTERM, SIGKILL, SIGINT, SIGHUP] {
      let result = skipbackup(
        "run", "-q", Argument(tree.root), "--", python3, "-c", Argument(killSelf),
        Argument("\(signal)"))
      #expect(result.status == 128 + signal, "signal \(signal): \(result)")
    }
    let missing = skipbackup("run", "-q", Argument(tree.root), "--", "no-such-program-here")
    #expect(missing.status == 127, "\(missing)")
    #expect(missing.errors.contains("no-such-program-here"), "\(missing)")
  }

  /// Arguments, environment, working directory and standard streams reach
  /// COMMAND as given; a working directory inside ROOT is the view's.
  @Test func theCommandGetsItsArgumentsEnvironmentAndDirectory() throws {
    let tree = try TrickyTree()
    let odd: [UInt8] = Bytes("x") + [0xFF] + Bytes(" y/")
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", Argument(tree.root), "--", "sh", "-c",
        #"printf '%s\0' "$@" "$PWD" "$RUN_TEST"; ls -A; cat"#, "sh", "--", Argument(bytes: odd),
      ], input: Bytes("in"), directory: tree.root + "/hollow", environment: ["RUN_TEST": "v"])
    try #require(result.status == 0, "\(result)")
    let fields = result.standardOutput.split(separator: 0, omittingEmptySubsequences: false)
    #expect(Array(fields[0]) == Bytes("--"))
    #expect(Array(fields[1]) == odd)
    #expect(Array(fields[2]) == Bytes(tree.root + "/hollow"))
    #expect(Array(fields[3]) == Bytes("v"))
    // hollow's only entry is marked: ls in the view lists nothing; stdin reaches cat.
    #expect(Array(fields[4]) == Bytes("in"), "\(result)")
  }

  /// The view is read-only; what is outside every ROOT is writable as before.
  @Test func theViewIsReadOnlyAndTheRestIsNot() throws {
    let tree = try TrickyTree()
    let outside = tree.directory.path + "/outside"
    let result = skipbackup(
      "run", "-q", Argument(tree.root), "--", "sh", "-c",
      Argument(
        #"touch "$1/new" 2>&1; rm -f "$1/files/a" 2>&1; touch "$2" && cat "$1/files/st*r""#),
      "sh", Argument(tree.root), Argument(outside))
    #expect(result.status != 0 || result.output.contains("Read-only"), "\(result)")
    #expect(result.output.contains("Read-only file system"), "\(result)")
    #expect(result.errors.contains("No such file"), "a marked file opened by name: \(result)")
    #expect(access(outside, F_OK) == 0)
    #expect(access(tree.root + "/files/a", F_OK) == 0)
    #expect(access(tree.root + "/new", F_OK) != 0)
  }

  /// SIGKILL to COMMAND, or to skipbackup while it builds the view, leaves
  /// no mount in the caller's namespace and nothing on disk.
  @Test func aKillLeavesNothingBehind() throws {
    let tree = try TrickyTree()
    let before = try pathSet(under: Bytes(tree.directory.path))
    // The mounts at or below the tree: other tests mount btrfs images of
    // their own meanwhile, in this process's namespace.
    let mountsBefore = mountPoints(under: tree.directory.path)
    #expect(mountsBefore.isEmpty)
    for attempt in 0..<12 {
      var pid: pid_t = 0
      let words: [String] = [skipbackupPath, "run", "-q", tree.root, "--", "sleep", "30"]
      let argv = words.map { strdup($0) }
      defer { for argument in argv { free(argument) } }
      var pointers = argv + [nil]
      try #require(posix_spawn(&pid, skipbackupPath, nil, nil, &pointers, environ) == 0)
      // From 0 (building the view) to 66 ms (COMMAND running).
      usleep(useconds_t(attempt * 6_000))
      kill(pid, SIGKILL)
      var status: Int32 = 0
      waitpid(pid, &status, 0)
      #expect(status & 0x7F == SIGKILL)
    }
    #expect(mountPoints(under: tree.directory.path) == mountsBefore)
    #expect(try pathSet(under: Bytes(tree.directory.path)) == before)
  }

  /// A marked file 21 directories of 200 bytes down, its path past
  /// PATH_MAX: the view hides it and shows its sibling, as `list` lists them.
  @Test func aMarkDeeperThanPathMaxIsHidden() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    try Make.deepTree(below: root)
    defer { Make.removeDeepTree(below: root) }
    let listed = try check(skipbackup("list", Argument(root)))
    #expect(listed.lines.count == 1 && listed.lines.first?.hasSuffix("/marked") == true)
    let look = """
      import os, sys
      os.chdir(sys.argv[1])
      for _ in range(21):
          os.chdir(sys.argv[2])
      print(" ".join(sorted(os.listdir("."))))
      """
    let viewed = skipbackup(
      "run", "-q", Argument(root), "--", python3, "-c", Argument(look), Argument(root),
      Argument(Make.deepComponent))
    #expect(viewed.status == 0, "\(viewed)")
    #expect(viewed.output == "kept\n", "\(viewed)")
  }

  /// As an ordinary user (nobody) on a tree it owns: the view lists exactly
  /// the included set, with the real owner, and the view is read-only.
  @Test func anOrdinaryUserGetsTheViewOfTheirOwnTree() throws {
    let tree = try TrickyTree()
    try check(run(["chown", "-R", "nobody:nogroup", Argument(tree.directory.path)]))
    let listed = try check(
      skipbackup("list", "--included", "-0", Argument(tree.root), asNobody: true))
    let viewed = skipbackup(
      "run", "-q", Argument(tree.root), "--", "find", Argument(tree.root), "-print0",
      asNobody: true)
    try #require(viewed.status == 0, "\(viewed)")
    #expect(Set(viewed.nulSeparated) == Set(listed.nulSeparated))
    #expect(listed.nulSeparated.count > 200)
    let owner = skipbackup(
      "run", "-q", Argument(tree.root), "--", "sh", "-c",
      Argument(#"stat -c %U:%G "$1/deep" "$1/files/a"; touch "$1/x" 2>&1; id -u"#), "sh",
      Argument(tree.root), asNobody: true)
    #expect(owner.lines.prefix(2) == ["nobody:nogroup", "nobody:nogroup"], "\(owner)")
    #expect(owner.output.contains("Read-only file system"), "\(owner)")
    #expect(owner.lines.dropFirst(3).first == "65534", "\(owner)")
  }

  /// As an ordinary user, a directory that holds a marked item is merged
  /// with the layer, which can carry only the user's own owner and group:
  /// another owner's, or another group's, is refused by name before
  /// COMMAND runs; the same directory with no mark in it is shown, with
  /// the overflow ids. The user is uid 4321, not nobody: nobody's ids are
  /// the overflow ids themselves, so for nobody every owner it cannot map
  /// shows as its own, merged directories too.
  @Test func anOrdinaryUserIsRefusedAMergedDirectoryOfAnotherOwnerOrGroup() throws {
    let user: [Argument] = ["setpriv", "--reuid=4321", "--regid=4321", "--clear-groups", "--"]
    for owner in ["0:4321", "4321:0"] {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/shared/keep.txt")
      tree.file("root/shared/cache.bin")
      try check(run(["chown", "-R", "4321:4321", Argument(tree.path)]))
      try check(run(["chown", Argument(owner), Argument(root + "/shared")]))
      let unmerged = run(
        user + [
          Argument(skipbackupPath), "run", "-q", Argument(root), "--", "stat", "-c", "%u:%g",
          Argument(root + "/shared"),
        ], directory: "/")
      #expect(
        unmerged.lines == ["65534:4321"] || unmerged.lines == ["4321:65534"],
        "\(owner): \(unmerged)")

      try check(skipbackup("mark", Argument(root + "/shared/cache.bin")))
      let witness = tree.path + "/ran"
      let refused = run(
        user + [
          Argument(skipbackupPath), "run", "-q", Argument(root), "--", "touch", Argument(witness),
        ], directory: "/")
      #expect(refused.status == 1, "\(owner): \(refused)")
      #expect(
        refused.errors.hasPrefix("skipbackup: \(root)/shared: its owner or group cannot be copied"),
        "\(owner): \(refused)")
      #expect(refused.errors.split(separator: "\n").count == 1, "\(owner): \(refused)")
      #expect(access(witness, F_OK) != 0, "\(owner): COMMAND ran")
      // The same run without the mark's directory merged: uid 4321 may
      // create the witness, so the refusal above is not a permission's.
      let allowed = run(user + ["touch", Argument(witness)])
      #expect(allowed.status == 0, "\(allowed)")
      // Root maps every owner: the same tree is shown.
      let asRoot = skipbackup("run", "-q", Argument(root), "--", "ls", Argument(root + "/shared"))
      #expect(asRoot.lines == ["keep.txt"], "\(owner): \(asRoot)")
    }
  }

  /// A directory the walk cannot read may hold marks: no view, no COMMAND.
  @Test func anUnreadableDirectoryStopsTheRun() throws {
    let tree = try TrickyTree()
    try check(run(["chown", "-R", "nobody:nogroup", Argument(tree.directory.path)]))
    try check(run(["chmod", "000", Argument(tree.root + "/deep")]))
    defer { chmod(tree.root + "/deep", 0o755) }
    let witness = tree.directory.path + "/ran"
    let result = skipbackup(
      "run", "-q", Argument(tree.root), "--", "touch", Argument(witness), asNobody: true)
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.contains(tree.root + "/deep"), "\(result)")
    #expect(access(witness, F_OK) != 0, "COMMAND ran")
  }

  /// restic as nobody, through the view of a tree nobody owns: the
  /// snapshot holds exactly the included set, with nobody as the owner.
  @Test func resticAsAnOrdinaryUserHoldsExactlyTheIncludedSet() throws {
    let tree = try TrickyTree()
    let work = tree.directory.path
    try check(run(["chown", "-R", "nobody:nogroup", Argument(work)]))
    let script = #"""
      export RESTIC_REPOSITORY="$2/restic" RESTIC_PASSWORD=x RESTIC_CACHE_DIR="$2/cache"
      restic init -q && "$3" run -q "$1" -- restic backup -q "$1" &&
        restic ls --json latest >"$2/listing"
      """#
    let result = run(
      [
        "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "sh", "-c",
        Argument(script), "sh", Argument(tree.root), Argument(work), Argument(skipbackupPath),
      ], directory: "/")
    try #require(result.status == 0, "\(result)")
    let check = #"""
      import json, sys
      root, expected = sys.argv[1], int(sys.argv[2])
      nodes = [json.loads(l) for l in open(sys.argv[3])]
      nodes = [n for n in nodes if n.get("struct_type") == "node" and
               (n["path"] == root or n["path"].startswith(root + "/"))]
      owners = {(n["uid"], n["gid"]) for n in nodes}
      print(len(nodes) == expected, owners == {(65534, 65534)})
      """#
    let listed = try listedIncluded(tree.root)
    let verdict = run([
      python3, "-c", Argument(check), Argument(tree.root), Argument("\(listed.count)"),
      Argument(work + "/listing"),
    ])
    #expect(verdict.output == "True True\n", "\(verdict)")
  }

  /// Options go before the ROOTs; a ROOT named like an option follows a first --.
  @Test func anOptionAfterARootIsAUsageError() throws {
    let tree = try TrickyTree()
    let late = skipbackup("run", Argument(tree.root), "-x", "--", "true")
    #expect(late.status == 64, "\(late)")
    #expect(late.errors.contains("options go before the ROOTs"), "\(late)")
    Make.directory(Bytes(tree.root + "/-x"))
    let named = skipbackup(
      "run", "-q", "--", "-x", "--", "ls", "-A", directory: tree.root)
    #expect(named.status == 0, "\(named)")
    #expect(named.lines.contains("files"), "\(named)")
  }

  @Test func anExcludedRootIsRefusedAndTheCommandNeverRuns() throws {
    let tree = try TrickyTree()
    let witness = tree.directory.path + "/ran"
    for root in [tree.root + "/nested", tree.root + "/nested/inner"] {
      let result = skipbackup(
        "run", "-q", Argument(root), "--", "touch", Argument(witness))
      #expect(result.status == 1, "\(result)")
      #expect(result.errors.contains("excluded from backups as a whole"), "\(result)")
      #expect(access(witness, F_OK) != 0)
    }
  }

  /// The kernel's refusals, forced through the debug build's mocking: one
  /// line naming the call and why, status 1, COMMAND never run.
  @Test(arguments: [
    ("unshare:EPERM", "unshare"), ("mount:EPERM", "mount"), ("fsopen:ENODEV", "fsopen"),
    ("fsconfig:EINVAL:3", "overlayfs refuses"), ("mknodat:ENOSPC", "whiteout"),
    ("fsetxattr:EOPNOTSUPP", "Linux 6.6"), ("move_mount:EPERM", "move_mount"),
    ("fchown:EPERM", "owner"),
  ])
  func aRefusalIsOneLineAndTheCommandNeverRuns(forced: String, says: String) throws {
    let tree = try TrickyTree()
    setfattr(tree.root, "user.note", hex: "6869")
    let witness = tree.directory.path + "/ran"
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", Argument(tree.root), "--", "touch",
        Argument(witness),
      ],
      environment: ["SKIPBACKUP_FORCE_ERRNO": forced])
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
    #expect(result.errors.contains(says), "\(result)")
    #expect(access(witness, F_OK) != 0, "COMMAND ran")
  }

  @Test func anUnprivilegedRefusalNamesTheUserNamespacePolicy() throws {
    let tree = try TrickyTree()
    try check(run(["chown", "-R", "nobody:nogroup", Argument(tree.directory.path)]))
    let result = run(
      [
        "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
        Argument(skipbackupPath), "run", "-q", Argument(tree.root), "--", "true",
      ], directory: "/", environment: ["SKIPBACKUP_FORCE_ERRNO": "unshare:EPERM"])
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.contains("apparmor_restrict_unprivileged_userns"), "\(result)")
  }

  /// A kernel that takes no detached mount as a lower layer (before about
  /// 6.15): the layer is attached under the view instead, and the view is
  /// the same.
  @Test func theLayerIsAttachedWhenTheKernelWantsIt() throws {
    let tree = try TrickyTree()
    let listed = try check(skipbackup("list", "--included", "-0", Argument(tree.root)))
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", Argument(tree.root), "--", "find",
        Argument(tree.root), "-print0",
      ],
      environment: ["SKIPBACKUP_FORCE_ERRNO": "fsconfig:EINVAL:3:1"])
    try #require(result.status == 0, "\(result)")
    #expect(Set(result.nulSeparated) == Set(listed.nulSeparated))
  }

  /// A filesystem mounted below ROOT: without -x it is a view of its own,
  /// its marks honoured, as list enters it; with -x it shows as the empty
  /// directory it is mounted on, as list -x lists it; a directory
  /// bind-mounted from ROOT's own filesystem is refused with -x.
  @Test func aMountBelowRootIsAViewOfItsOwnOrLeftOutWithDashX() throws {
    let tree = try TrickyTree()
    Make.directory(Bytes(tree.root + "/mnt"))
    Make.directory(Bytes(tree.root + "/bound"))
    let script = #"""
      mount -t tmpfs none "$1/mnt" && echo kept >"$1/mnt/kept" && echo no >"$1/mnt/marked" &&
        mkdir "$1/mnt/inner" && mount -t tmpfs none "$1/mnt/inner" &&
        echo no >"$1/mnt/inner/marked" && echo kept >"$1/mnt/inner/kept" &&
        "$2" mark "$1/mnt/marked" "$1/mnt/inner/marked" &&
        { "$2" list --included -0 "$1" >"$3/listed"
          "$2" run -q "$1" -- find "$1" -print0 >"$3/viewed"; echo "without -x: $?"
          "$2" run -q -x "$1" -- sh -c 'ls -A "$1/mnt"; echo listed' sh "$1"; echo "with -x: $?"
          mount --bind "$1/files" "$1/bound"
          "$2" run -q -x "$1" -- true; echo "bind with -x: $?"; }
      """#
    let result = run([
      "unshare", "-m", "--propagation", "private", "sh", "-c", Argument(script), "sh",
      Argument(tree.root), Argument(skipbackupPath), Argument(tree.directory.path),
    ])
    #expect(result.output.contains("without -x: 0"), "\(result)")
    let listed = try #require(FileManager.default.contents(atPath: tree.directory.path + "/listed"))
    let viewed = try #require(FileManager.default.contents(atPath: tree.directory.path + "/viewed"))
    let listedSet = Set(Array(listed).split(separator: 0).map(Array.init))
    #expect(Set(Array(viewed).split(separator: 0).map(Array.init)) == listedSet)
    #expect(listedSet.contains(Bytes(tree.root + "/mnt/inner/kept")))
    #expect(!listedSet.contains(Bytes(tree.root + "/mnt/inner/marked")))
    #expect(!listedSet.contains(Bytes(tree.root + "/mnt/marked")))
    #expect(result.output.contains("listed\nwith -x: 0"), "\(result)")
    #expect(result.output.contains("bind with -x: 1"), "\(result)")
    #expect(result.errors.contains("bind-mounted"), "\(result)")
  }

  /// A filesystem mounted inside ROOT gets its view through the view above
  /// it, by descriptor: a directory on the way swapped for a link to a
  /// directory outside ROOT after the mount table was read (here just
  /// before the first view is mounted, SKIPBACKUP_RACE) stops the run at
  /// ENOTDIR, which the watch of the tree explains as the move of `way`;
  /// the inner view is never mounted at the link's target, and COMMAND
  /// does not run.
  @Test func aViewInsideRootIsNeverMountedThroughALinkSwappedIn() throws {
    let tree = try TrickyTree()
    let work = tree.directory.path
    for directory in [
      tree.root + "/way", tree.root + "/way/mnt", work + "/outside", work + "/outside/mnt",
    ] {
      Make.directory(Bytes(directory))
    }
    Make.file(Bytes(work + "/outside/mnt/victim"))
    let swap = work + "/swap.sh"
    Make.file(
      Bytes(swap),
      "mv '\(tree.root)/way' '\(work)/way.old' && ln -s '\(work)/outside' '\(tree.root)/way'\n")
    let script = #"""
      mount -t tmpfs none "$1/way/mnt" && echo no >"$1/way/mnt/marked" &&
        "$2" mark "$1/way/mnt/marked" &&
        SKIPBACKUP_RACE="move_mount:1:$4" "$2" run -q "$1" -- touch "$3/ran"; echo "status: $?"
      """#
    let result = run([
      "unshare", "-m", "--propagation", "private", "sh", "-c", Argument(script), "sh",
      Argument(tree.root), Argument(skipbackupPath), Argument(work), Argument(swap),
    ])
    #expect(
      access(tree.root + "/way", F_OK) == 0 && access(work + "/way.old", F_OK) == 0,
      "the race did not happen: \(result)")
    #expect(result.output.contains("status: 1"), "\(result)")
    #expect(
      result.errors.contains(
        "skipbackup: \(tree.root)/way: changed while the view of \(tree.root) was being made "
          + "(a directory holding excluded items moved away or was removed)"),
      "\(result)")
    #expect(access(work + "/ran", F_OK) != 0, "COMMAND ran")
  }

  /// HOME is ROOT and ~/.cache is marked: borg 1.2, borg 2, restic and
  /// duplicity, with their default cache, config and key locations, write
  /// their real state (it is there after the run, and the second run of
  /// each finds it) and the backup holds it exactly when it would without
  /// the view (.config yes, the marked .cache no).
  @Test func theToolsKeepTheirRealStateWhenHomeIsRoot() throws {
    let borg2 = try borg2Path()
    let tree = try TrickyTree()
    let home = tree.root
    Make.directory(Bytes(home + "/.cache"))
    Make.directory(Bytes(home + "/.config"))
    try check(skipbackup("mark", Argument(home + "/.cache")))
    let work = tree.directory.path
    var environment = [
      "HOME": home, "BORG_REPO": work + "/borg", "BORG_PASSPHRASE": "",
      "RESTIC_REPOSITORY": work + "/restic", "RESTIC_PASSWORD": "x",
      "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
    ]
    // The inherited settings that would move the state elsewhere.
    for variable in [
      "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "BORG_BASE_DIR",
      "RESTIC_CACHE_DIR",
    ] {
      environment[variable] = ""
    }
    let script = #"""
      unset XDG_CACHE_HOME XDG_CONFIG_HOME XDG_STATE_HOME XDG_DATA_HOME BORG_BASE_DIR RESTIC_CACHE_DIR
      borg init -e none && restic init -q &&
        "$1" run -q "$HOME" -- borg create ::first "$HOME" &&
        "$1" run -q "$HOME" -- borg create ::second "$HOME" &&
        "$1" run -q "$HOME" -- restic backup -q "$HOME" &&
        borg list --short ::second && restic ls -q latest &&
        export BORG_REPO="$BORG_REPO-2" && "$2" repo-create -e none &&
        "$1" run -q "$HOME" -- "$2" create first "$HOME" &&
        "$1" run -q "$HOME" -- "$2" create second "$HOME" &&
        echo "borg 2:" && "$2" list --short second &&
        dup() { duplicity --no-encryption --verbosity error "$@"; } &&
        "$1" run -q "$HOME" -- duplicity --no-encryption --verbosity error "$HOME" "file://$3" >/dev/null &&
        "$1" run -q "$HOME" -- duplicity --no-encryption --verbosity error "$HOME" "file://$3" >/dev/null &&
        echo "duplicity:" && dup list-current-files "file://$3" | cut -c26- &&
        echo "duplicity chains:" && dup collection-status "file://$3" | grep -c '^ *Full\|^ *Incremental'
      """#
    let result = run(
      [
        "sh", "-c", Argument(script), "sh", Argument(skipbackupPath), Argument(borg2),
        Argument(work + "/duplicity"),
      ], environment: environment)
    try #require(result.status == 0, "\(result)")
    #expect(access(home + "/.cache/borg", F_OK) == 0, "borg's cache is not in the real ~/.cache")
    #expect(
      access(home + "/.cache/restic", F_OK) == 0, "restic's cache is not in the real ~/.cache")
    #expect(access(home + "/.config/borg/security", F_OK) == 0)
    let root = String(home.dropFirst())
    #expect(result.lines.contains(root + "/.config/borg"), "\(result)")
    #expect(result.lines.contains(home + "/.config/borg"), "\(result)")
    #expect(access(home + "/.cache/duplicity", F_OK) == 0, "duplicity's archive is not in ~/.cache")
    let borgTwo = result.lines.drop { $0 != "borg 2:" }.prefix { $0 != "duplicity:" }
    #expect(borgTwo.contains(root + "/.config/borg"), "\(result)")
    let duplicity = result.lines.drop { $0 != "duplicity:" }.prefix { $0 != "duplicity chains:" }
    #expect(duplicity.contains(".config/borg"), "\(result)")
    // The second run found the first's archive in the real cache: a full
    // backup and an incremental one.
    #expect(result.lines.last == "2", "\(result)")
    #expect(!result.output.contains(".cache"), "the marked cache is in a backup: \(result)")
  }

  /// --sweep marks first, and the view leaves out what the sweep marked.
  @Test func sweepFirstHidesWhatTheSweepMarks() throws {
    let tree = try TrickyTree()
    Make.directory(Bytes(tree.root + "/project"))
    Make.file(Bytes(tree.root + "/project/package.json"), "{}")
    Make.directory(Bytes(tree.root + "/project/node_modules"))
    Make.file(Bytes(tree.root + "/project/node_modules/x"))
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", "--sweep", Argument(tree.root), "--", "ls", "-A",
        Argument(tree.root + "/project"),
      ],
      environment: ["XDG_CONFIG_HOME": tree.directory.path + "/config"])
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == ["package.json"], "\(result)")
  }

  /// The sweep's report goes to standard error, and COMMAND gets standard
  /// output back whole (`run --sweep ~ -- tar -cf - ~`); when standard
  /// output cannot be set aside, one line says so and COMMAND never runs.
  @Test func sweepsReportLeavesStandardOutputToTheCommand() throws {
    let tree = try TrickyTree()
    Make.directory(Bytes(tree.root + "/project"))
    Make.directory(Bytes(tree.root + "/project/node_modules"))
    Make.file(Bytes(tree.root + "/project/package.json"), "{}")
    let environment = ["XDG_CONFIG_HOME": tree.directory.path + "/config"]
    let result = run(
      [
        Argument(skipbackupPath), "run", "--sweep", Argument(tree.root), "--", "cat",
        Argument(tree.root + "/project/package.json"),
      ], environment: environment)
    #expect(result.status == 0, "\(result)")
    #expect(result.output == "{}", "\(result)")
    #expect(result.errors.contains("node_modules"), "\(result)")

    var forced = environment
    forced["SKIPBACKUP_FORCE_ERRNO"] = "dup2:EIO"
    let refused = run(
      [
        Argument(skipbackupPath), "run", "-q", "--sweep", Argument(tree.root), "--", "touch",
        Argument(tree.directory.path + "/ran"),
      ], environment: forced)
    #expect(refused.status == 1, "\(refused)")
    #expect(
      refused.errors
        == "skipbackup: standard output: cannot be set aside for the sweep's report "
        + "(dup2: input/output error); nothing was run\n", "\(refused)")
    #expect(!FileManager.default.fileExists(atPath: tree.directory.path + "/ran"), "\(refused)")
  }
}

// MARK: - Helpers of both suites

/// Each item under `root`, by the hex of its path relative to `root`, with its metadata as Python's os.lstat and
/// os.listxattr see it: the real tree, or through the view of `view`.
private func metadata(_ root: String, through view: String?) throws -> [String: String] {
  let script = #"""
    import os, sys
    root = sys.argv[1].encode()
    def describe(path, relative):
        s = os.lstat(path)
        kind = s.st_mode >> 12
        parts = [oct(s.st_mode), str(s.st_uid), str(s.st_gid), str(s.st_mtime_ns)]
        if kind != 4:
            # overlayfs shows a merged directory's size and link count as its own.
            parts += [str(s.st_size), str(s.st_nlink)]
        if kind == 10:
            parts.append(os.readlink(path).hex())
        else:
            for name in sorted(os.listxattr(path, follow_symlinks=False)):
                parts.append(name + "=" + os.getxattr(path, name, follow_symlinks=False).hex())
        print(relative.hex() + "\t" + " ".join(parts))
    describe(root, b"")
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            describe(path, path[len(root) + 1:])
    """#
  var arguments: [Argument] = [python3, "-c", Argument(script), Argument(root)]
  if let view {
    arguments = [Argument(skipbackupPath), "run", "-q", Argument(view), "--"] + arguments
  }
  let result = try check(run(arguments))
  var items: [String: String] = [:]
  for line in result.lines where !line.isEmpty {
    let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
    items[String(fields[0])] = String(fields[1])
  }
  return items
}
