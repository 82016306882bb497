import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `skipbackup run --snapshot`: COMMAND sees one instant of each ROOT,
/// from a read-only btrfs snapshot deleted after it, with exactly what
/// `list --included` listed then; a refusal is one line before COMMAND.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct SnapshotTests {
  /// A tricky tree copied (attributes and all) into the subvolume `sv` of a
  /// fresh image: ROOT is `MNT/sv/root`, inside the subvolume.
  private func trickyTreeOnBtrfs(options: [String] = []) throws -> (BtrfsImage, String) {
    let image = try BtrfsImage(options: options)
    let tree = try TrickyTree()
    let subvolume = try image.subvolume("sv")
    try check(run(["cp", "-a", Argument(tree.root), Argument(subvolume + "/root")]))
    return (image, subvolume + "/root")
  }

  @Test(arguments: RunTests.Plain.allCases)
  func aBackupThroughTheSnapshotHoldsExactlyTheIncludedSet(tool: RunTests.Plain) throws {
    let (image, root) = try trickyTreeOnBtrfs()
    let place = try BackupPlace()
    try place.prepare(tool.tool)
    let listed = try listedIncluded(root)
    let subvolumes = try image.subvolumes()
    let result = place.shell(
      #"skipbackup run -q --snapshot "$ROOT" -- "# + tool.command, root: root, in: place.work)
    try #require(result.status == 0, "\(result)")
    #expect(listed.count > 200)
    let backup = try place.backedUp(
      by: tool.tool, root: root, absoluteRoot: root, ranIn: place.work)
    let exact = backup == listed
    #expect(exact, "\(tool) through the snapshot: \(difference(backup, listed))")
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
    #expect(!mountInfo().contains(image.mountPoint + "/"), "a mount is left")
  }

  @Test func duplicityThroughTheSnapshotHoldsExactlyTheIncludedSet() throws {
    let (image, root) = try trickyTreeOnBtrfs()
    let place = try BackupPlace()
    let listed = try listedIncluded(root)
    let backup = place.shell(
      #"skipbackup run -q --snapshot "$ROOT" -- duplicity --no-encryption --archive-dir "$PWD/archive" full "$ROOT" "file://$PWD/duplicity""#,
      root: root, in: place.work)
    try #require(backup.status == 0, "\(backup)")
    let restore = place.shell(
      #"duplicity --no-encryption --archive-dir "$PWD/archive" restore "file://$PWD/duplicity" "$PWD/restore""#,
      root: root, in: place.work)
    try #require(restore.status == 0, "\(restore)")
    let restored = try pathSet(under: Bytes(place.work + "/restore"))
    #expect(restored == listed, "duplicity: \(difference(restored, listed))")
    withExtendedLifetime(image) {}
  }

  @Test func borgTwoThroughTheSnapshotHoldsExactlyTheIncludedSet() throws {
    let borg = try borg2Path()
    let (image, root) = try trickyTreeOnBtrfs()
    let place = try BackupPlace()
    let environment = [
      "BORG_REPO": place.work + "/borg2", "BORG_PASSPHRASE": "",
      "BORG_BASE_DIR": place.work + "/borg2-base",
    ]
    let listed = try listedIncluded(root)
    try check(run([Argument(borg), "repo-create", "-e", "none"], environment: environment))
    try check(
      run(
        [
          Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(root), "--",
          Argument(borg), "create", "frozen", Argument(root),
        ], environment: environment))
    let restore = place.work + "/restore"
    Make.directory(Bytes(restore))
    try check(
      run([Argument(borg), "extract", "frozen"], directory: restore, environment: environment))
    let restored = try pathSet(under: Bytes(restore + root))
    #expect(restored == listed, "borg 2: \(difference(restored, listed))")
    withExtendedLifetime(image) {}
  }

  /// The subvolume's own root as ROOT: the view shows it, without the
  /// directory that holds the snapshots.
  @Test func theSubvolumesRootShowsNoSnapshotDirectory() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    Make.directory(Bytes(subvolume + "/d"))
    Make.file(Bytes(subvolume + "/d/kept"))
    Make.file(Bytes(subvolume + "/d/secret"))
    try check(skipbackup("mark", Argument(subvolume + "/d/secret")))
    for _ in 0..<2 {
      let result = skipbackup(
        "run", "-q", "--snapshot", Argument(subvolume), "--", "find", Argument(subvolume))
      try #require(result.status == 0, "\(result)")
      #expect(result.lines.sorted() == [subvolume, subvolume + "/d", subvolume + "/d/kept"])
    }
  }

  /// A subvolume's root as ROOT: the walk reads which inodes hold an
  /// attribute, the nodump flag or a device from the snapshot's tree, and
  /// makes no call on any other file. The view is the same as when every
  /// entry is looked at (the search refused, as for an ordinary user), and
  /// as `list --included` lists; with the listing call failing after a few
  /// calls, the run still succeeds, which it could not if each of the 300
  /// plain files were listed.
  @Test func aSubvolumesRootIsJudgedFromItsTreeAndShowsTheIncludedSet() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let tree = try TrickyTree()
    try check(run(["cp", "-a", Argument(tree.root + "/."), Argument(subvolume)]))
    let trickyEntries = try pathSet(under: Bytes(tree.root)).count
    Make.directory(Bytes(subvolume + "/plain"))
    for index in 0..<300 { Make.file(Bytes(subvolume + "/plain/f\(index)")) }
    Make.file(Bytes(subvolume + "/flagged"))
    try check(run(["chattr", "+d", Argument(subvolume + "/flagged")]))
    try check(run(["ln", Argument(subvolume + "/flagged"), Argument(subvolume + "/plain/link")]))
    let mechanisms = "resource,legacy,xdg,nodump"
    let listed = try listedIncluded(subvolume, mechanisms: mechanisms)
    func view(forcing forced: [String] = []) -> (ProcessResult, Set<Bytes>) {
      let result = run(
        [
          Argument(skipbackupPath), "run", "-q", "--snapshot", "-m", Argument(mechanisms),
          Argument(subvolume),
          "--", "find", Argument(subvolume), "-print0",
        ],
        environment: forced.isEmpty
          ? [:] : ["SKIPBACKUP_FORCE_ERRNO": forced.joined(separator: ",")])
      let paths = result.nulSeparated.map { path in
        var relative = Array(path.dropFirst(subvolume.utf8.count))
        if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
        return relative
      }
      return (result, Set(paths))
    }
    let refused = "ioctl(BTRFS_IOC_TREE_SEARCH_V2):EPERM"
    let (judged, shown) = view()
    try #require(judged.status == 0, "\(judged)")
    let (everyEntry, shownLookingAtEach) = view(forcing: [refused])
    try #require(everyEntry.status == 0, "\(everyEntry)")
    #expect(shown == shownLookingAtEach, "\(difference(shown, shownLookingAtEach))")
    #expect(shown == listed, "\(difference(shown, listed))")
    #expect(shown.count > trickyEntries / 2)
    #expect(!shown.contains(Bytes("flagged")) && !shown.contains(Bytes("plain/link")))
    #expect(shown.contains(Bytes("plain/f299")))
    // Fewer listings than the tree has entries, and more than the search leaves.
    let listingFails = ["listxattrat", "llistxattr", "flistxattr"].map {
      "\($0):EIO:\(trickyEntries + 150)"
    }
    let (spared, _) = view(forcing: listingFails)
    #expect(spared.status == 0, "\(spared)")
    let (unspared, _) = view(forcing: listingFails + [refused])
    #expect(unspared.status == 1, "\(unspared)")
    // A character device 0/0, which holds no attribute, is still looked at.
    try check(run(["mknod", Argument(subvolume + "/plain/whiteout"), "c", "0", "0"]))
    let (whiteout, _) = view()
    #expect(whiteout.status == 1, "\(whiteout)")
    #expect(whiteout.errors.contains("plain/whiteout: a character device 0/0"), "\(whiteout)")
  }

  /// A ROOT inside its subvolume: each walker reads the snapshot's tree a
  /// window of inode numbers at a time, as it reaches them, and looks at an
  /// entry only where the window says it may matter, or could not be read.
  /// The view is the same whatever the search does: as when it is refused,
  /// as when one walker's or every later window fails, and as
  /// `list --included` lists.
  @Test func aRootInsideItsSubvolumeShowsTheIncludedSetWhateverTheSearchDoes() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let root = subvolume + "/inner"
    Make.directory(Bytes(root))
    let tree = try TrickyTree()
    try check(run(["cp", "-a", Argument(tree.root + "/."), Argument(root)]))
    Make.directory(Bytes(root + "/plain"))
    for index in 0..<1_000 { Make.file(Bytes(root + "/plain/f\(index)")) }
    Make.file(Bytes(root + "/flagged"))
    try check(run(["chattr", "+d", Argument(root + "/flagged")]))
    try check(run(["ln", Argument(root + "/flagged"), Argument(root + "/plain/link")]))
    // Outside the ROOT: a mark there must not matter, nor show.
    Make.file(Bytes(subvolume + "/outside"))
    try check(run(["chattr", "+d", Argument(subvolume + "/outside")]))
    let mechanisms = "resource,legacy,xdg,nodump"
    let listed = try listedIncluded(root, mechanisms: mechanisms)
    func view(forcing forced: String? = nil) throws -> Set<Bytes> {
      let result = run(
        [
          Argument(skipbackupPath), "run", "-q", "--snapshot", "-m", Argument(mechanisms),
          Argument(root), "--", "find", Argument(root), "-print0",
        ],
        environment: forced.map { ["SKIPBACKUP_FORCE_ERRNO": $0] } ?? [:])
      try #require(result.status == 0, "\(result)")
      return Set(
        result.nulSeparated.map { path in
          var relative = Array(path.dropFirst(root.utf8.count))
          if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
          return relative
        })
    }
    let before = try image.subvolumes()
    // Refused, the walk looks at every entry. The first two calls ask, for
    // each of the two walkers, whether the search is allowed: the second
    // failing leaves one walker looking at every entry. From the third on,
    // each window fails as the walk reaches it, and its entries are looked
    // at one by one.
    let search = "ioctl(BTRFS_IOC_TREE_SEARCH_V2)"
    for forced in [nil, "\(search):EPERM", "\(search):EIO:2:1", "\(search):EIO:3"] {
      for _ in 0..<(forced == nil ? 3 : 1) {
        let shown = try view(forcing: forced)
        #expect(shown == listed, "\(forced ?? "searched"): \(difference(shown, listed))")
      }
    }
    #expect(!listed.contains(Bytes("flagged")) && !listed.contains(Bytes("plain/link")))
    #expect(listed.contains(Bytes("plain/f999")))
    #expect(try image.subvolumes() == before, "a snapshot is left")
  }

  /// A window of inode numbers whose items fill more than one search: a
  /// file of 20,000 extents (78 bytes each in the search's buffer, 1.5 MB
  /// in all) and, after it in the same window, files marked by the nodump
  /// flag and by an attribute, which only the second search reads.
  @Test func aWindowLongerThanOneSearchStillHidesWhatItsEndHolds() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let root = subvolume + "/inner"
    Make.directory(Bytes(root))
    let fragmented = """
      import os, sys
      fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
      for index in range(20000):
          os.pwrite(fd, b"x" * 4096, index * 8192)
      os.close(fd)
      """
    try check(run([python3, "-c", Argument(fragmented), Argument(root + "/fragmented")]))
    for name in ["flagged", "marked", "kept"] { Make.file(Bytes(root + "/" + name)) }
    try check(run(["chattr", "+d", Argument(root + "/flagged")]))
    try check(skipbackup("mark", Argument(root + "/marked")))
    try check(run(["sync"]))
    let mechanisms = "resource,nodump"
    let listed = try listedIncluded(root, mechanisms: mechanisms)
    #expect(listed == Set(["", "fragmented", "kept"].map { Bytes($0) }))
    let result = run([
      Argument(skipbackupPath), "run", "-q", "--snapshot", "-m", Argument(mechanisms),
      Argument(root), "--", "find", Argument(root), "-print0",
    ])
    try #require(result.status == 0, "\(result)")
    let shown = Set(
      result.nulSeparated.map { path in
        var relative = Array(path.dropFirst(root.utf8.count))
        if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
        return relative
      })
    #expect(shown == listed, "\(difference(shown, listed))")
  }

  /// Two ROOTs on one subvolume share one snapshot; a ROOT on a subvolume
  /// nested in another ROOT gets its own, whose view is mounted on the
  /// empty directory the outer snapshot holds there, whatever the order
  /// the ROOTs come in; each view hides its own marks.
  @Test func rootsShareTheSnapshotOfTheirSubvolume() throws {
    let image = try BtrfsImage()
    let outer = try image.subvolume("sv")
    let inner = outer + "/inner"
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(inner)]))
    for directory in [outer + "/a", outer + "/b", inner + "/c"] {
      Make.directory(Bytes(directory))
      Make.file(Bytes(directory + "/kept"))
      Make.file(Bytes(directory + "/secret"))
      try check(skipbackup("mark", Argument(directory + "/secret")))
    }
    let subvolumes = try image.subvolumes()
    let shared = skipbackup(
      "run", "-q", "--snapshot", Argument(outer + "/a"), Argument(outer + "/b"), "--", "sh", "-c",
      Argument(#"btrfs subvolume list "$1" | grep -c skipbackup-snapshots; find "$2" "$3""#), "sh",
      Argument(image.mountPoint), Argument(outer + "/a"), Argument(outer + "/b"))
    try #require(shared.status == 0, "\(shared)")
    #expect(
      shared.lines == ["1", outer + "/a", outer + "/a/kept", outer + "/b", outer + "/b/kept"],
      "\(shared)")
    let nested = skipbackup(
      "run", "-q", "--snapshot", Argument(inner), Argument(outer), "--", "sh", "-c",
      Argument(#"btrfs subvolume list "$1" | grep -c skipbackup-snapshots; find "$2" | sort"#),
      "sh", Argument(image.mountPoint), Argument(outer))
    try #require(nested.status == 0, "\(nested)")
    #expect(
      nested.lines == [
        "2", outer, outer + "/a", outer + "/a/kept", outer + "/b", outer + "/b/kept", inner,
        inner + "/c", inner + "/c/kept",
      ], "\(nested)")
    #expect(try image.subvolumes() == subvolumes)
  }

  /// A file rewritten and a file created while COMMAND runs (through a
  /// second mount of the same filesystem, which no view covers) are not
  /// seen through the snapshot; through the live view they are.
  @Test func changesWhileCommandRunsAreNotSeen() throws {
    let (image, root) = try trickyTreeOnBtrfs()
    let elsewhere = image.directory.path + "/again"
    try image.bind(at: elsewhere)
    let live = elsewhere + "/sv/root"
    let script = #"""
      echo changed >"$2/files/a"; echo new >"$2/created"
      cat "$1/files/a"; echo; cat "$1/created" 2>&1 || true
      """#
    let frozen = skipbackup(
      "run", "-q", "--snapshot", Argument(root), "--", "sh", "-c", Argument(script), "sh",
      Argument(root), Argument(live))
    try #require(frozen.status == 0, "\(frozen)")
    #expect(frozen.lines.first == "x", "\(frozen)")
    #expect(frozen.output.contains("No such file"), "\(frozen)")
    // The same through the live view: the test can tell.
    Make.file(Bytes(live + "/files/a"))
    _ = unlink(live + "/created")
    let viewed = skipbackup(
      "run", "-q", Argument(root), "--", "sh", "-c", Argument(script), "sh", Argument(root),
      Argument(live))
    try #require(viewed.status == 0, "\(viewed)")
    #expect(viewed.lines == ["changed", "", "new"], "\(viewed)")
  }

  /// A directory holding a marked file, renamed back and forth while runs
  /// start: no run shows the marked file (the live view showed it in 244
  /// of 512 runs). scripts/torture --only snaprace runs this longer.
  @Test func aRenameRaceShowsNoMarkedItem() throws {
    let image = try BtrfsImage()
    let root = try image.subvolume("sv") + "/root"
    Make.directory(Bytes(root))
    Make.directory(Bytes(root + "/a"))
    Make.file(Bytes(root + "/a/kept"))
    Make.file(Bytes(root + "/a/secret"))
    try check(skipbackup("mark", Argument(root + "/a/secret")))
    let renamer = Process()
    renamer.executableURL = URL(fileURLWithPath: "/bin/sh")
    renamer.arguments = [
      "-c", #"cd "$1" && while :; do mv a b && mv b a; done"#, "sh", root,
    ]
    try renamer.run()
    defer {
      renamer.terminate()
      renamer.waitUntilExit()
    }
    var leaks: [String] = []
    var failures: [String] = []
    for _ in 0..<150 {
      let result = skipbackup(
        "run", "-q", "--snapshot", Argument(root), "--", "find", Argument(root), "-name", "secret")
      if result.status != 0 { failures.append("\(result)") }
      if !result.output.isEmpty { leaks.append(result.output) }
    }
    #expect(leaks.isEmpty, "\(leaks.count) runs showed the marked file: \(leaks.prefix(3))")
    #expect(failures.isEmpty, "\(failures.count) runs failed: \(failures.prefix(3))")
  }

  /// SIGKILL to skipbackup's process group at instants from taking the
  /// snapshot to COMMAND running leaves no mount, and once the killed
  /// processes are gone, the next run on the filesystem, of another
  /// subvolume of it, deletes every snapshot they left: `btrfs subvolume
  /// list` is as before.
  @Test func aKillLeavesNoMountAndTheNextRunDeletesItsSnapshot() throws {
    let (image, root) = try trickyTreeOnBtrfs()
    // The next run is on another subvolume of the filesystem.
    let other = try image.subvolume("other")
    let subvolumes = try image.subvolumes()
    // The mounts in the image's directory (its own, and any a run left):
    // other tests mount images of their own meanwhile.
    let mountsBefore = mountPoints(under: image.directory.path)
    var left = 0
    for attempt in 0..<12 {
      var pid: pid_t = 0
      var attributes = posix_spawnattr_t()
      posix_spawnattr_init(&attributes)
      defer { posix_spawnattr_destroy(&attributes) }
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
      posix_spawnattr_setpgroup(&attributes, 0)
      let words: [String] = [skipbackupPath, "run", "-q", "--snapshot", root, "--", "sleep", "30"]
      let argv = words.map { strdup($0) }
      defer { for argument in argv { free(argument) } }
      var pointers = argv + [nil]
      try #require(posix_spawn(&pid, skipbackupPath, nil, &attributes, &pointers, environ) == 0)
      // From 0 (taking the snapshot, walking it) to 110 ms (COMMAND running).
      usleep(useconds_t(attempt * 10_000))
      kill(-pid, SIGKILL)
      var status: Int32 = 0
      waitpid(pid, &status, 0)
      #expect(status & 0x7F == SIGKILL)
      if try image.subvolumes().count > subvolumes.count { left += 1 }
    }
    #expect(mountPoints(under: image.directory.path) == mountsBefore)
    // Every process that held a snapshot is gone once its lock is free
    // (flock waits for that; it does not poll).
    let locks = try check(
      run([
        "sh", "-c",
        #"for lock in "$1"/.skipbackup-snapshots/run-*.lock; do [ -e "$lock" ] && flock "$lock" true; done; true"#,
        "sh", Argument(image.mountPoint + "/sv"),
      ]))
    _ = locks
    let next = skipbackup("run", "-q", "--snapshot", Argument(other), "--", "true")
    #expect(next.status == 0, "\(next)")
    #expect(try image.subvolumes() == subvolumes, "snapshots left: \(left) of 12 kills")
    #expect(!mountInfo().contains(image.mountPoint + "/"))
  }

  /// The exit status and a signal that ends COMMAND are skipbackup's too, as
  /// when skipbackup became COMMAND; a signal sent to skipbackup reaches
  /// COMMAND; standard input and output are COMMAND's.
  @Test func theCommandsExitStatusSignalsAndStreamsAreKept() throws {
    let (image, root) = try trickyTreeOnBtrfs()
    let exits = shell(#""$SKIPBACKUP" run -q --snapshot "$1" -- sh -c 'exit 7'; echo "$?""#, root)
    #expect(exits.lines == ["7"], "\(exits)")
    let killed = shell(
      #""$SKIPBACKUP" run -q --snapshot "$1" -- sh -c 'kill -TERM $$'; echo "$?""#, root)
    #expect(killed.lines == ["143"], "\(killed)")
    // The test runner may start children with signals blocked or ignored:
    // Python starts skipbackup as a shell would, and sends SIGTERM once
    // COMMAND has set its trap; COMMAND's own exit status shows it got it.
    let forwarding = #"""
      import signal, subprocess, sys
      def as_from_a_shell():
          signal.signal(signal.SIGTERM, signal.SIG_DFL)
          signal.pthread_sigmask(signal.SIG_SETMASK, [])
      process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, preexec_fn=as_from_a_shell)
      ready = process.stdout.readline()
      process.send_signal(signal.SIGTERM)
      print(ready.decode().strip(), process.stdout.read().decode().strip(), process.wait())
      """#
    let forwarded = run([
      python3, "-c", Argument(forwarding), Argument(skipbackupPath), "run", "-q", "--snapshot",
      Argument(root), "--", "sh", "-c",
      #"trap 'kill $!; echo got TERM; exit 3' TERM; sleep 30 & echo ready; wait"#,
    ])
    #expect(forwarded.lines == ["ready got TERM 3"], "\(forwarded)")
    let piped = run(
      [Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(root), "--", "cat"],
      input: Bytes("through\n"))
    #expect(piped.output == "through\n", "\(piped)")
    #expect(try image.subvolumes().count == 1)
  }

  /// As an ordinary user on their own subvolume of a filesystem mounted
  /// `user_subvol_rm_allowed`: the view of the snapshot, and the snapshot
  /// deleted after; without the option, refused in one line before COMMAND.
  @Test func anOrdinaryUserSnapshotsTheirOwnSubvolume() throws {
    for allowed in [true, false] {
      let image = try BtrfsImage(options: allowed ? ["user_subvol_rm_allowed"] : [])
      chmod(image.directory.path, 0o755)
      let subvolume = try image.subvolume("home", owner: "nobody:nogroup")
      Make.directory(Bytes(subvolume + "/d"))
      Make.file(Bytes(subvolume + "/d/kept"))
      Make.file(Bytes(subvolume + "/d/secret"))
      try check(skipbackup("mark", Argument(subvolume + "/d/secret")))
      try check(run(["chown", "-R", "nobody:nogroup", Argument(subvolume)]))
      let subvolumes = try image.subvolumes()
      let result = skipbackup(
        "run", "-q", "--snapshot", Argument(subvolume), "--", "find", Argument(subvolume + "/d"),
        asNobody: true)
      if allowed {
        #expect(result.status == 0, "\(result)")
        #expect(result.lines == [subvolume + "/d", subvolume + "/d/kept"], "\(result)")
      } else {
        #expect(result.status == 1, "\(result)")
        #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
        #expect(result.errors.contains("user_subvol_rm_allowed"), "\(result)")
        #expect(result.output.isEmpty, "COMMAND ran: \(result)")
      }
      #expect(try image.subvolumes() == subvolumes, "allowed \(allowed)")
    }
  }

  /// A snapshot holds no mount, but it holds what a mount hides from users:
  /// the files in a directory before something was mounted on it, the
  /// file below a mounted file. With -x or without, as root and as an
  /// ordinary user (whose live view refuses a ROOT with a mount below it,
  /// and whose snapshot has none), the view shows a mount point as the
  /// empty directory, and a mounted file as it is, with its marks: what
  /// `list -x --included` lists of the live tree.
  @Test(arguments: [false, true])
  func aMountBelowTheRootShowsAsListDashXListsIt(asNobody: Bool) throws {
    let image = try BtrfsImage(options: ["user_subvol_rm_allowed"])
    chmod(image.directory.path, 0o755)
    let subvolume = try image.subvolume("home", owner: asNobody ? "nobody:nogroup" : nil)
    let directory = try TemporaryDirectory()
    chmod(directory.path, 0o777)
    let script = #"""
      S=$1; O=$2
      mkdir -p "$S/mp" "$O" && echo hidden >"$S/mp/shadow" && echo bottom >"$S/f" &&
        echo plain >"$S/g" && echo top >"$O/top" && echo marked >"$O/marked" &&
        "$SB" mark "$S/f" "$O/marked" && chmod 644 "$O/top" "$O/marked" &&
        chown -R "$OWNER" "$S" && mount -t tmpfs -o mode=755 none "$S/mp" &&
        echo mounted >"$S/mp/mounted" && mount --bind "$O/top" "$S/f" &&
        mount --bind "$O/marked" "$S/g" || exit 9
      "$SB" list -x --included "$S" | sort >"$T/listed"
      for x in "" -x; do
        $AS "$SB" run -q --snapshot $x "$S" -- sh -c 'cat "$1/f"; find "$1" | sort >"$2/viewed$3"'           sh "$S" "$T" "$x"
        echo "status $?"
        cmp "$T/viewed$x" "$T/listed" && echo "same as list -x"
      done
      """#
    var environment = ["SB": skipbackupPath, "T": directory.path]
    environment["AS"] = asNobody ? "setpriv --reuid=nobody --regid=nogroup --clear-groups" : ""
    environment["OWNER"] = asNobody ? "nobody:nogroup" : "root:root"
    let subvolumes = try image.subvolumes()
    let result = run(
      [
        "unshare", "-m", "--propagation", "private", "sh", "-c", Argument(script), "sh",
        Argument(subvolume), Argument(directory.path + "/outside"),
      ], environment: environment)
    #expect(
      result.lines == ["top", "status 0", "same as list -x"] + [
        "top", "status 0", "same as list -x",
      ], "\(result)")
    let listed = try String(contentsOfFile: directory.path + "/listed", encoding: .utf8)
    #expect(listed.contains("/mp\n") && listed.contains("/f\n"), "\(listed)")
    #expect(!listed.contains("shadow") && !listed.contains("/g\n"), "\(listed)")
    #expect(try image.subvolumes() == subvolumes)
  }

  /// A subvolume nested in ROOT, which the ROOT's snapshot holds empty, is
  /// frozen too, as the live view shows it: its own snapshot, mounted
  /// inside, its marks honoured, what is nested in it too; one that is
  /// marked is hidden, and none leaves a snapshot. With -x each is the
  /// empty directory `list -x` lists. A file written into one while
  /// COMMAND runs is not seen.
  @Test func aNestedSubvolumeIsFrozenWithItsRoot() throws {
    let image = try BtrfsImage()
    let home = try image.subvolume("home")
    let elsewhere = image.directory.path + "/again"
    try image.bind(at: elsewhere)
    let script = #"""
      H=$1
      mkdir "$H/d" && echo a >"$H/d/a" && btrfs -q subvolume create "$H/d/vm" &&
        echo disk >"$H/d/vm/disk" && echo s >"$H/d/vm/secret" &&
        btrfs -q subvolume create "$H/d/vm/deeper" && echo deep >"$H/d/vm/deeper/f" &&
        btrfs -q subvolume create "$H/marked" && echo m >"$H/marked/m" &&
        mkdir "$H/cache" && btrfs -q subvolume create "$H/cache/layer" &&
        "$SB" mark "$H/d/vm/secret" "$H/marked" "$H/cache" &&
        btrfs -q subvolume snapshot -r "$H/d/vm/deeper" "$H/d/frozen" || exit 9
      "$SB" list --included "$H" | sort >"$T/listed"
      "$SB" list -x --included "$H" | sort >"$T/listed-x"
      for x in "" -x; do
        "$SB" run -q --snapshot $x "$H" -- sh -c '
          echo new >"$3/home/d/vm/new"; find "$1" | sort >"$2/viewed$4"
          btrfs subvolume list "$3" | grep -c skipbackup-snapshots >"$2/taken$4"' \
          sh "$H" "$T" "$AGAIN" "$x"
        echo "status $?"
        rm "$AGAIN/home/d/vm/new"
        cmp "$T/viewed$x" "$T/listed$x" && echo "same as list $x"
      done
      ls -A "$H/d/vm"
      """#
    let directory = try TemporaryDirectory()
    let subvolumes = try image.subvolumes().count
    let result = run(
      ["sh", "-c", Argument(script), "sh", Argument(home)],
      environment: ["SB": skipbackupPath, "T": directory.path, "AGAIN": elsewhere])
    // Nothing written in the nested subvolume: its snapshot is kept in
    // the ROOT's subvolume's .skipbackup-snapshots.
    #expect(
      result.lines == [
        "status 0", "same as list ", "status 0", "same as list -x", "deeper", "disk", "secret",
      ], "\(result)")
    let viewed = try String(contentsOfFile: directory.path + "/viewed", encoding: .utf8)
    #expect(viewed.contains("/d/vm/disk\n") && viewed.contains("/d/vm/deeper/f\n"), "\(viewed)")
    // A read-only subvolume is its own snapshot: shown, nothing written in it.
    #expect(viewed.contains("/d/frozen/f\n"), "\(viewed)")
    #expect(!viewed.contains("secret") && !viewed.contains("marked") && !viewed.contains("new"))
    // Home, vm and deeper; not the read-only one, the marked one, nor the
    // one below a marked directory. With -x, home alone.
    let taken = try String(contentsOfFile: directory.path + "/taken", encoding: .utf8)
    let takenDashX = try String(contentsOfFile: directory.path + "/taken-x", encoding: .utf8)
    #expect(taken == "3\n" && takenDashX == "1\n", "\(taken) \(takenDashX)")
    let dashX = try String(contentsOfFile: directory.path + "/viewed-x", encoding: .utf8)
    #expect(dashX.contains("/d/vm\n") && !dashX.contains("/d/vm/"), "\(dashX)")
    // The image's five subvolumes, and no snapshot.
    #expect(try image.subvolumes().count == subvolumes + 5)

    // The nested subvolume's snapshot refused (forced), or the nested
    // subvolumes not found: one line, nothing run, no snapshot left.
    let before = try image.subvolumes()
    for (forced, says) in [
      ("ioctl(BTRFS_IOC_SNAP_CREATE_V2):ENOSPC:2:1", "no space left"),
      ("ioctl(BTRFS_IOC_INO_LOOKUP_USER):EACCES", "nested in it cannot be found"),
    ] {
      let refused = run(
        [Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(home), "--", "echo", "ran"],
        environment: ["SKIPBACKUP_FORCE_ERRNO": forced])
      #expect(refused.status == 1 && refused.output.isEmpty, "\(refused)")
      #expect(refused.errors.split(separator: "\n").count == 1, "\(refused)")
      #expect(refused.errors.contains(says), "\(refused)")
      #expect(try image.subvolumes() == before, "\(forced)")
    }
  }

  /// An ordinary user's nested subvolume is frozen with their ROOT, and a
  /// read-only one of another user's shown as it is; a writable one that
  /// another user owns, which only its owner may snapshot, is refused in
  /// one line before any snapshot is taken, unless -x leaves it out.
  @Test func anOrdinaryUsersNestedSubvolumeOfAnotherIsRefused() throws {
    let image = try BtrfsImage(options: ["user_subvol_rm_allowed"])
    chmod(image.directory.path, 0o755)
    let home = try image.subvolume("home", owner: "nobody:nogroup")
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(home + "/mine")]))
    Make.file(Bytes(home + "/mine/kept"))
    try check(run(["chown", "-R", "nobody:nogroup", Argument(home)]))
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(home + "/source")]))
    Make.file(Bytes(home + "/source/r"))
    try check(
      run([
        "btrfs", "-q", "subvolume", "snapshot", "-r", Argument(home + "/source"),
        Argument(home + "/mine/frozen"),
      ]))
    try check(run(["btrfs", "-q", "subvolume", "delete", Argument(home + "/source")]))
    let initial = try image.subvolumes()
    let frozen = skipbackup(
      "run", "-q", "--snapshot", Argument(home), "--", "find", Argument(home + "/mine"),
      asNobody: true)
    #expect(
      frozen.lines.sorted() == [
        home + "/mine", home + "/mine/frozen", home + "/mine/frozen/r", home + "/mine/kept",
      ], "\(frozen)")
    #expect(try image.subvolumes() == initial)
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(home + "/theirs")]))
    let subvolumes = try image.subvolumes()
    let refused = skipbackup(
      "run", "-q", "--snapshot", Argument(home), "--", "echo", "ran", asNobody: true)
    #expect(refused.status == 1 && refused.output.isEmpty, "\(refused)")
    #expect(refused.errors.split(separator: "\n").count == 1, "\(refused)")
    #expect(refused.errors.contains(home + "/theirs: a btrfs subvolume nested"), "\(refused)")
    #expect(try image.subvolumes() == subvolumes)
    let dashX = skipbackup(
      "run", "-q", "-x", "--snapshot", Argument(home), "--", "find", Argument(home + "/theirs"),
      asNobody: true)
    #expect(dashX.lines == [home + "/theirs"], "\(dashX)")
    #expect(try image.subvolumes() == subvolumes)

    // A home that is a directory in root's subvolume, which root lets the
    // user write to: refused as another's, and nothing is made there.
    let shared = try image.subvolume("shared")
    chmod(shared, 0o777)
    Make.directory(Bytes(shared + "/mine"))
    try check(run(["chown", "nobody:nogroup", Argument(shared + "/mine")]))
    let notTheirs = skipbackup(
      "run", "-q", "--snapshot", Argument(shared + "/mine"), "--", "echo", "ran", asNobody: true)
    #expect(notTheirs.status == 1 && notTheirs.output.isEmpty, "\(notTheirs)")
    #expect(
      notTheirs.errors == "skipbackup: \(shared)/mine: its btrfs subvolume belongs to another "
        + "user, and only its owner, or root, may snapshot it; run as root, or without "
        + "--snapshot; nothing was run\n", "\(notTheirs)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: shared) == ["mine"])
  }

  /// An ordinary user's home whose root its owner keeps at mode 0555: the
  /// snapshot's root has that mode, and the kernel deletes a user's
  /// subvolume only with write access to its root, which the run grants.
  @Test func anOrdinaryUsersHomeAtMode555LeavesNoSnapshot() throws {
    let image = try BtrfsImage(options: ["user_subvol_rm_allowed"])
    chmod(image.directory.path, 0o755)
    let home = try image.subvolume("home", owner: "nobody:nogroup")
    try check(skipbackup("run", "-q", "--snapshot", Argument(home), "--", "true", asNobody: true))
    chmod(home, 0o555)
    let subvolumes = try image.subvolumes()
    for _ in 0..<2 {
      let result = skipbackup(
        "run", "-q", "--snapshot", Argument(home), "--", "echo", "ran", asNobody: true)
      #expect(result.status == 0 && result.lines == ["ran"] && result.errors.isEmpty, "\(result)")
      #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
    }
  }

  /// Only the snapshot directory at a subvolume's root is the runs': a
  /// subvolume a user keeps below a directory of that name elsewhere is
  /// frozen and shown like any other.
  @Test func aUsersDirectoryNamedLikeTheSnapshotDirectoryIsShown() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let deep = subvolume + "/a/deep/.skipbackup-snapshots"
    try check(run(["mkdir", "-p", Argument(deep)]))
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(deep + "/kept")]))
    Make.file(Bytes(deep + "/kept/g"))
    // At the subvolume's root, with a user ID's ending, and a marked file.
    let own = subvolume + "/.skipbackup-snapshots.7"
    Make.directory(Bytes(own))
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(own + "/s")]))
    Make.file(Bytes(own + "/s/f"))
    Make.file(Bytes(own + "/secret"))
    try check(skipbackup("mark", Argument(own + "/secret")))
    let listed = try check(skipbackup("list", "--included", Argument(subvolume))).lines
    #expect(listed.contains(deep + "/kept/g") && listed.contains(own + "/s/f"), "\(listed)")
    let subvolumes = try image.subvolumes()
    for options in [["--snapshot"], []] {
      let viewed = try check(
        skipbackup(
          arguments: ["run", "-q"] + options.map { Argument($0) } + [
            Argument(subvolume), "--", "find", Argument(subvolume),
          ]))
      #expect(viewed.lines.sorted() == listed.sorted(), "\(options): \(viewed)")
    }
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// A walk of the snapshot that fails (a directory the user may not read,
  /// an item the view cannot show) deletes the snapshot before it ends,
  /// and names the item where the user knows it, not in the snapshot.
  @Test func aFailedWalkNamesTheLiveItemAndLeavesNoSnapshot() throws {
    let image = try BtrfsImage(options: ["user_subvol_rm_allowed"])
    chmod(image.directory.path, 0o755)
    let home = try image.subvolume("home", owner: "nobody:nogroup")
    Make.file(Bytes(home + "/kept"))
    try check(run(["chown", "nobody:nogroup", Argument(home + "/kept")]))
    Make.directory(Bytes(home + "/private"))
    chmod(home + "/private", 0o700)
    let subvolumes = try image.subvolumes()
    let unreadable = skipbackup(
      "run", "-q", "--snapshot", Argument(home), "--", "echo", "ran", asNobody: true)
    #expect(unreadable.status == 1 && unreadable.output.isEmpty, "\(unreadable)")
    #expect(unreadable.errors.hasPrefix("skipbackup: \(home)/private: "), "\(unreadable)")
    #expect(
      unreadable.errors.hasSuffix(
        "\nskipbackup: nothing was run: the item above could not be read, and may hold a "
          + "marked item the view could not hide; make it readable to you (chmod, or an ACL), "
          + "or run as root\n"), "\(unreadable)")
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
    #expect(mknod(home + "/whiteout", S_IFCHR | 0o644, 0) == 0)
    let whiteout = skipbackup("run", "-q", "--snapshot", Argument(home), "--", "echo", "ran")
    #expect(whiteout.status == 1 && whiteout.output.isEmpty, "\(whiteout)")
    #expect(whiteout.errors.hasPrefix("skipbackup: \(home)/whiteout: "), "\(whiteout)")
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// Root's backup of a user's home subvolume and the user's own backups
  /// of it do not stand in each other's way. Root keeps its snapshot
  /// beside the subvolume the home is nested in (a systemd-homed home),
  /// leaving nothing in the home; where the home is its mount's root,
  /// each keeps a directory of their own in it, and the user's walks read
  /// root's and leave it out.
  @Test func rootAndTheOwnerEachSnapshotAUsersHome() throws {
    let image = try BtrfsImage(options: ["user_subvol_rm_allowed"])
    chmod(image.directory.path, 0o755)
    let homes = try image.subvolume("homes")
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(homes + "/alice")]))
    let home = homes + "/alice"
    Make.file(Bytes(home + "/kept"))
    Make.directory(Bytes(home + "/cache"))
    Make.file(Bytes(home + "/cache/secret"))
    try check(run(["chown", "-R", "nobody:nogroup", Argument(home)]))
    try check(skipbackup("mark", Argument(home + "/cache"), asNobody: true))
    let expected = try check(skipbackup("list", "--included", Argument(home))).lines
    let subvolumes = try image.subvolumes()
    func find(_ root: String, asNobody: Bool) -> ProcessResult {
      skipbackup(
        "run", "-q", "--snapshot", Argument(root), "--", "find", Argument(root),
        asNobody: asNobody)
    }
    let byRoot = find(home, asNobody: false)
    #expect(byRoot.status == 0 && byRoot.lines.sorted() == expected, "\(byRoot)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: home).sorted() == ["cache", "kept"])
    #expect(access(homes + "/.skipbackup-snapshots", F_OK) == 0)
    let byOwner = find(home, asNobody: true)
    #expect(byOwner.status == 0 && byOwner.lines.sorted() == expected, "\(byOwner)")
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")

    // The home as its mount's root: the owner's directory came first.
    let mounted = image.directory.path + "/alice"
    try image.mount(subvolume: "homes/alice", at: mounted)
    let rootsRun = find(mounted, asNobody: false)
    let inMount = expected.map { mounted + $0.dropFirst(home.count) }
    #expect(rootsRun.status == 0 && rootsRun.lines.sorted() == inMount, "\(rootsRun)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: mounted).sorted() == [
        ".skipbackup-snapshots", ".skipbackup-snapshots.0", "cache", "kept",
      ])
    let listed = skipbackup("list", "--included", Argument(mounted), asNobody: true)
    #expect(listed.status == 0 && listed.lines.sorted() == inMount, "\(listed)")
    let ownersRun = find(mounted, asNobody: true)
    #expect(ownersRun.status == 0 && ownersRun.lines.sorted() == inMount, "\(ownersRun)")
    #expect(try image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// `.skipbackup-snapshots` is out of every backup of the live tree, by
  /// each tool's own rule as well as by `run`'s: the Apple attributes and
  /// the xdg one (getfattr), nodump (lsattr), a CACHEDIR.TAG (tar
  /// --exclude-caches-all). One an earlier version made unmarked is
  /// marked by the next run.
  @Test func theSnapshotDirectoryIsLeftOutOfBackupsOfTheLiveTree() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    Make.file(Bytes(subvolume + "/kept"))
    let snapshots = subvolume + "/.skipbackup-snapshots"
    Make.directory(Bytes(snapshots))
    chmod(snapshots, 0o700)
    try check(skipbackup("run", "-q", "--snapshot", Argument(subvolume), "--", "true"))
    let attributes = try check(run(["getfattr", "-d", "-m", "-", Argument(snapshots)])).output
    for name in [
      "user.com.apple.MobileBackup", "user.com.apple.metadata:com_apple_backup_excludeItem",
      "user.xdg.robots.backup",
    ] {
      #expect(attributes.contains(name), "\(attributes)")
    }
    let flags = try check(run(["lsattr", "-d", Argument(snapshots)])).output
    #expect(flags.split(separator: " ").first?.contains("d") == true, "\(flags)")
    let tar = try check(
      run([
        "sh", "-c", "tar --exclude-caches-all -cf - -C \"$1\" . | tar -tf -", "sh",
        Argument(subvolume),
      ]))
    #expect(tar.lines.sorted() == ["./", "./kept"], "\(tar)")
    let live = try check(
      skipbackup("run", "-q", Argument(subvolume), "--", "find", Argument(subvolume)))
    #expect(live.lines == [subvolume, subvolume + "/kept"], "\(live)")
    let excluded = try check(skipbackup("list", "--excluded", Argument(subvolume)))
    #expect(excluded.lines == [snapshots], "\(excluded)")
  }

  /// What cannot be snapshotted is refused in one line naming ROOT, before
  /// COMMAND: a ROOT on another filesystem, a read-only btrfs, and (forced)
  /// a full one, and a subvolume whose snapshot directory cannot be made; a snapshot that cannot be deleted is reported after
  /// COMMAND, whose status stays, and the next run deletes it.
  @Test func aRefusalIsOneLineBeforeTheCommand() throws {
    let plain = try TemporaryDirectory()
    let (image, root) = try trickyTreeOnBtrfs()
    let witness = image.directory.path + "/ran"
    func attempt(_ root: String, forcing forced: String? = nil) -> ProcessResult {
      run(
        [
          Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(root), "--", "touch",
          Argument(witness),
        ], environment: forced.map { ["SKIPBACKUP_FORCE_ERRNO": $0] } ?? [:])
    }
    let frozen = try image.subvolume("frozen")
    Make.directory(Bytes(frozen + "/d"))
    try check(run(["btrfs", "property", "set", "-ts", Argument(frozen), "ro", "true"]))
    var cases: [(ProcessResult, String)] = [
      (attempt(plain.path), "not on btrfs"),
      (attempt(frozen + "/d"), "subvolume is read-only"),
      (attempt(root, forcing: "ioctl(BTRFS_IOC_SNAP_CREATE_V2):ENOSPC"), "no space left"),
      (attempt(root, forcing: "ioctl(BTRFS_IOC_SNAP_CREATE_V2):EPERM"), "only the owner"),
      (attempt(root, forcing: "ioctl(BTRFS_IOC_SNAP_CREATE_V2):ETXTBSY"), "active swap file"),
    ]
    // Where the snapshot directory would be: a link someone planted, and
    // an immutable subvolume root.
    let planted = try image.subvolume("planted")
    #expect(symlink("/etc", planted + "/.skipbackup-snapshots") == 0)
    cases.append((attempt(planted), "is not a directory"))
    let immutable = try image.subvolume("immutable")
    try check(run(["chattr", "+i", Argument(immutable)]))
    cases.append((attempt(immutable), "immutable (chattr +i)"))
    try check(run(["chattr", "-i", Argument(immutable)]))
    try check(run(["mount", "-o", "remount,ro", Argument(image.mountPoint)]))
    cases.append((attempt(root), "read-only"))
    try check(run(["mount", "-o", "remount,rw", Argument(image.mountPoint)]))
    for (result, says) in cases {
      #expect(result.status == 1, "\(result)")
      #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
      #expect(result.errors.contains(says), "\(says): \(result)")
      #expect(access(witness, F_OK) != 0, "COMMAND ran: \(result)")
    }
    #expect(cases[0].0.errors.contains(plain.path), "\(cases[0].0)")
    #expect(cases[2].0.errors.contains(root), "\(cases[2].0)")

    let subvolumes = try image.subvolumes()
    let kept = attempt(root, forcing: "ioctl(BTRFS_IOC_SNAP_DESTROY):EPERM")
    #expect(kept.status == 0, "\(kept)")
    #expect(kept.errors.contains("could not be deleted"), "\(kept)")
    #expect(try image.subvolumes().count == subvolumes.count + 1)
    try check(skipbackup("run", "-q", "--snapshot", Argument(root), "--", "true"))
    #expect(try image.subvolumes() == subvolumes)
  }

  private func shell(_ script: String, _ argument: String) -> ProcessResult {
    run(
      [
        "env", Argument("SKIPBACKUP=\(skipbackupPath)"), "sh", "-c", Argument(script), "sh",
        Argument(argument),
      ])
  }
}
