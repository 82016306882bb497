import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `run --snapshot` as root over a tree an ordinary user (nobody) owns, on
/// a loop-mounted btrfs image, with that user swapping a directory of
/// theirs for a symbolic link to one of root's while the run goes on: at
/// one exact point of the run (`SKIPBACKUP_RACE`, which runs the swap, as
/// nobody, just before the Nth call of a system call), and in a loop in the
/// background. Root's COMMAND never sees the user's snapshot over root's
/// directory, nor root's subvolume in the user's tree; a signal before
/// COMMAND starts leaves no snapshot.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct SnapshotAdversaryTests {
  /// A btrfs image with the subvolume `home`, which nobody owns, holding
  /// `a/b/mine` (nobody's), and root's directory `V`, holding `b/roots`.
  private struct Place {
    let image: BtrfsImage
    let home: String
    var v: String { image.mountPoint + "/V" }
    var root: String { home + "/a/b" }

    init() throws {
      image = try BtrfsImage()
      chmod(image.directory.path, 0o755)
      home = try image.subvolume("home")
      Make.directory(Bytes(home + "/a"))
      Make.directory(Bytes(home + "/a/b"))
      Make.file(Bytes(home + "/a/b/mine"))
      try check(run(["chown", "-R", "nobody:nogroup", Argument(home)]))
      Make.directory(Bytes(v))
      Make.directory(Bytes(v + "/b"))
      Make.file(Bytes(v + "/b/roots"))
    }

    /// The user's subvolume `home/a/sub`, holding `users`, and root's
    /// `V/sub`, holding `roots-secret`, in `V` made 0700.
    func makeSubvolumes() throws {
      try check(run(["btrfs", "-q", "subvolume", "create", Argument(home + "/a/sub")]))
      Make.file(Bytes(home + "/a/sub/users"))
      try check(run(["chown", "-R", "nobody:nogroup", Argument(home + "/a/sub")]))
      try check(run(["btrfs", "-q", "subvolume", "create", Argument(v + "/sub")]))
      Make.file(Bytes(v + "/sub/roots-secret"))
      chmod(v, 0o700)
    }

    /// A shell script, as nobody, that swaps `home/a` for a link to `V`.
    var swap: String {
      let script = image.directory.path + "/swap.sh"
      FileManager.default.createFile(
        atPath: script,
        contents: Data(
          """
          exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- sh -c '
            mv "\(home)/a" "\(home)/a.real" && ln -s "\(v)" "\(home)/a"'

          """.utf8))
      return script
    }
  }

  /// Attack: the view of the user's snapshot mounted over root's `V/b`,
  /// through `a` swapped for a link to `V` after the snapshot was taken.
  /// Refused in one line naming the ROOT; `V/b` shows root's own file.
  @Test func aLinkSwappedAboveRootAfterTheSnapshotMovesNoViewOntoRootsDirectory() throws {
    let place = try Place()
    let subvolumes = try place.image.subvolumes()
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(place.root), "--", "sh",
        "-c", Argument("ls '\(place.v)/b'"),
      ], environment: ["SKIPBACKUP_RACE": "fork:1:" + place.swap])
    #expect(!result.output.contains("mine"), "root's V/b showed the user's files: \(result)")
    #expect(result.status == 1, "\(result)")
    #expect(
      result.errors == "skipbackup: \(place.root): a directory on the way to it is a symbolic "
        + "link now, or another directory, where it was a directory when the path was resolved: "
        + "the owner of the directory above it can swap it, so nothing is read or mounted there; "
        + "nothing was run\n", "\(result)")
    #expect(try place.image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// Attack: root's subvolume `V/sub`, in a 0700 directory, shown at the
  /// user's `home/a/sub`, through `a` swapped for a link to `V` once the
  /// snapshot of `home` is taken and before that of the user's nested
  /// subvolume `a/sub` (at each look at a subvolume's flags, the swap made
  /// once, when the snapshot of `home` is there), and swapped back before
  /// COMMAND's view is mounted. Refused in one line naming `a/sub` when
  /// the swap comes before `a/sub` is resolved; after, every step reaches
  /// the user's own subvolume by its descriptor, and the view shows it.
  @Test func aLinkSwappedAboveANestedSubvolumeShowsNoneOfRoots() throws {
    let place = try Place()
    try place.makeSubvolumes()
    let subvolumes = try place.image.subvolumes()
    let once = place.image.directory.path + "/swap-once.sh"
    FileManager.default.createFile(
      atPath: once,
      contents: Data(
        """
        ls -d '\(place.image.mountPoint)'/.skipbackup-snapshots*/run-*[0-9] >/dev/null 2>&1 || exit 0
        [ -L '\(place.home)/a' ] && exit 0
        exec sh '\(place.swap)'

        """.utf8))
    let back = place.image.directory.path + "/swap-back.sh"
    FileManager.default.createFile(
      atPath: back,
      contents: Data(
        """
        [ -L '\(place.home)/a' ] || exit 0
        rm '\(place.home)/a' && mv '\(place.home)/a.real' '\(place.home)/a'

        """.utf8))
    let races =
      (2...16).map { "ioctl(BTRFS_IOC_SUBVOL_GETFLAGS):\($0):" + once } + ["fork:1:" + back]
    let result = run(
      [
        Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(place.home), "--", "find",
        Argument(place.home),
      ], environment: ["SKIPBACKUP_RACE": races.joined(separator: ",")])
    #expect(!result.output.contains("roots-secret"), "root's subvolume showed: \(result)")
    if result.status == 0 {
      // The swap came after `a/sub` was resolved: its snapshot was taken,
      // and its view mounted, from the descriptor of the user's own.
      #expect(result.output.contains("\(place.home)/a/sub/users\n"), "\(result)")
    } else {
      #expect(result.status == 1, "\(result)")
      #expect(
        result.errors.hasPrefix("skipbackup: \(place.home)/a/sub: a directory on the way to it"),
        "\(result)")
    }
    _ = run(["sh", Argument(back)])
    #expect(try place.image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// The same swap, by the user in a loop while root runs again and again:
  /// COMMAND never lists root's file; each run either shows the user's
  /// tree or is refused; no snapshot is left.
  @Test func aSwapInALoopNeverShowsRootsFiles() throws {
    let place = try Place()
    try place.makeSubvolumes()
    let subvolumes = try place.image.subvolumes()
    let stop = place.image.directory.path + "/stop"
    let attacker = BackgroundThread { [home = place.home, v = place.v] in
      _ = run(
        [
          "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "sh", "-c",
          Argument(
            """
            cd '\(home)'
            while [ ! -e '\(stop)' ]; do
              mv a a.real && ln -s '\(v)' a
              rm a && mv a.real a
            done
            """),
        ])
    }
    var (shown, refused, ran) = (0, 0, 0)
    let runs = 40
    for index in 0..<runs {
      // ROOT home (the nested subvolume's shape) and ROOT home/a/b (the
      // view's mount point's), in turn.
      let root = index % 2 == 0 ? place.home : place.root
      let result = skipbackup(
        "run", "-q", "--snapshot", Argument(root), "--", "sh", "-c",
        Argument(
          "ls '\(place.v)/b' | sed 's/^/V: /'; ls -R '\(place.home)' 2>/dev/null; true"))
      if result.output.contains("roots-secret") || result.output.contains("V: mine") {
        shown += 1
      }
      if result.status == 0 { ran += 1 } else { refused += 1 }
    }
    FileManager.default.createFile(atPath: stop, contents: nil)
    attacker.wait()
    #expect(shown == 0, "root's files shown in \(shown) of \(runs) runs")
    print("swap loop: \(ran) of \(runs) runs ran, \(refused) refused, \(shown) showed root's files")
    _ = run([
      "sh", "-c",
      Argument("cd '\(place.home)' && [ -L a ] && rm a; [ -d a.real ] && mv a.real a; true"),
    ])
    #expect(try place.image.subvolumes() == subvolumes, "a snapshot is left")
  }

  /// A ROOT whose path goes through a symbolic link in the user's
  /// directory (`home/l`, to root's `V`) is refused, live and with
  /// `--snapshot`, naming the link: the user can point it at root's
  /// directory while the view is made and back before COMMAND reads the
  /// path. A link in root's own directory is followed.
  @Test func aLinkInAnotherUsersDirectoryIsNotFollowed() throws {
    let place = try Place()
    try check(run(["ln", "-s", Argument(place.v), Argument(place.home + "/l")]))
    for snapshot in [false, true] {
      let options: [Argument] = snapshot ? ["run", "-q", "--snapshot"] : ["run", "-q"]
      let result = skipbackup(
        arguments: options + [Argument(place.home + "/l/b"), "--", "ls", Argument(place.v + "/b")])
      #expect(result.status == 1 && result.output.isEmpty, "\(result)")
      #expect(
        result.errors == "skipbackup: \(place.home)/l: a symbolic link in a directory that a "
          + "user other than root owns, who can point it anywhere at any moment and so choose "
          + "what this path reaches (an unsafe path transition); give the directory it leads "
          + "to as ROOT; nothing was run\n", "\(result)")
    }
    try check(run(["ln", "-s", Argument(place.v), Argument(place.image.mountPoint + "/L")]))
    let followed = skipbackup(
      "run", "-q", Argument(place.image.mountPoint + "/L/b"), "--", "ls",
      Argument(place.v + "/b"))
    #expect(followed.status == 0 && followed.output == "roots\n", "\(followed)")
  }

  /// Root resolving a ROOT through the user's `a` into a directory root
  /// owns is refused, naming that directory, unless it is the ROOT given.
  @Test func anUnsafePathTransitionIsRefused() throws {
    let place = try Place()
    Make.directory(Bytes(place.home + "/a/r"))
    Make.directory(Bytes(place.home + "/a/r/x"))
    let refused = skipbackup(
      "run", "-q", "--snapshot", Argument(place.home + "/a/r/x"), "--", "echo", "ran")
    #expect(refused.status == 1 && refused.output.isEmpty, "\(refused)")
    #expect(
      refused.errors.hasPrefix("skipbackup: \(place.home)/a/r: owned by root or by another user"),
      "\(refused)")
    let given = skipbackup(
      "run", "-q", "--snapshot", Argument(place.home + "/a/r"), "--", "echo", "ran")
    #expect(given.status == 0 && given.output == "ran\n", "\(given)")
    // A subvolume of root's nested in the user's directory.
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(place.home + "/a/rootsub")]))
    let nested = skipbackup(
      "run", "-q", "--snapshot", Argument(place.home), "--", "echo", "ran")
    #expect(nested.status == 1 && nested.output.isEmpty, "\(nested)")
    #expect(
      nested.errors.hasPrefix("skipbackup: \(place.home)/a/rootsub: owned by root"), "\(nested)")
  }

  enum Signal: Int32, CaseIterable, CustomTestStringConvertible {
    case hup = 1
    case int = 2
    case quit = 3
    case term = 15
    var testDescription: String { "SIG" + name }
    var name: String {
      switch self {
      case .hup: "HUP"
      case .int: "INT"
      case .quit: "QUIT"
      case .term: "TERM"
      }
    }
  }

  /// Each signal, sent by another process at one exact point after the
  /// snapshot is taken (the walk's first search of its tree), deletes the
  /// snapshot and ends the run with 128+N, COMMAND not run.
  @Test(arguments: Signal.allCases)
  func aSignalBeforeCommandDeletesTheSnapshot(signal: Signal) throws {
    let place = try Place()
    let subvolumes = try place.image.subvolumes()
    let script = place.image.directory.path + "/signal.sh"
    FileManager.default.createFile(
      atPath: script, contents: Data("kill -\(signal.name) $PPID\n".utf8))
    for point in ["ioctl(BTRFS_IOC_SNAP_CREATE_V2):1", "ioctl(BTRFS_IOC_TREE_SEARCH_V2):1"] {
      let result = run(
        [
          Argument(skipbackupPath), "run", "-q", "--snapshot", Argument(place.home), "--", "echo",
          "ran",
        ], environment: ["SKIPBACKUP_RACE": point + ":" + script])
      #expect(result.status == 128 + signal.rawValue, "\(point): \(result)")
      #expect(result.output.isEmpty, "\(point): \(result)")
      #expect(
        result.errors == "skipbackup: SIG\(signal.name) before COMMAND started: the snapshots "
          + "taken were deleted; nothing was run\n", "\(point): \(result)")
      #expect(try place.image.subvolumes() == subvolumes, "\(point): a snapshot is left")
    }
  }

  /// TERM and HUP at random moments of runs (a shell's background job
  /// ignores INT and QUIT, which the test above sends): whenever one comes,
  /// no snapshot is left; a run that left one is followed by one that
  /// deletes it, so each run is counted alone.
  @Test func signalsAtRandomMomentsLeaveNoSnapshot() throws {
    let place = try Place()
    for index in 0..<200 { Make.file(Bytes(place.home + "/f\(index)")) }
    let subvolumes = try place.image.subvolumes()
    var generator = SystemRandomNumberGenerator()
    var (left, ended) = (0, 0)
    let runs = 40
    for index in 0..<runs {
      let signal = index % 2 == 0 ? Signal.term : Signal.hup
      let delay = Double.random(in: 0...0.08, using: &generator)
      let result = run([
        "sh", "-c",
        Argument(
          """
          '\(skipbackupPath)' run -q --snapshot '\(place.home)' -- sleep 0.2 &
          sleep \(delay); kill -\(signal.name) $!; wait $!
          """),
      ])
      if try place.image.subvolumes() != subvolumes {
        left += 1
        _ = skipbackup("run", "-q", "--snapshot", Argument(place.home), "--", "true")
      }
      if result.status == 128 + signal.rawValue { ended += 1 }
    }
    print("random signals: \(left) of \(runs) runs left a snapshot; \(ended) ended by the signal")
    #expect(left == 0, "\(left) of \(runs) runs left a snapshot")
  }
}
