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
