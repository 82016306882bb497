import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `skipbackup run` at every shape a mount takes around and below a ROOT.
/// Every filesystem is made in the test's own mount namespace (`unshare
/// -m`), so nothing reaches the host's mount table.
@Suite(.serialized) struct RunMountShapeTests {
  // MARK: - Devices and the real mount's options

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
  @Test func anOrdinaryUserGetsNodumpAndIsRefusedImmutable() throws {
    let directory = try TemporaryDirectory()
    let script = #"""
      mkdir -p "$T/t" && mount -t tmpfs -o mode=755 none "$T/t" && mkdir -p "$T/t/d" &&
        echo m >"$T/t/d/marked" && echo k >"$T/t/d/kept" && "$SB" mark "$T/t/d/marked" &&
        chown -R 65534:65534 "$T" && chattr +dA "$T/t/d" || exit 9
      as() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
      as "$SB" run -q "$T/t" -- lsattr -d "$T/t/d"; echo "status $?"
      chattr +a "$T/t/d" && as "$SB" run -q "$T/t" -- touch "$T/ran"; echo "status $?"
      chattr -a "$T/t/d"; test -e "$T/ran" && echo ran
      """#
    let result = inNamespace(script, directory)
    #expect(result.lines.first?.hasPrefix("------dA") == true, "\(result)")
    #expect(result.lines.dropFirst() == ["status 0", "status 1"], "\(result)")
    #expect(
      result.errors.hasPrefix(
        "skipbackup: \(directory.path)/t/d: its immutable or append-only flag"),
      "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
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
}
