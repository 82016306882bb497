import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `run` on a live tree: COMMAND never starts on a view that shows an item
/// marked at that moment. The tree changes at exact points of the run
/// (`SKIPBACKUP_RACE`, Sources/SkipBackupSystem/Mocking.swift): just before
/// the run looks for changes after its walk (`read(fanotify):1`), where it
/// walks again, and once the view is mounted, just before COMMAND would
/// start (`chdir:1`, the move into the working directory through the
/// view), where it refuses. A change there is made by this process, outside
/// the run's namespace (``OutsideChange``): the run's own race script sees
/// only the read-only view by then. And a directory renamed in a loop while
/// runs start, stopped (SIGSTOP) at `chdir:1` so that nothing moves once
/// COMMAND looks: the view showed its marked file in about half the runs
/// before the watch.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct RunRaceTests {
  /// Who runs `run`: root watches each filesystem whole, anyone else each
  /// directory.
  enum User: String, CaseIterable, CustomTestStringConvertible {
    case root, nobody
    var testDescription: String { rawValue }
    var asNobody: Bool { self == .nobody }
  }

  /// A ROOT holding `a/d/m`, marked, `keep`, `b`, and a few files for the
  /// walk to read, owned by the user who runs `run`.
  struct Place {
    let tree: TemporaryDirectory
    let user: User
    var root: String { tree.path + "/root" }
    var marked: String { root + "/a/d/m" }
    var moved: String { root + "/b/d" }
    var keep: String { root + "/keep" }

    /// With `directory`, the ROOT is that directory (another filesystem),
    /// reached through the link `root` in the test's own directory.
    init(_ user: User, rootIn directory: String? = nil) throws {
      self.user = user
      tree = try TemporaryDirectory()
      if let directory {
        Make.directory(Bytes(directory))
        symlink(directory, tree.path + "/root")
      }
      tree.file("root/a/d/m", "marked")
      tree.file("root/keep", "kept")
      tree.directory("root/b")
      for index in 0..<40 { tree.file("root/c/\(index)") }
      try check(skipbackup("mark", Argument(marked)))
      if user == .nobody {
        let owned = [tree.path] + (directory.map { [$0] } ?? [])
        try check(run(["chown", "-R", "nobody:nogroup"] + owned.map { Argument($0) }))
      }
    }

    /// An executable script of `lines`.
    func script(_ name: String, _ lines: String) -> String {
      let path = tree.file(name, "#!/bin/sh\nset -e\n\(lines)\n")
      chmod(path, 0o755)
      return path
    }

    /// `run -q ROOT -- sh -c SCRIPT` as the user, with `race`.
    /// `also` are more ROOTs, after ROOT.
    func view(
      _ script: String, race: String? = nil, environment: [String: String] = [:],
      also: [String] = []
    ) -> ProcessResult {
      var variables = environment
      if let race { variables["SKIPBACKUP_RACE"] = race }
      let roots = ([root] + also).map { Argument($0) }
      return run(
        [Argument(skipbackupPath), "run", "-q"] + roots + ["--", "sh", "-c", Argument(script)],
        asNobody: user.asNobody, directory: tree.path, environment: variables)
    }

    /// COMMAND for ``view(_:race:environment:)``: lists ROOT, sorted.
    var listing: String { "cd '\(root)' && find . | LC_ALL=C sort" }
  }

  /// A change made by this process, outside the run's mount namespace,
  /// when the run's race script asks for it, which waits until it is made:
  /// once the view is mounted, the script itself sees only the view.
  final class OutsideChange: @unchecked Sendable {
    /// The race script, for `SKIPBACKUP_RACE=CALL:N:script`.
    let script: String
    private let request: String
    private let thread: BackgroundThread
    private let made = Flag()

    private final class Flag: @unchecked Sendable {
      private let lock = NSLock()
      private var value = false
      func set() { lock.withLock { value = true } }
      var isSet: Bool { lock.withLock { value } }
    }

    init(_ place: Place, _ change: @escaping @Sendable () -> Void) {
      let request = place.tree.path + "/change.request"
      let reply = place.tree.path + "/change.reply"
      for fifo in [request, reply] {
        precondition(mkfifo(fifo, 0o666) == 0, "mkfifo \(fifo)")
        chmod(fifo, 0o666)
      }
      self.request = request
      script = place.script("change.sh", "echo go > '\(request)'\nread answer < '\(reply)'")
      let made = made
      thread = BackgroundThread {
        // Opening blocks until a writer comes: the script, or finish().
        guard Self.exchange(request, O_RDONLY) == "go" else { return }
        change()
        made.set()
        _ = Self.exchange(reply, O_WRONLY, "done")
      }
    }

    /// Opens the FIFO `path` (which blocks until the other end is opened
    /// too) and reads a word from it, or writes `word` to it.
    private static func exchange(_ path: String, _ mode: CInt, _ word: String = "") -> String {
      let descriptor = open(path, mode | O_CLOEXEC)
      precondition(descriptor >= 0, "open \(path): \(errno)")
      defer { close(descriptor) }
      if mode == O_WRONLY {
        _ = Array((word + "\n").utf8).withUnsafeBytes {
          write(descriptor, $0.baseAddress, $0.count)
        }
        return word
      }
      var buffer = [UInt8](repeating: 0, count: 64)
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      return String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Ends the helper once the run is over; whether the change was made.
    func finish() -> Bool {
      let done = made.isSet
      // The helper still waits for a writer: this one tells it to stop.
      if !done { _ = Self.exchange(request, O_WRONLY, "none") }
      thread.wait()
      return done
    }
  }

  // MARK: - A directory renamed in a loop

  /// What the runs of ``renameLoop(_:runs:pause:environment:)`` came to.
  struct LoopCounts: CustomStringConvertible {
    /// COMMAND started and did not find the marked file.
    var started = 0
    /// COMMAND started and found the marked file, at either place.
    var shown = 0
    /// The run refused, saying that the tree changed.
    var refused = 0
    /// Anything else: each run's result.
    var other: [String] = []
    var description: String {
      "\(started) started, \(shown) showed the marked file, \(refused) refused, "
        + "\(other.count) other"
    }

    mutating func add(_ batch: LoopCounts) {
      started += batch.started
      shown += batch.shown
      refused += batch.refused
      other += batch.other
    }
  }

  /// A directory holding a marked file, renamed between two places inside
  /// ROOT, from whichever holds it, while `runs` runs start one after
  /// another: the walk may list the place it goes to before the move and
  /// the place it left after it, and a move after the walk leaves the
  /// whiteout where the walk found the file. The renamer is stopped once the view is mounted, just before
  /// COMMAND starts (`chdir:1`), so that what COMMAND finds is the view it
  /// started on; COMMAND exits 3 when it finds the marked file. The
  /// renamer sleeps up to `pause` seconds after each rename: by default a
  /// rename every 10 ms on average, times the sanitizer's slowdown.
  func renameLoop(
    _ place: Place, runs: Int, pause: Double = 0.02 * sanitizerSlowdown,
    environment: [String: String] = [:]
  ) throws -> LoopCounts {
    let renamer = place.tree.file(
      "renamer.py",
      """
      import os, random, sys, time
      here, there, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
      # A renamer of an earlier batch was killed at either place.
      if not os.path.exists(here):
          here, there = there, here
      while True:
          os.rename(here, there)
          time.sleep(random.random() * pause)
          os.rename(there, here)
          time.sleep(random.random() * pause)
      """)
    let look = "if [ -e '\(place.marked)' ] || [ -e '\(place.moved)/m' ]; then exit 3; fi"
    return try changedInALoop(
      place, changer: renamer,
      arguments: [place.root + "/a/d", place.moved, String(pause)], look: look,
      stopAt: "chdir:1", runs: runs, environment: environment)
  }

  /// ``renameLoop(_:runs:pause:environment:)``, `runs` runs in batches of
  /// a quarter of them, and after each batch in which no run has started
  /// yet, a batch more at a quarter of the pace, up to four times: runs
  /// that were all refused leave no view to judge. A run slower than the
  /// renamer's pause sees a change every time: under ThreadSanitizer at the
  /// unscaled pace, all 300 runs as root were refused, and under ASan in
  /// CI, at twice the pause, all 100; a batch of a quarter wastes a quarter
  /// of the time on such a pace.
  func renameLoopUntilOneStarts(_ place: Place, runs: Int) throws -> LoopCounts {
    let batch = (runs + 3) / 4
    var counts = LoopCounts()
    var pause = 0.02 * sanitizerSlowdown
    var made = 0
    var slowed = 0
    while made < runs || (counts.started == 0 && slowed < 4) {
      counts.add(try renameLoop(place, runs: batch, pause: pause))
      made += batch
      if counts.started == 0 && slowed < 4 {
        pause *= 4
        slowed += 1
      }
    }
    return counts
  }

  /// `runs` runs of `look` as COMMAND while `changer`, a Python program
  /// run with `arguments` as the place's user, changes the tree in a loop.
  /// The race script at `stopAt` (`CALL:N`) stops the changer (SIGSTOP,
  /// waited for), so that nothing changes from there until COMMAND has
  /// looked; it goes on after each run. COMMAND exits 3 or 4 on a view
  /// that is wrong.
  func changedInALoop(
    _ place: Place, changer: String, arguments: [String], look: String, stopAt: String,
    runs: Int, environment: [String: String] = [:]
  ) throws -> LoopCounts {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let identity =
      place.user == .nobody
      ? ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] : []
    process.arguments = identity + ["/usr/bin/python3", changer] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: place.tree.path)
    try process.run()
    let pid = process.processIdentifier
    defer {
      kill(pid, SIGKILL)
      process.waitUntilExit()
    }
    let stop = place.script(
      "stop.sh",
      "kill -STOP \(pid)\nuntil grep -q '^State:[[:space:]]*T' /proc/\(pid)/status; do :; done")
    var counts = LoopCounts()
    for _ in 0..<runs {
      // A changer that has exited fails every run after it at the race
      // script, which cannot stop it: one line says so instead.
      guard process.isRunning else {
        Issue.record("\(changer) exited \(process.terminationStatus) after \(counts)")
        break
      }
      let result = place.view(look, race: "\(stopAt):\(stop)", environment: environment)
      kill(pid, SIGCONT)
      switch result.status {
      case 0: counts.started += 1
      case 3, 4: counts.shown += 1
      case 1 where result.errors.contains(": changed while "): counts.refused += 1
      default: counts.other.append("\(result)")
      }
    }
    return counts
  }

  /// Runs of the loop: several hundred, as root and as nobody; scripts/torture
  /// --only live runs it for as long as it is given. Under a sanitizer, whose
  /// runs are slower and paced slower, 50: the loop is there for the races
  /// the sanitizer sees, not for the count, and it is the last test of
  /// CI's ASan stage to end (100 runs took 309 s of its 422, where the
  /// next suite ended at 350; 300 took 450 s of 529).
  static let runs = sanitizerSlowdown > 1 ? 50 : 300

  /// The loop above with the watch: no run starts COMMAND with the marked
  /// file shown, and a run that does not start is refused in one line.
  /// On an ext4 of its own: root's run watches ROOT's whole filesystem,
  /// and in the tests' scratch directory it read every other test's
  /// changes too, which made the loop take 75 to 118 s in a run of the
  /// suite. ext4 rather than tmpfs, which keeps user attributes only from
  /// Linux 6.6.
  @Test(arguments: User.allCases)
  func aDirectoryRenamedInALoopNeverStartsCommandWithItsMarkedFileShown(user: User) throws {
    let quiet = try TestFilesystem(.ext4, size: "16M")
    let counts = try renameLoopUntilOneStarts(
      Place(user, rootIn: quiet.mountPoint + "/root"), runs: Self.runs)
    #expect(counts.shown == 0, "\(counts)")
    #expect(counts.other.isEmpty, "\(counts): \(counts.other.prefix(3))")
    #expect(counts.started > 0, "\(counts)")
  }

  /// The same loop without the watch (fanotify_init refused, as by a
  /// kernel without fanotify): the view does show the marked file, so the
  /// test above can fail. Unwatched, about 8 of 40 runs as root show it and
  /// 6 as nobody (most others stop on the directory gone while the layer is
  /// made), and on a loaded machine none of 27 that start as nobody may
  /// (docs/performance.md). So the loop goes on, 40 runs at a time, until
  /// one shows it, up to 320.
  @Test(arguments: User.allCases)
  func anUnwatchedViewShowsTheRenamedMarkedFile(user: User) throws {
    var counts = LoopCounts()
    for _ in 0..<8 where counts.shown == 0 {
      counts.add(
        try renameLoop(
          Place(user), runs: 40, environment: ["SKIPBACKUP_FORCE_ERRNO": "fanotify_init:ENOSYS"]))
    }
    #expect(counts.shown > 0, "\(counts)")
    #expect(counts.refused == 0, "\(counts)")
  }

  /// The loop on a btrfs subvolume, as root: the kernel refuses a mark of
  /// the whole filesystem there (fanotify_mark: EXDEV, a subvolume's
  /// identity is not its filesystem's), and each directory is watched by
  /// a mark of its own instead, with the same result, and no note.
  @Test func aDirectoryRenamedInALoopOnABtrfsSubvolumeIsCaughtToo() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let place = try Place(.root, rootIn: subvolume + "/root")
    let counts = try renameLoopUntilOneStarts(place, runs: 100)
    #expect(counts.shown == 0, "\(counts)")
    #expect(counts.other.isEmpty, "\(counts): \(counts.other.prefix(3))")
    #expect(counts.started > 0, "\(counts)")
    let quiet = place.view("true")
    #expect(quiet.status == 0 && quiet.errors.isEmpty, "\(quiet)")
  }

  /// The same in a tree holding snapshots taken while a subvolume was
  /// nested in their source (snapper's `.snapshots`): each holds btrfs's
  /// stand-in for the nested one, which nothing can change and which
  /// fanotify refuses to mark (EXDEV). It is left unwatched; before, the
  /// whole ROOT went unwatched, with a note.
  @Test func aTreeHoldingSnapshotsOfNestedSubvolumesIsWatched() throws {
    let image = try BtrfsImage()
    let subvolume = try image.subvolume("sv")
    let place = try Place(.root, rootIn: subvolume + "/root")
    try check(run(["btrfs", "-q", "subvolume", "create", Argument(place.root + "/n")]))
    Make.directory(Bytes(place.root + "/.snap"))
    for number in 1...2 {
      try check(
        run([
          "btrfs", "-q", "subvolume", "snapshot", "-r", Argument(subvolume),
          Argument(place.root + "/.snap/\(number)"),
        ]))
    }
    let quiet = place.view("true")
    #expect(quiet.status == 0 && quiet.errors.isEmpty, "\(quiet)")
    let counts = try renameLoop(place, runs: 60)
    #expect(counts.shown == 0, "\(counts)")
    #expect(counts.other.isEmpty, "\(counts): \(counts.other.prefix(3))")
  }

  // MARK: - Once the view is mounted

  /// `change`, made outside the run once its view is mounted, just before
  /// COMMAND would start (`chdir:1`); the run, COMMAND listing ROOT.
  func changedOnceMounted(_ place: Place, _ change: @escaping @Sendable () -> Void)
    -> ProcessResult
  {
    let outside = OutsideChange(place, change)
    let result = place.view(place.listing, race: "chdir:1:\(outside.script)")
    #expect(outside.finish(), "the change was not made: \(result)")
    return result
  }

  /// A mark added once the view is mounted, just before COMMAND starts:
  /// COMMAND does not start, and one line says what changed and where.
  /// Before the watch COMMAND started and `keep`, marked by then, was in
  /// its view.
  @Test(arguments: User.allCases)
  func aMarkAddedOnceTheViewIsMountedRefusesTheRun(user: User) throws {
    let place = try Place(user)
    let keep = place.keep
    let result = changedOnceMounted(place) { setfattr(keep, .resource) }
    #expect(result.status == 1, "\(result)")
    #expect(result.standardOutput.isEmpty, "COMMAND ran: \(result)")
    #expect(
      result.errors == "skipbackup: \(keep): changed while the view of \(place.root) was being "
        + "made (its marks changed), so it could show what is marked there now; nothing was "
        + "run: run again when it holds still, or use --snapshot (btrfs), whose view is one "
        + "instant of the tree; see docs/backups.md, \"What the live view promises\"\n",
      "\(result)")
  }

  /// A mark taken off once the view is mounted: the view would hide an
  /// item that is not excluded any more. Before, COMMAND started without `m`.
  @Test(arguments: User.allCases)
  func aMarkTakenOffOnceTheViewIsMountedRefusesTheRun(user: User) throws {
    let place = try Place(user)
    let marked = place.marked
    let result = changedOnceMounted(place) { _ = skipbackup("clear", Argument(marked)) }
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.hasPrefix("skipbackup: \(marked): changed while the view"), "\(result)")
  }

  /// The directory holding the marked file moved once the view is
  /// mounted: the whiteout stays where the walk found the file, which
  /// shows at its new place. Before, COMMAND listed ./b/d/m.
  @Test(arguments: User.allCases)
  func aDirectoryMovedOnceTheViewIsMountedRefusesTheRun(user: User) throws {
    let place = try Place(user)
    let (from, to) = (place.root + "/a/d", place.moved)
    let result = changedOnceMounted(place) { _ = rename(from, to) }
    #expect(result.status == 1, "\(result)")
    #expect(!result.output.contains("./b/d/m"), "\(result)")
    // The move away of the directory holding a whiteout, or its arrival.
    #expect(
      result.errors.hasPrefix("skipbackup: \(place.root)/a/d: changed while the view")
        || result.errors.hasPrefix("skipbackup: \(place.moved): changed while the view"),
      "\(result)")
  }

  /// The marked file linked in under another name once the view is mounted.
  @Test(arguments: User.allCases)
  func aMarkedFileLinkedInOnceTheViewIsMountedRefusesTheRun(user: User) throws {
    let place = try Place(user)
    let (marked, linked) = (place.marked, place.root + "/b/l")
    let result = changedOnceMounted(place) { _ = link(marked, linked) }
    #expect(result.status == 1, "\(result)")
    #expect(result.errors.hasPrefix("skipbackup: \(linked): changed while the view"), "\(result)")
  }

  /// A mark added at the last moment the watch hears: just before it
  /// stops (`fanotify_mark(flush):1`, the first of its marks taken off),
  /// after which only COMMAND's `execve` remains. The run refuses. Before,
  /// the last look came before the watch's teardown, whose close waited
  /// 14 to 22 ms for the kernel (an SRCU grace period), and COMMAND started
  /// with `keep`, marked by then, in its view.
  @Test(arguments: User.allCases)
  func aMarkAddedJustBeforeTheWatchStopsRefusesTheRun(user: User) throws {
    let place = try Place(user)
    let keep = place.keep
    let outside = OutsideChange(place) { setfattr(keep, .resource) }
    let result = place.view(place.listing, race: "fanotify_mark(flush):1:\(outside.script)")
    #expect(outside.finish(), "the change was not made: \(result)")
    #expect(result.status == 1, "\(result)")
    #expect(result.standardOutput.isEmpty, "COMMAND ran: \(result)")
    #expect(
      result.errors.hasPrefix("skipbackup: \(keep): changed while the view"), "\(result)")
  }

  /// `keep` marked and cleared in a loop (a change every 10 ms on average)
  /// while 100 runs start as root, the marker stopped (SIGSTOP) at the
  /// last moment the watch hears, just before it stops
  /// (`fanotify_mark(flush):1`): each change until then is in the last
  /// look, so no run starts COMMAND on a view that shows `keep` marked or
  /// hides it unmarked. COMMAND reads `keep`'s mark through a hard link
  /// outside ROOT, and exits 3 or 4 on a wrong view. Before, the last look
  /// came before the flush, and the marker's stop script ran after it.
  @Test func aMarkSetAndClearedInALoopIsInTheLastLook() throws {
    let quiet = try TestFilesystem(.ext4, size: "16M")
    let place = try Place(.root, rootIn: quiet.mountPoint + "/root")
    let link = quiet.mountPoint + "/keep-link"
    precondition(Glibc.link(place.keep, link) == 0)
    let attribute = PeerMark.resource.attribute
    let marker = place.tree.file(
      "marker.py",
      """
      import os, random, sys, time
      path, name, value = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
      while True:
          os.setxattr(path, name, value)
          time.sleep(random.random() * 0.02)
          os.removexattr(path, name)
          time.sleep(random.random() * 0.02)
      """)
    let marked = "getfattr -n '\(attribute)' '\(link)' >/dev/null 2>&1"
    let look =
      "if [ -e '\(place.keep)' ]; then if \(marked); then exit 3; fi; exit 0; fi; "
      + "if \(marked); then exit 0; fi; exit 4"
    let counts = try changedInALoop(
      place, changer: marker, arguments: [place.keep, attribute, PeerMark.resource.valueHex],
      look: look, stopAt: "fanotify_mark(flush):1", runs: 100)
    #expect(counts.shown == 0, "\(counts)")
    #expect(counts.other.isEmpty, "\(counts): \(counts.other.prefix(3))")
    #expect(counts.started > 0, "\(counts)")
  }

  /// What changes nothing the view shows does not stop the run: files
  /// made, written, renamed, removed and changed in mode, an empty
  /// directory made, in ROOT and beside it, once the view is mounted.
  @Test(arguments: User.allCases)
  func changesTheViewShowsAsTheyAreLetCommandStart(user: User) throws {
    let place = try Place(user)
    let (root, beside) = (place.root, place.tree.path)
    let result = changedOnceMounted(place) {
      _ = run([
        "sh", "-c",
        Argument(
          "echo n > '\(root)/b/new'; echo more >> '\(root)/keep'; chmod 600 '\(root)/c/1'; "
            + "mv '\(root)/c/2' '\(root)/c/two'; rm '\(root)/c/3'; mkdir '\(root)/b/empty'; "
            + "echo x > '\(beside)/outside'; setfattr -n user.other -v 1 '\(root)/c/4'"),
      ])
    }
    #expect(result.status == 0, "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  // MARK: - After the walk, before the view is mounted

  /// A mark added and the marked file's directory moved after the walk,
  /// before anything is mounted: the ROOT is walked again, and COMMAND
  /// starts on a view of the tree as it is then.
  @Test(arguments: User.allCases)
  func changesAfterTheWalkAreWalkedAgain(user: User) throws {
    let place = try Place(user)
    let change = place.script(
      "change.sh",
      "setfattr -n \(PeerMark.resource.attribute) -v 0x\(PeerMark.resource.valueHex) "
        + "'\(place.keep)'\nmv '\(place.root)/a/d' '\(place.moved)'")
    let result = place.view(place.listing, race: "read(fanotify):1:\(change)")
    #expect(result.status == 0, "\(result)")
    let shown = [".", "./a", "./b", "./b/d", "./c"] + (0..<40).map { "./c/\($0)" }
    #expect(result.lines == shown.sorted(), "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  /// ROOT replaced after the walk by a directory holding a marked file,
  /// beside another ROOT in the same directory: each ROOT's own name is
  /// watched there, and the ROOTs are walked again. A view at ROOT's path
  /// would otherwise be of the new directory with the old one's whiteouts.
  @Test(arguments: User.allCases)
  func aRootReplacedAfterTheWalkBesideAnotherRootIsWalkedAgain(user: User) throws {
    let place = try Place(user)
    let other = place.tree.file("other/kept", "kept")
    let secret = place.tree.file("decoy/secret", "secret")
    place.tree.file("decoy/plain", "plain")
    try check(skipbackup("mark", Argument(secret)))
    if user == .nobody {
      try check(run(["chown", "-R", "nobody:nogroup", Argument(place.tree.path)]))
    }
    let swap = place.script(
      "swap.sh",
      "mv '\(place.root)' '\(place.tree.path)/old'\nmv '\(place.tree.path)/decoy' '\(place.root)'")
    let result = place.view(
      place.listing, race: "read(fanotify):1:\(swap)",
      also: [(other as NSString).deletingLastPathComponent])
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == [".", "./plain"], "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  /// A tree that changes after each walk is refused after the last, in one
  /// line.
  @Test func aTreeThatKeepsChangingIsRefusedAfterTheLastWalk() throws {
    let place = try Place(.root)
    let flip = place.script(
      "flip.sh",
      "if [ -e '\(place.root)/a/d' ]; then mv '\(place.root)/a/d' '\(place.moved)'; "
        + "else mv '\(place.moved)' '\(place.root)/a/d'; fi")
    // A change at every read: each look reads each filesystem's group until
    // the first change it finds, and ROOT's parents may be on another
    // filesystem than ROOT (a tmpfs /dev/shm under an ext4 /): up to three
    // reads a walk.
    let result = place.view(
      "true", race: (1...9).map { "read(fanotify):\($0):\(flip)" }.joined(separator: ","))
    #expect(result.status == 1, "\(result)")
    #expect(
      result.errors.contains(": changed while \(place.root) was walked, 3 walks in a row ("),
      "\(result)")
    #expect(result.errors.contains("or use --snapshot (btrfs)"), "\(result)")
    #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
  }

  // MARK: - Mounts in ROOT while the view is made

  /// Root's `run -q ROOT -- find .` over `tree/root`, with `lines` run (as
  /// root, in the run's namespace, before it is the run's own) just before
  /// the walk's last getdents64: ROOT holds one directory, `d`, and files,
  /// so the walk lists ROOT and `d`, each in one call and one more that
  /// says the end, and `d` has been read as it was. `first`, when given,
  /// is run just before the first getdents64, after ROOT is opened and
  /// before `d` is: the walk opens `d` while it reads ROOT's entries.
  func mountedDuringTheWalk(_ tree: TemporaryDirectory, first: String? = nil, _ lines: String)
    -> ProcessResult
  {
    func script(_ name: String, _ lines: String) -> String {
      let path = tree.file(name, "#!/bin/sh\nset -e\n\(lines)\n")
      chmod(path, 0o755)
      return path
    }
    let races =
      (first.map { ["getdents64:1:\(script("first.sh", $0))"] } ?? [])
      + ["getdents64:4:\(script("race.sh", lines))"]
    let root = tree.path + "/root"
    return run(
      [
        Argument(skipbackupPath), "run", "-q", Argument(root), "--", "sh", "-c",
        Argument("cd '\(root)' && find . | LC_ALL=C sort"),
      ],
      directory: tree.path, environment: ["SKIPBACKUP_RACE": races.joined(separator: ",")])
  }

  /// A tmpfs holding a marked file mounted on a directory of ROOT after
  /// the walk read that directory: the mount table after the walk differs
  /// from the one before it, the ROOT is walked again, and the mounted
  /// filesystem's view hides its marked file. Before, it got a view of its
  /// own with nothing hidden, and COMMAND listed ./d/m.
  @Test(.enabled(if: getuid() == 0, "root: mount"))
  func aFilesystemMountedInRootDuringTheWalkIsWalked() throws {
    let tree = try TemporaryDirectory()
    tree.directory("root/d")
    tree.file("root/keep", "kept")
    let d = tree.path + "/root/d"
    defer { _ = run(["umount", "-l", Argument(d)]) }
    let result = mountedDuringTheWalk(
      tree,
      "mount -t tmpfs none '\(d)'\necho m > '\(d)/m'\necho p > '\(d)/plain'\n"
        + "setfattr -n \(PeerMark.resource.attribute) -v 0x\(PeerMark.resource.valueHex) '\(d)/m'")
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == [".", "./d", "./d/plain", "./keep"], "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  /// A tmpfs mounted on a directory of ROOT that holds a marked file,
  /// unmounted after the walk read the tmpfs: the directory below it,
  /// which the walk never read, is uncovered. The ROOT is walked again,
  /// and the marked file hidden. Before, COMMAND listed ./d/m.
  @Test(.enabled(if: getuid() == 0, "root: mount"))
  func aFilesystemUnmountedInRootDuringTheWalkUncoversNothingMarked() throws {
    let tree = try TemporaryDirectory()
    let marked = tree.file("root/d/m", "marked")
    tree.file("root/d/plain", "plain")
    tree.file("root/keep", "kept")
    try check(skipbackup("mark", Argument(marked)))
    let d = tree.path + "/root/d"
    try check(run(["mount", "-t", "tmpfs", "none", Argument(d)]))
    defer { _ = run(["umount", "-l", Argument(d)]) }
    tree.file("root/d/over", "over")
    let result = mountedDuringTheWalk(tree, "umount -l '\(d)'")
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == [".", "./d", "./d/plain", "./keep"], "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  /// A tmpfs holding a marked `secret` mounted on ROOT's `d`, which holds
  /// a marked `under`, before the walk opens `d`, and unmounted once
  /// the walk has read it: the mount table after the walk is the one
  /// before it, but the mount the walk read `d` on is gone, and the ROOT is
  /// walked again. Without that look, the view hid `d/secret` and showed
  /// the `d/under` the walk never read.
  @Test(.enabled(if: getuid() == 0, "root: mount"))
  func aFilesystemMountedAndUnmountedDuringTheWalkIsAChange() throws {
    let tree = try TemporaryDirectory()
    let under = tree.file("root/d/under", "under")
    tree.file("root/d/plain", "plain")
    tree.file("root/keep", "kept")
    try check(skipbackup("mark", Argument(under)))
    let d = tree.path + "/root/d"
    defer { _ = run(["umount", "-l", Argument(d)]) }
    let result = mountedDuringTheWalk(
      tree,
      first: "mount -t tmpfs none '\(d)'\necho s > '\(d)/secret'\n"
        + "setfattr -n \(PeerMark.resource.attribute) -v 0x\(PeerMark.resource.valueHex) "
        + "'\(d)/secret'",
      "umount -l '\(d)'")
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == [".", "./d", "./d/plain", "./keep"], "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  /// A tmpfs on ROOT's `d` before the run, unmounted before the walk
  /// opens `d`, and another mounted there once the walk has read the `d`
  /// below, holding a marked `secret`: the second gets the first's mount
  /// ID and device number (the kernel hands out the lowest free), so the
  /// table after the walk reads as the one before it, but the mount on
  /// top at `d` is another (statx's unique mount ID), and the ROOT is
  /// walked again. Without that look, COMMAND listed ./d/secret.
  @Test(.enabled(if: getuid() == 0, "root: mount"))
  func aFilesystemReplacedByAnotherDuringTheWalkIsAChange() throws {
    let tree = try TemporaryDirectory()
    let under = tree.file("root/d/under", "under")
    tree.file("root/keep", "kept")
    try check(skipbackup("mark", Argument(under)))
    let d = tree.path + "/root/d"
    try check(run(["mount", "-t", "tmpfs", "none", Argument(d)]))
    defer { _ = run(["umount", "-l", Argument(d)]) }
    let result = mountedDuringTheWalk(
      tree, first: "umount -l '\(d)'",
      "mount -t tmpfs none '\(d)'\necho s > '\(d)/secret'\necho p > '\(d)/plain'\n"
        + "setfattr -n \(PeerMark.resource.attribute) -v 0x\(PeerMark.resource.valueHex) "
        + "'\(d)/secret'")
    #expect(result.status == 0, "\(result)")
    #expect(result.lines == [".", "./d", "./d/plain", "./keep"], "\(result)")
    #expect(result.errors.isEmpty, "\(result)")
  }

  // MARK: - Without a watch

  /// The refusals that leave a ROOT unwatched: no fanotify in the kernel
  /// (ENOSYS), a process without the right to it (EPERM), a filesystem
  /// without file handles (ENODEV, EOPNOTSUPP: FUSE), a mark the kernel
  /// refuses there (EXDEV), the user's marks used up (ENOSPC).
  static let unwatched: [(call: String, errno: String)] = [
    ("fanotify_init", "ENOSYS"), ("fanotify_init", "EPERM"), ("fanotify_mark", "ENODEV"),
    ("fanotify_mark", "EXDEV"), ("fanotify_mark", "ENOSPC"), ("name_to_handle_at", "EOPNOTSUPP"),
  ]

  /// A ROOT that cannot be watched gets the view as it would without the
  /// watch, exact as of its walk, and one note that it was not watched:
  /// COMMAND starts, the marked file hidden.
  @Test(arguments: User.allCases)
  func aRootThatCannotBeWatchedIsNoted(user: User) throws {
    let place = try Place(user)
    for (call, errno) in Self.unwatched {
      let result = place.view(
        place.listing, environment: ["SKIPBACKUP_FORCE_ERRNO": "\(call):\(errno)"])
      #expect(result.status == 0, "\(call): \(result)")
      #expect(result.lines.contains("./keep"), "\(call): \(result)")
      #expect(!result.lines.contains("./a/d/m"), "\(call): \(result)")
      #expect(
        result.errors.hasPrefix(
          "skipbackup: \(place.root): not watched for changes while its view was made (\(call): "),
        "\(call): \(result)")
      #expect(result.errors.split(separator: "\n").count == 1, "\(call): \(result)")
    }
  }

  // MARK: - How many walks

  /// How many fanotify groups a run made, which is the same number each
  /// walk (one for each filesystem met): counted by a race script at each
  /// of the first calls of fanotify_init.
  func groupsMade(_ place: Place, _ script: String, race: String = "") -> (Int, ProcessResult) {
    let count = place.tree.path + "/groups"
    try? FileManager.default.removeItem(atPath: count)
    let counter = place.script("count.sh", "echo made >> '\(count)'")
    let races = (1...12).map { "fanotify_init:\($0):\(counter)" } + (race.isEmpty ? [] : [race])
    let result = place.view(script, race: races.joined(separator: ","))
    let made = (try? String(contentsOfFile: count, encoding: .utf8))?.split(separator: "\n").count
    return (made ?? 0, result)
  }

  /// A tree that holds still is walked once: as many groups are made as in
  /// one walk, half as many as in a run that walks twice because its tree
  /// changed after the first walk.
  @Test(arguments: User.allCases)
  func aQuietTreeIsWalkedOnce(user: User) throws {
    let place = try Place(user)
    let (quiet, ran) = groupsMade(place, place.listing)
    #expect(ran.status == 0 && ran.errors.isEmpty, "\(ran)")
    #expect(!ran.lines.contains("./a/d/m"), "\(ran)")
    let move = place.script("move.sh", "mv '\(place.root)/a/d' '\(place.moved)'")
    let (changed, again) = groupsMade(place, place.listing, race: "read(fanotify):1:\(move)")
    #expect(again.status == 0 && again.errors.isEmpty, "\(again)")
    #expect(!again.lines.contains("./b/d/m"), "\(again)")
    #expect(quiet >= 1 && changed == 2 * quiet, "\(quiet) groups walking once, \(changed) twice")
  }

}
