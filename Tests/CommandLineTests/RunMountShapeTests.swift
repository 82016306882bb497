import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `skipbackup run` at every shape a mount takes around and below a ROOT:
/// `/` itself, a filesystem mounted below a ROOT with -x, a file mounted on
/// a file, items overlayfs takes for its own, merged directories' inode
/// flags and the real mount's options. Each view is exact, or the run is
/// refused in one line per cause and COMMAND does not run. Every
/// filesystem is made in the test's own mount namespace (`unshare -m`), so
/// nothing reaches the host's mount table.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct RunMountShapeTests {
  // MARK: - The view of /

  /// As root, `run /` makes the view COMMAND's root directory, with /proc,
  /// /sys, /dev, /run and /tmp bound back as they are: the marked file is
  /// not there, the tree is read-only, the kernel's files work, /tmp is
  /// the real one and writable, COMMAND may make namespaces of its own,
  /// and `restic backup --one-file-system /` and `tar --one-file-system`
  /// hold exactly what `list -x --included /` lists. Run in a root of its
  /// own (a tmpfs made `/` by pivot_root) so that the walk is of this tree.
  @Test(arguments: ["-x", ""])
  func theViewOfSlashIsCommandsRootWithItsSystemDirectoriesBoundBack(option: String) throws {
    let script = #"""
      mkdir -p /data/sub && echo secret >/data/sub/marked && echo kept >/data/sub/kept &&
        skipbackup mark /data/sub/marked && cd /data/sub || exit 9
      skipbackup run -q $X / -- sh -c '
        echo "pwd $PWD"; ls /data/sub; cat /data/sub/marked; echo w >/data/written
        grep -q "^Name:" /proc/self/status && echo proc; head -c 3 /dev/zero | wc -c >/dev/null && echo dev
        echo t >/tmp/written && echo tmp; touch /run/written && echo run
        unshare -U sh -c "echo namespaces"'
      echo "status $?"
      ls /data; cat /tmp/written
      """#
    let result = inFakeRoot(script, environment: ["X": option])
    #expect(result.lines.contains("status 0"), "\(result)")
    #expect(result.lines.contains("pwd /data/sub"), "\(result)")
    #expect(result.lines.contains("kept") && !result.output.contains("secret"), "\(result)")
    #expect(result.errors.contains("/data/sub/marked: No such file"), "\(result)")
    #expect(result.errors.contains("/data/written: Read-only file system"), "\(result)")
    for line in ["proc", "dev", "tmp", "run", "namespaces"] {
      #expect(result.lines.contains(line), "\(line): \(result)")
    }
    // After the run: nothing written to the tree, /tmp's file is the real one.
    let after = result.lines.drop { $0 != "status 0" }.dropFirst()
    #expect(Array(after) == ["sub", "t"], "\(result)")
  }

  /// `restic backup --one-file-system /` and `tar --one-file-system -cf -
  /// /` through the view of `/` store exactly what `list -x --included /`
  /// lists (but for /tmp, where restic's repository and cache are written
  /// while it runs).
  @Test func resticAndTarThroughTheViewOfSlashHoldWhatListLists() throws {
    let script = #"""
      mkdir -p /data/sub && echo secret >/data/sub/marked && echo kept >/data/sub/kept &&
        skipbackup mark /data/sub/marked || exit 9
      export RESTIC_PASSWORD=x RESTIC_CACHE_DIR=/tmp/cache
      restic init -q -r /tmp/restic || exit 9
      # /proc's entries by name: restic lstats each entry of a mount point it
      # will not enter, and a process that exits between the listing and the
      # lstat failed the backup (seen with six tests at a time).
      skipbackup run -q -x / -- restic backup -q -r /tmp/restic --one-file-system \
        --exclude '/proc/*' / || exit 9
      skipbackup run -q -x / -- tar --one-file-system -cf /tmp/root.tar / 2>/dev/null || exit 9
      echo "== listed"; skipbackup list -x --included /
      echo "== restic"; restic ls -q -r /tmp/restic latest
      echo "== tar"; tar -tf /tmp/root.tar
      """#
    let result = inFakeRoot(script)
    try #require(result.status == 0, "\(result)")
    func section(_ name: String, _ normalize: (String) -> String = { $0 }) -> Set<String> {
      Set(
        result.lines.drop { $0 != "== \(name)" }.dropFirst().prefix { !$0.hasPrefix("== ") }
          .map(normalize).filter { !$0.hasPrefix("/tmp/") })
    }
    let listed = section("listed")
    // tar stores "/" as "./" and each path without its leading slash.
    let tar = section("tar") { name in
      let trimmed = name.hasSuffix("/") ? String(name.dropLast()) : name
      return trimmed == "." ? "/" : "/" + trimmed
    }
    #expect(listed.contains("/data/sub/kept") && !listed.contains("/data/sub/marked"))
    #expect(listed.count > 40, "\(result)")
    // restic lists what is below the snapshot's root, not the root.
    let restic = section("restic").union(["/"])
    #expect(restic == listed, "restic: \(restic.symmetricDifference(listed))")
    #expect(tar == listed, "tar: \(tar.symmetricDifference(listed))")
  }

  /// restic --one-file-system compares every item's device with ROOT's:
  /// through any view it stores the included files, not only the
  /// directories (each file showed its layer's device without xino).
  @Test func resticOneFileSystemThroughTheViewStoresTheIncludedFiles() throws {
    let directory = try TemporaryDirectory()
    let root = directory.directory("root")
    for file in ["root/a", "root/d/b", "root/d/marked", "root/e/f/g"] { directory.file(file) }
    try check(skipbackup("mark", Argument(root + "/d/marked")))
    let script = #"""
      export RESTIC_REPOSITORY="$1/restic" RESTIC_PASSWORD=x RESTIC_CACHE_DIR="$1/cache"
      restic init -q && "$SB" run -q -x "$2" -- restic backup -q --one-file-system "$2" &&
        restic ls -q latest | grep "^$2/" | sed "s|^$2/||" | sort
      """#
    let result = run(
      ["sh", "-c", Argument(script), "sh", Argument(directory.path), Argument(root)],
      environment: ["SB": skipbackupPath])
    #expect(result.lines == ["a", "d", "d/b", "e", "e/f", "e/f/g"], "\(result)")
  }

  /// A marked item in /tmp (or /run), which COMMAND gets as it is, stops
  /// the view of / in one line that names it; COMMAND does not run.
  @Test func aMarkInADirectoryBoundBackStopsTheViewOfSlash() throws {
    let script = #"""
      mkdir -p /tmp/project/more && echo x >/tmp/project/cache && echo y >/tmp/project/more/y &&
        skipbackup mark /tmp/project/cache /tmp/project/more/y
      skipbackup run -q -x / -- touch /run/ran; echo "status $?"
      test -e /run/ran && echo "command ran"
      """#
    let result = inFakeRoot(script)
    #expect(result.lines == ["status 1"], "\(result)")
    #expect(
      result.errors.hasPrefix(
        "skipbackup: /tmp: holds 2 items excluded from backups (the first: /tmp/project/cache)"),
      "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
  }

  /// An ordinary user's overlay cannot cover a mount (the kernel refuses to
  /// clone a directory over a locked mount): a ROOT with a filesystem or a
  /// file mounted below it, `/` among them, is refused in one line naming
  /// the ROOT and the mount, with -x or without, and COMMAND does not run.
  @Test func anOrdinaryUserIsRefusedARootWithAMountBelowIt() throws {
    let fakeRoot = inFakeRoot(
      #"""
      mkdir -p /data && chown 65534:65534 /data
      setpriv --reuid=65534 --regid=65534 --clear-groups -- skipbackup run -q -x / -- touch /data/ran
      echo "status $?"; test -e /data/ran && echo "command ran"
      """#)
    #expect(fakeRoot.lines == ["status 1"], "\(fakeRoot)")
    #expect(
      fakeRoot.errors.hasPrefix("skipbackup: /: a filesystem is mounted below it, at /"),
      "\(fakeRoot)")
    #expect(fakeRoot.errors.split(separator: "\n").count == 1, "\(fakeRoot)")

    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t/mp" && echo f >"$T/t/f" && echo g >"$T/g" && chown -R 65534:65534 "$T" &&
        mount -t tmpfs none "$T/t/mp" || exit 9
      for option in -x --; do
        setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SB" run -q $option "$T/t" -- touch "$T/ran"
        echo "directory $option: $?"
      done
      umount "$T/t/mp" && mount --bind "$T/g" "$T/t/f" &&
        setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SB" run -q "$T/t" -- touch "$T/ran"
      echo "file: $?"; test -e "$T/ran" && echo "command ran"
      """#
    let result = inNamespace(script, directory)
    #expect(
      result.lines == ["directory -x: 1", "directory --: 1", "file: 1"], "\(result)")
    let errors = result.errors.split(separator: "\n")
    #expect(errors.count == 3, "\(result)")
    #expect(
      errors.prefix(2).allSatisfy {
        $0.hasPrefix(
          "skipbackup: \(directory.path)/t: a filesystem is mounted below it, at \(directory.path)/t/mp,"
        )
      }, "\(result)")
    #expect(errors.last?.contains("at \(directory.path)/t/f,") == true, "\(result)")
    #expect(errors.allSatisfy { $0.contains("or, on a btrfs subvolume of yours, add --snapshot") })
  }

  // MARK: - -x and mount points

  /// With -x, a directory where another filesystem is mounted is the empty
  /// directory `list -x` lists: the files it held before the mount, the
  /// marked one among them, are not in the view; `stat` shows it as users
  /// see it (the mounted filesystem's root), and the docs' tar recipe
  /// stores none of them.
  @Test func withDashXAMountPointIsTheEmptyDirectoryListLists() throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t/mp/sub" && echo s >"$T/t/mp/secret" && echo o >"$T/t/mp/other" &&
        echo k >"$T/t/keep" && "$SB" mark "$T/t/mp/secret" &&
        mount -t tmpfs -o mode=1750,uid=12,gid=34 none "$T/t/mp" && echo m >"$T/t/mp/mounted" &&
        touch -d 2003-04-05 "$T/t/mp" || exit 9
      echo "real $(stat -c '%a %u %g %Y' "$T/t/mp")"
      "$SB" run -q -x "$T/t" -- sh -c '
        echo "view $(stat -c "%a %u %g %Y" "$1/mp")"; ls -A "$1/mp"; echo "listed"
        cat "$1/mp/secret"; find "$1" | sort >"$2/viewed"' sh "$T/t" "$T"
      echo "status $?"
      "$SB" list -x --included "$T/t" | sort >"$T/listed"
      cmp "$T/viewed" "$T/listed" && echo "same as list -x"
      "$SB" run -q -x "$T/t" -- tar --create --file="$T/t.tar" -C "$T/t" . && tar -tf "$T/t.tar"
      """#
    let result = inNamespace(script, directory)
    #expect(result.lines.contains("status 0"), "\(result)")
    let real = result.lines.first { $0.hasPrefix("real ") }
    #expect(real == "real 1750 12 34 1049500800", "\(result)")
    #expect(
      result.lines.first { $0.hasPrefix("view ") } == real.map { "view" + $0.dropFirst(4) },
      "\(result)")
    // ls -A of the mount point lists nothing before "listed".
    #expect(result.lines.firstIndex(of: "listed") == 2, "\(result)")
    #expect(result.errors.contains("mp/secret: No such file"), "\(result)")
    #expect(result.lines.contains("same as list -x"), "\(result)")
    #expect(result.lines.contains("./mp/"), "\(result)")
    #expect(!result.output.contains("secret") && !result.output.contains("other"), "\(result)")
  }

  /// A btrfs subvolume nested in ROOT's is no mount, but it has a device
  /// of its own, so `find -xdev`, `list -x` and each tool's
  /// --one-file-system stop there, and the overlay, which reads the one
  /// filesystem, shows it whole. With -x it is the empty directory
  /// `list -x` lists, its marked file unread; without, the view shows it
  /// as `list` walks it.
  @Test func withDashXANestedSubvolumeIsTheEmptyDirectoryListLists() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir "$1/t" && echo o >"$1/t/other" && btrfs -q subvolume create "$1/t/inner" &&
        echo s >"$1/t/inner/secret" && echo k >"$1/t/inner/kept" &&
        "$SB" mark "$1/t/inner/secret" && chmod 750 "$1/t/inner" || exit 9
      for x in -x ""; do
        "$SB" run -q $x "$1/t" -- sh -c '
          echo "mode $(stat -c %a "$1/inner")"; ls -A "$1/inner"; echo "listed"
          cat "$1/inner/secret"; find "$1" | sort >"$2/viewed"' sh "$1/t" "$T"
        echo "status $?"
        "$SB" list $x --included "$1/t" | sort >"$T/listed"
        cmp "$T/viewed" "$T/listed" && echo "same as list $x"
      done
      "$SB" run -q -x "$1/t" -- tar --create --file="$T/t.tar" -C "$1/t" . && tar -tf "$T/t.tar"
      """#
    let result = inNamespace(script, directory, [Argument(subvolume)])
    let lines = result.lines
    #expect(lines.filter { $0 == "status 0" }.count == 2, "\(result)")
    #expect(lines.prefix(2) == ["mode 750", "listed"], "\(result)")
    #expect(lines.contains("same as list -x"), "\(result)")
    #expect(lines.contains("same as list "), "\(result)")
    // Without -x, the nested subvolume's unmarked file, and only that.
    #expect(lines.filter { $0 == "kept" }.count == 1, "\(result)")
    #expect(lines.contains("./inner/") && !lines.contains("./inner/kept"), "\(result)")
    #expect(result.errors.components(separatedBy: "secret: No such file").count == 3, "\(result)")
    #expect(!result.output.contains("secret"), "\(result)")
  }

  /// With -x, a ROOT inside a nested subvolume of another ROOT, which that
  /// ROOT's view shows empty, has no place in it: one line saying so,
  /// COMMAND not run, live or frozen. The nested subvolume itself as a
  /// ROOT, or the same ROOTs without -x, are shown.
  @Test func withDashXARootInsideAnotherRootsEmptiedDirectoryIsRefused() throws {
    let image = try BtrfsImage()
    let outer = try image.subvolume("sv")
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(outer + "/n")]))
    try check(run(["mkdir", "-p", Argument(outer + "/n/x")]))
    Make.file(Bytes(outer + "/n/x/f"))
    for options in [["-x"], ["-x", "--snapshot"]] {
      let refused = skipbackup(
        arguments: ["run", "-q"] + options.map { Argument($0) } + [
          Argument(outer), Argument(outer + "/n/x"), "--", "echo", "ran",
        ])
      #expect(refused.status == 1 && refused.output.isEmpty, "\(options): \(refused)")
      #expect(
        refused.errors == "skipbackup: \(outer)/n/x: is inside \(outer)/n, where another "
          + "filesystem begins, which -x shows as the empty directory list -x lists for "
          + "\(outer); give it in a run of its own, or run without -x; nothing was run\n",
        "\(options): \(refused)")
    }
    for options in [["-x"], [], ["--snapshot"]] {
      let root = options.isEmpty || options == ["--snapshot"] ? outer + "/n/x" : outer + "/n"
      let shown = skipbackup(
        arguments: ["run", "-q"] + options.map { Argument($0) } + [
          Argument(outer), Argument(root), "--", "find", Argument(outer + "/n/x"),
        ])
      #expect(
        shown.status == 0 && shown.lines == [outer + "/n/x", outer + "/n/x/f"],
        "\(options): \(shown)")
    }
  }

  /// Without -x, a subvolume nested in ROOT's is shown in a view of its
  /// own, with a device of its own as on the real tree. In one overlay its
  /// files had the device and inode numbers of files outside it (btrfs
  /// numbers each subvolume's inodes from 257), and tar and rsync -H stored
  /// the one as a hard link to the other, restoring the wrong contents. A
  /// read-only snapshot nested in ROOT (snapper's `.snapshots`) has the
  /// very inode numbers of the files it copies.
  @Test func aNestedSubvolumesFilesAreNoHardLinksOfTheFilesOutside() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let directory = try TemporaryDirectory()
    let script = #"""
      cd "$1" && mkdir t && echo outer >t/f && ln t/f t/f2 &&
        btrfs -q subvolume create t/n && echo nested >t/n/g && ln t/n/g t/n/g2 &&
        echo s >t/n/secret && "$SB" mark t/n/secret &&
        btrfs -q subvolume snapshot -r t/n t/frozen || exit 9
      "$SB" run -q "$1/t" -- sh -c 'stat -c %d "$1/f" "$1/n/g" "$1/frozen/g" | sort -u | wc -l'         sh "$1/t"
      "$SB" run -q "$1/t" -- tar -cf "$T/t.tar" -C "$1/t" . && mkdir "$T/out" &&
        tar -xf "$T/t.tar" -C "$T/out" && cat "$T/out/f" "$T/out/n/g" "$T/out/frozen/g" &&
        stat -c "links %h" "$T/out/f" "$T/out/n/g" "$T/out/frozen/g"
      "$SB" run -q "$1/t" -- rsync -aH "$1/t/" "$T/r/" && cat "$T/r/f" "$T/r/n/g" &&
        stat -c "links %h" "$T/r/f" "$T/r/n/g"
      ls "$T/out/n" "$T/out/frozen" "$T/r/n"
      """#
    let result = inNamespace(script, directory, [Argument(subvolume)])
    #expect(
      result.lines == [
        "3", "outer", "nested", "nested", "links 2", "links 2", "links 2", "outer", "nested",
        "links 2", "links 2", "\(directory.path)/out/frozen:", "g", "g2", "",
        "\(directory.path)/out/n:", "g", "g2", "", "\(directory.path)/r/n:", "g", "g2",
      ], "\(result)")
  }

  /// A subvolume below a filesystem mounted in ROOT (a user's subvolume
  /// in /home, mounted from @home, below ROOT /; here a subvolume bound
  /// into ROOT, and one bound onto itself) gets a view of its own too.
  @Test func aSubvolumeBelowAMountInRootGetsAViewOfItsOwn() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let directory = try TemporaryDirectory()
    let script = #"""
      cd "$1" && btrfs -q subvolume create other && echo O >other/of && ln other/of other/of2 &&
        btrfs -q subvolume create other/s && echo S >other/s/sf && ln other/s/sf other/s/sf2 &&
        mkdir -p t/b && mount --bind "$1/other" "$1/t/b" &&
        btrfs -q subvolume create t/n && btrfs -q subvolume create t/n/m && echo M >t/n/m/f &&
        mount --bind "$1/t/n" "$1/t/n" || exit 9
      "$SB" run -q "$1/t" -- stat -c %d "$1/t/b/of" "$1/t/b/s/sf" "$1/t/n/m/f" | sort -u | wc -l
      "$SB" run -q "$1/t" -- tar -cf "$T/t.tar" -C "$1/t" . && tar -tvf "$T/t.tar" |
        awk '/ link to /{print $(NF-3), "->", $NF}'
      """#
    let result = inNamespace(script, directory, [Argument(subvolume)])
    #expect(
      result.lines == ["3", "./b/of2 -> ./b/of", "./b/s/sf2 -> ./b/s/sf"], "\(result)")
  }

  /// An ordinary user's tree holding a marked subvolume they may not read
  /// (root's, mode 0700): hidden unread, as `list` leaves it.
  @Test func anOrdinaryUsersUnreadableMarkedSubvolumeIsHiddenUnread() throws {
    let image = try BtrfsImage()
    chmod(image.directory.path, 0o755)
    let home = try image.subvolume("home", owner: "nobody:nogroup")
    Make.file(Bytes(home + "/kept"))
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(home + "/rootcache")]))
    chmod(home + "/rootcache", 0o700)
    try check(skipbackup("mark", Argument(home + "/rootcache")))
    let listed = try check(skipbackup("list", "--included", Argument(home), asNobody: true))
    #expect(listed.lines == [home, home + "/kept"], "\(listed)")
    let viewed = skipbackup(
      "run", "-q", Argument(home), "--", "find", Argument(home), asNobody: true)
    #expect(viewed.status == 0 && viewed.lines.sorted() == listed.lines, "\(viewed)")
  }

  // MARK: - A file mounted on a file

  /// A file mounted on a file shows in the view as `status` and `list` read
  /// it: the mounted file, its content, its attributes and its marks, with
  /// -x or without. A marked file under an unmarked mounted one is shown
  /// as the mounted file; an unmarked file under a marked mounted one is
  /// hidden. The bound file is read-only like the rest of the view.
  @Test(arguments: ["-x", ""])
  func aFileMountedOnAFileShowsTheMountedFileWithItsMarks(option: String) throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t" "$T/outside" && echo bottom >"$T/t/f" && "$SB" mark "$T/t/f" &&
        echo top >"$T/outside/top" && setfattr -n user.note -v top "$T/outside/top" &&
        mount --bind "$T/outside/top" "$T/t/f" &&
        echo plain >"$T/t/g" && echo hidden >"$T/outside/marked" && "$SB" mark "$T/outside/marked" &&
        mount --bind "$T/outside/marked" "$T/t/g" || exit 9
      "$SB" status "$T/t/f" "$T/t/g"
      "$SB" run -q $X "$T/t" -- sh -c '
        cat "$1/f"; getfattr --absolute-names -d "$1/f"; ls "$1"; echo x >>"$1/f"
        find "$1" | sort >"$2/viewed"' sh "$T/t" "$T"
      echo "status $?"
      "$SB" list $X --included "$T/t" | sort >"$T/listed"
      cmp "$T/viewed" "$T/listed" && echo "same as list"
      """#
    let result = inNamespace(script, directory, environment: ["X": option])
    #expect(result.lines.contains("status 0"), "\(result)")
    #expect(result.lines.contains { $0.hasPrefix("[Included]") && $0.hasSuffix("/t/f") })
    #expect(result.lines.contains { $0.hasPrefix("[Excluded]") && $0.hasSuffix("/t/g") })
    #expect(result.lines.contains("top") && !result.lines.contains("bottom"), "\(result)")
    #expect(result.lines.contains("user.note=\"top\""), "\(result)")
    #expect(!result.output.contains("com.apple"), "the bottom file's mark: \(result)")
    #expect(!result.lines.contains("g") && !result.output.contains("hidden"), "\(result)")
    #expect(result.errors.contains("Read-only file system"), "\(result)")
    #expect(result.lines.contains("same as list"), "\(result)")
  }

  // MARK: - Items the overlay takes for its own

  /// A character device 0/0 (a whiteout, as container storage holds) and,
  /// as root, a `trusted.overlay.*` attribute on a directory, a file or a
  /// link are refused by name, one line each with the fallback recipe; the
  /// same inside a marked directory is hidden and needs nothing; a
  /// `user.overlay.*` attribute, which an overlay without `userxattr`
  /// shows as it is, is shown.
  @Test func anItemTheOverlayTakesForItsOwnIsRefusedByName() throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t/layer" "$T/t/opaque" "$T/t/marked" && mknod "$T/t/layer/whiteout" c 0 0 &&
        echo f >"$T/t/opaque/f" && setfattr -n trusted.overlay.opaque -v y "$T/t/opaque" &&
        ln -s f "$T/t/opaque/link" && setfattr -h -n trusted.overlay.origin -v 0 "$T/t/opaque/link" &&
        echo u >"$T/t/user" && setfattr -n user.overlay.redirect -v x "$T/t/user" &&
        mknod "$T/t/marked/whiteout" c 0 0 && "$SB" mark "$T/t/marked" || exit 9
      "$SB" run -q "$T/t" -- touch "$T/ran"; echo "status $?"; test -e "$T/ran" && echo ran
      rm -r "$T/t/layer" && setfattr -x trusted.overlay.opaque "$T/t/opaque" &&
        setfattr -h -x trusted.overlay.origin "$T/t/opaque/link" &&
        "$SB" run -q "$T/t" -- getfattr --absolute-names -n user.overlay.redirect "$T/t/user"
      echo "status $?"
      """#
    let result = inNamespace(script, directory)
    #expect(result.lines.first == "status 1", "\(result)")
    #expect(!result.lines.contains("ran"), "COMMAND ran: \(result)")
    let errors = result.errors.split(separator: "\n").map(String.init)
    let root = directory.path + "/t"
    #expect(errors.count == 3, "\(result)")
    for (item, says) in [
      ("/layer/whiteout: a character device 0/0", "whiteout"),
      ("/opaque: its attribute trusted.overlay.opaque", "overlayfs's own"),
      ("/opaque/link: its attribute trusted.overlay.origin", "overlayfs's own"),
    ] {
      let line = errors.first { $0.hasPrefix("skipbackup: \(root)\(item)") }
      #expect(line?.contains(says) == true, "\(item): \(result)")
      #expect(line?.contains("skipbackup export") == true, "\(item): \(result)")
    }
    #expect(result.lines.contains("user.overlay.redirect=\"x\""), "\(result)")
    #expect(result.lines.last == "status 0", "\(result)")
  }

  /// As an ordinary user the overlay keeps `user.overlay.*` (`userxattr`):
  /// a file that carries one, and a character device 0/0, are refused by
  /// name; COMMAND does not run.
  @Test func anOrdinaryUsersOverlayAttributeIsRefusedByName() throws {
    let directory = try TemporaryDirectory()
    let root = directory.directory("t")
    directory.file("t/f", "f")
    setfattr(root + "/f", "user.overlay.opaque", hex: "79")
    try check(run(["mknod", Argument(root + "/whiteout"), "c", "0", "0"]))
    try check(run(["chown", "-R", "nobody:nogroup", Argument(directory.path)]))
    let result = skipbackup(
      "run", "-q", Argument(root), "--", "touch", Argument(directory.path + "/ran"),
      asNobody: true)
    #expect(result.status == 1, "\(result)")
    let errors = result.errors.split(separator: "\n")
    #expect(errors.count == 2, "\(result)")
    #expect(
      errors.contains { $0.hasPrefix("skipbackup: \(root)/f: its attribute user.overlay.opaque") },
      "\(result)")
    #expect(
      errors.contains { $0.hasPrefix("skipbackup: \(root)/whiteout: a character device 0/0") },
      "\(result)")
    #expect(access(directory.path + "/ran", F_OK) != 0, "COMMAND ran")
  }

  // MARK: - Inode flags

  /// Merged directories (ROOT, and those that hold a marked item) carry the
  /// real directory's nodump, noatime and immutable flags: `lsattr -d` in
  /// the view shows what it shows on the real tree, and borg
  /// `--exclude-nodump` and bsdtar `--nodump` through the view leave out
  /// the directory they leave out without it. On a tmpfs, whose
  /// directories have no flag of their own (ext4 shows `e` on each).
  @Test func mergedDirectoriesCarryTheRealInodeFlags() throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t" && mount -t tmpfs none "$T/t" &&
        mkdir -p "$T/t/nodump" "$T/t/noatime" "$T/t/fixed" "$T/t/plain" &&
        for d in nodump noatime fixed plain; do echo m >"$T/t/$d/marked"; echo k >"$T/t/$d/kept"; done &&
        "$SB" mark "$T/t/nodump/marked" "$T/t/noatime/marked" "$T/t/fixed/marked" "$T/t/plain/marked" &&
        chattr +d "$T/t/nodump" && chattr +A "$T/t/noatime" "$T/t" && chattr +i "$T/t/fixed" || exit 9
      cd "$T/t" && lsattr -d nodump noatime fixed plain . >"$T/real" && cd / &&
        "$SB" run -q "$T/t" -- sh -c 'cd "$1" && lsattr -d nodump noatime fixed plain .' sh "$T/t" >"$T/viewed"
      echo "lsattr $?"; cat "$T/real"
      cmp "$T/real" "$T/viewed" && echo "lsattr same"
      export BORG_REPO="$T/borg" BORG_PASSPHRASE="" BORG_BASE_DIR="$T/base"
      borg init -e none && "$SB" run -q "$T/t" -- borg create --exclude-nodump ::view "$T/t" &&
        borg create --exclude-nodump ::real "$T/t" &&
        borg list --short ::view | sort >"$T/borg-view" &&
        borg list --short ::real | grep -v /marked | sort >"$T/borg-real" &&
        cmp "$T/borg-view" "$T/borg-real" && ! grep nodump "$T/borg-view" && echo "borg same"
      "$SB" run -q "$T/t" -- bsdtar --nodump -cf "$T/view.tar" -C "$T/t" . &&
        bsdtar --nodump -cf "$T/real.tar" -C "$T/t" . &&
        bsdtar -tf "$T/view.tar" | sort >"$T/tar-view" &&
        bsdtar -tf "$T/real.tar" | grep -v /marked | sort >"$T/tar-real" &&
        cmp "$T/tar-view" "$T/tar-real" && ! grep nodump "$T/tar-view" && echo "bsdtar same"
      chattr -i "$T/t/fixed"
      """#
    let result = inNamespace(script, directory)
    #expect(result.lines.contains("lsattr 0"), "\(result)")
    #expect(result.lines.contains { $0.hasPrefix("------d") && $0.hasSuffix(" nodump") })
    #expect(result.lines.contains { $0.hasPrefix("----i-") && $0.hasSuffix(" fixed") })
    for line in ["lsattr same", "borg same", "bsdtar same"] {
      #expect(result.lines.contains(line), "\(line): \(result)")
    }
  }

  /// As an ordinary user: nodump and noatime carry to the layer (the
  /// directory's owner may set them); immutable and append-only need
  /// CAP_LINUX_IMMUTABLE, which no user namespace grants, so a merged
  /// directory that has one is refused in one line.
  @Test func anOrdinaryUserGetsNodumpAndIsRefusedImmutableAndOthersACLs() throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t" && mount -t tmpfs -o mode=755 none "$T/t" && mkdir -p "$T/t/d" &&
        echo m >"$T/t/d/marked" && echo k >"$T/t/d/kept" && "$SB" mark "$T/t/d/marked" &&
        chown -R 65534:65534 "$T" && chattr +dA "$T/t/d" || exit 9
      as() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
      as "$SB" run -q "$T/t" -- lsattr -d "$T/t/d"; echo "status $?"
      chattr +a "$T/t/d" && as "$SB" run -q "$T/t" -- touch "$T/ran"; echo "status $?"
      chattr -a "$T/t/d"
      setfacl -m u:1234:rwx "$T/t/d" && as "$SB" run -q "$T/t" -- touch "$T/ran"; echo "status $?"
      test -e "$T/ran" && echo ran
      """#
    let result = inNamespace(script, directory)
    #expect(result.lines.first?.hasPrefix("------dA") == true, "\(result)")
    #expect(result.lines.dropFirst() == ["status 0", "status 1", "status 1"], "\(result)")
    let errors = result.errors.split(separator: "\n")
    #expect(errors.count == 2, "\(result)")
    #expect(
      errors.first?.hasPrefix(
        "skipbackup: \(directory.path)/t/d: its immutable or append-only flag") == true,
      "\(result)")
    // An ACL entry of another user's cannot be given to the layer either.
    #expect(
      errors.last?.hasPrefix(
        "skipbackup: \(directory.path)/t/d: its ACL names a user or group other than yours")
        == true, "\(result)")
  }

  // MARK: - The real mount's options

  /// The view carries nosuid, nodev, noexec and noatime as the real mount
  /// has them: a setuid program on a nosuid mount runs with the caller's
  /// ids, a device node on a nodev mount cannot be opened, a program on a
  /// noexec mount cannot be run, through the view as on the real tree;
  /// the same on a mount without them works. A filesystem mounted inside
  /// ROOT gets its own mount's options in its own view.
  @Test func theViewCarriesTheRealMountsOptions() throws {
    let directory = try TemporaryDirectory()
    let probe = #"""
      for d in "$1" "$1/closed"; do
        echo "$d suid $(setpriv --reuid=65534 "$d/id" -u)"
        head -c 1 "$d/zero" | wc -c | sed "s|^|$d dev |"
      done
      "$1/noexec/true" && echo "$1/noexec exec"
      grep " $1/closed " /proc/self/mountinfo | tail -n 1 | grep -c noatime | sed 's/^/noatime /'
      """#
    let setup = #"""
      mkdir -p "$T/open" && mount -t tmpfs -o mode=755 none "$T/open" &&
        mkdir -p "$T/open/closed" && mount -t tmpfs -o mode=755,nosuid,nodev,noatime none "$T/open/closed" &&
        mkdir -p "$T/open/noexec" && mount -t tmpfs -o mode=755,noexec none "$T/open/noexec" || exit 9
      for d in "$T/open" "$T/open/closed"; do
        cp /usr/bin/id "$d/id" && chmod 4755 "$d/id" && mknod -m 666 "$d/zero" c 1 5 &&
          echo m >"$d/marked" && "$SB" mark "$d/marked" || exit 9
      done
      cp /usr/bin/true "$T/open/noexec/true" && echo m >"$T/open/noexec/marked" &&
        "$SB" mark "$T/open/noexec/marked" || exit 9
      echo "real:"; sh -c "$PROBE" sh "$T/open" 2>&1
      echo "view:"; "$SB" run -q "$T/open" -- sh -c "$PROBE" sh "$T/open" 2>&1
      """#
    let result = inNamespace(setup, directory, [], environment: ["PROBE": probe])
    let real = Array(result.lines.drop { $0 != "real:" }.dropFirst().prefix { $0 != "view:" })
    let viewed = Array(result.lines.drop { $0 != "view:" }.dropFirst())
    let open = directory.path + "/open"
    #expect(real.contains("\(open) suid 0"), "\(result)")
    #expect(real.contains("\(open)/closed suid 65534"), "\(result)")
    #expect(real.contains("\(open) dev 1"), "\(result)")
    #expect(
      real.contains { $0.contains("\(open)/closed/zero' for reading: Permission denied") },
      "\(result)")
    #expect(real.contains { $0.contains("\(open)/noexec/true: Permission denied") }, "\(result)")
    #expect(real.contains("noatime 1"), "\(result)")
    // Through the view, the same, line for line.
    #expect(viewed == real, "real \(real)\nview \(viewed)")
  }

  // MARK: - The kernel's refusals

  /// The calls these shapes add, forced to fail through the debug build's
  /// mocking: one line naming the call, status 1, COMMAND never run.
  @Test(arguments: [
    ("open_tree:EPERM", "cannot mount the view (open_tree"),
    ("mount_setattr:EPERM", "cannot mount the view (mount_setattr"),
    ("fstatfs:EIO", "(fstatfs: "),
    ("ioctl(FS_IOC_SETFLAGS):EIO", "(ioctl(FS_IOC_SETFLAGS): "),
  ])
  func aRefusalOfTheseCallsIsOneLineAndTheCommandNeverRuns(forced: String, says: String) throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t/d" && echo m >"$T/t/d/marked" && "$SB" mark "$T/t/d/marked" &&
        chattr +d "$T/t/d" && echo f >"$T/t/f" && echo g >"$T/g" && mount --bind "$T/g" "$T/t/f" ||
        exit 9
      SKIPBACKUP_FORCE_ERRNO="$1" "$SB" run -q "$T/t" -- touch "$T/ran"; echo "status $?"
      test -e "$T/ran" && echo ran
      """#
    let result = inNamespace(script, directory, [Argument(forced)])
    #expect(result.lines == ["status 1"], "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
    #expect(result.errors.contains(says), "\(result)")
  }

  /// The view of / entered as COMMAND's root: a refusal there is one line.
  @Test(arguments: [
    ("chroot:EPERM", "cannot make the view of / COMMAND's root directory (chroot"),
    ("fchdir:EPERM", "cannot make the view of / COMMAND's root directory (fchdir"),
    ("open_tree:EPERM", "/proc: cannot mount the view (open_tree"),
  ])
  func aRefusalOfTheViewOfSlashIsOneLine(forced: String, says: String) throws {
    let script = #"""
      SKIPBACKUP_FORCE_ERRNO="$FORCED" skipbackup run -q -x / -- touch /run/ran; echo "status $?"
      test -e /run/ran && echo ran
      """#
    let result = inFakeRoot(script, environment: ["FORCED": forced])
    #expect(result.lines == ["status 1"], "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
    #expect(result.errors.contains(says), "\(result)")
  }

  // MARK: - Helpers

  /// Runs `script` with sh in a mount namespace of its own (`unshare -m`,
  /// private), with `$SB` the tool and `$T` the test's directory; further
  /// arguments are `$1`, `$2` ...
  private func inNamespace(
    _ script: String, _ directory: TemporaryDirectory, _ arguments: [Argument] = [],
    environment: [String: String] = [:]
  ) -> ProcessResult {
    var environment = environment
    environment["SB"] = skipbackupPath
    environment["T"] = directory.path
    return run(
      ["unshare", "-m", "--propagation", "private", "sh", "-c", Argument(script), "sh"]
        + arguments, environment: environment)
  }

  /// Runs `script` with sh as root in a root directory of its own: a
  /// tmpfs made `/` by pivot_root in a private mount namespace, holding
  /// the programs the tests call (with their libraries, found by ldd),
  /// skipbackup among them, with /proc, /sys and /dev mounted and /run a
  /// tmpfs, as on a system; /tmp is a directory of the root's filesystem.
  /// `run -x /` then walks this small tree, not the host's.
  private func inFakeRoot(
    _ script: String, environment: [String: String] = [:]
  ) -> ProcessResult {
    let directory = try! TemporaryDirectory(prefix: "skipbackup-root")
    let harness = #"""
      set -e
      R="$T/root"
      mkdir "$R" && mount -t tmpfs -o mode=755 none "$R"
      copy() {
        mkdir -p "$R$(dirname "$2")" && cp -L "$1" "$R$2"
        for library in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
          mkdir -p "$R$(dirname "$library")" && cp -L "$library" "$R$library"
        done
      }
      for program in sh cat ls stat touch id setpriv env head wc mkdir unshare chroot umount \
        rmdir grep sed sort diff tar restic mknod chown tail; do
        copy "$(which "$program")" "$(which "$program")"
      done
      copy "$SB" /usr/bin/skipbackup
      mkdir -p "$R/proc" "$R/sys" "$R/dev" "$R/run" "$R/tmp" "$R/old" "$R/etc" "$R/root"
      chmod 1777 "$R/tmp"
      grep -E '^(root|nobody):' /etc/passwd >"$R/etc/passwd"
      grep -E '^(root|nogroup):' /etc/group >"$R/etc/group"
      mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" && mount --rbind /sys "$R/sys"
      mount -t tmpfs -o mode=755 none "$R/run"
      cd "$R" && pivot_root . old
      set +e
      exec chroot . sh -c 'umount -l /old && rmdir /old && cd / && HOME=/root exec sh -c "$SCRIPT"'
      """#
    var environment = environment
    environment["SB"] = skipbackupPath
    environment["T"] = directory.path
    environment["SCRIPT"] = script
    environment["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return run(
      ["unshare", "-m", "--propagation", "private", "sh", "-c", Argument(harness)],
      environment: environment)
  }
}
