import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A tmux server of its own (`tmux -L`), with one window running a shell
/// command, whose screen the test reads with `capture-pane -p`. The server
/// is killed when the session goes (``deinit``).
final class TmuxSession {
  let socket: String
  let scratch: TemporaryDirectory

  /// Runs `command` (a shell command line) in a window of `columns` x
  /// `rows`; `$SKIPBACKUP` is the tool, `$SCRATCH` a directory of the
  /// session's own, where the window starts (with no core files: a test
  /// sends SIGSEGV). The locale is C.UTF-8, so that UTF-8 names show as
  /// they are.
  init(_ command: String, columns: Int = 100, rows: Int = 30) throws {
    scratch = try TemporaryDirectory(prefix: "skipbackup-tmux")
    socket = "skipbackup-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let script = scratch.path + "/run.sh"
    try
      ("export SKIPBACKUP='\(skipbackupPath)' SCRATCH='\(scratch.path)' LANG=C.UTF-8 LC_ALL=C.UTF-8\n"
      + "ulimit -c 0\ncd \"$SCRATCH\"\n"
      + command + "\nread -r line\n").write(toFile: script, atomically: true, encoding: .utf8)
    let started = run([
      "tmux", "-L", Argument(socket), "-f", "/dev/null", "new-session", "-d", "-x",
      Argument(String(columns)), "-y", Argument(String(rows)), "sh", Argument(script),
    ])
    #expect(started.status == 0, "tmux did not start: \(started)")
  }

  /// Kills the server. Not with kill-server: that signals the server with
  /// SIGTERM, which a server started from the test runner's threads has
  /// blocked (posix_spawn passes the signal mask on, and the daemon keeps
  /// it), so it never goes. SIGKILL cannot be blocked; the closed terminal
  /// then hangs up the shell in the window, and the socket is removed.
  deinit {
    let server = tmux("display-message", "-p", "#{pid} #{socket_path}").output
      .split(separator: " ")
    if server.count == 2, let pid = Int32(server[0]) {
      kill(pid, SIGKILL)
      unlink(server[1].trimmingCharacters(in: .newlines))
    }
  }

  func tmux(_ arguments: Argument...) -> ProcessResult {
    run([Argument("tmux"), "-L", Argument(socket)] + arguments)
  }

  /// Types keys, as tmux's send-keys names them (`Enter`, `Down`, `BSpace`, `q`).
  func keys(_ keys: String...) {
    for key in keys { #expect(tmux("send-keys", "-t", "0", Argument(key)).status == 0) }
  }

  /// The screen's rows now.
  func screen() -> [String] {
    tmux("capture-pane", "-p", "-t", "0").lines
  }

  /// The screen once `done` holds of it; the last screen after `seconds`.
  @discardableResult
  func waitFor(seconds: Int = 15, _ done: ([String]) -> Bool) -> [String] {
    var rows = screen()
    for _ in 0..<(seconds * 20) where !done(rows) {
      usleep(50_000)
      rows = screen()
    }
    return rows
  }

  /// The screen once it shows `text`.
  @discardableResult
  func waitFor(_ text: String) -> [String] {
    let rows = waitFor { $0.contains { $0.contains(text) } }
    #expect(
      rows.contains { $0.contains(text) },
      "the screen never showed \(text):\n\(rows.joined(separator: "\n"))")
    return rows
  }

  /// The screen once it changed from `before` (after a key).
  @discardableResult
  func waitForChange(from before: [String]) -> [String] {
    waitFor(seconds: 3) { $0 != before }
  }

  /// The file `name` in the scratch directory, once it exists.
  func waitForFile(_ name: String) -> String? {
    let path = scratch.path + "/" + name
    for _ in 0..<400 {
      if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") {
        return text
      }
      usleep(50_000)
    }
    return nil
  }
}

extension CLITests {
  /// `skipbackup browse`, driven in tmux as a person drives it.
  @Suite(.serialized) struct BrowseTests {
    /// What a row of the browser shows: backed-up and left-out bytes (with
    /// `b`, exact), why, and the name.
    struct Row: Equatable {
      var included: Int64
      var excluded: Int64
      var why: String
      var name: String
    }

    /// The rows of a screen in exact bytes: each line below the heads.
    /// Presses b (exact bytes) and returns the screen once it shows them. A
    /// capture may catch ncurses halfway through the redraw (in a loaded run
    /// of the suite, a row was missing from the first changed screen), so
    /// the screen is the first that two captures in a row agree on.
    static func exactBytes(_ session: TmuxSession) -> [String] {
      let before = session.screen()
      session.keys("b")
      var last = before
      return session.waitFor { screen in
        defer { last = screen }
        return screen != before && screen == last && !Self.rows(screen).isEmpty
      }
    }

    static func rows(_ screen: [String]) -> [String: Row] {
      guard let head = screen.firstIndex(where: { $0.contains("Backed up") && $0.contains("Name") })
      else { return [:] }
      let nameColumn = screen[head].range(of: "Name")!.lowerBound
      let whyColumn = screen[head].range(of: "Why")!.lowerBound
      var rows: [String: Row] = [:]
      for line in screen[(head + 1)...].dropLast() where line.count > 0 {
        guard line.endIndex > nameColumn else { continue }
        let sizes = line[..<whyColumn].split(separator: " ")
        guard sizes.count == 2, let included = Int64(sizes[0]) else { continue }
        let excluded = Int64(sizes[1]) ?? 0
        let why = line[whyColumn..<nameColumn].trimmingCharacters(in: .whitespaces)
        let name = String(line[nameColumn...]).trimmingCharacters(in: .whitespaces)
        rows[name] = Row(included: included, excluded: excluded, why: why, name: name)
      }
      return rows
    }

    static func du(_ path: String) -> Int64 {
      let result = run(["du", "-s", "-B1", Argument(path)])
      return Int64(result.output.split(separator: "\t")[0])!
    }

    /// A tree with a hand-marked directory (and a mark inside it), a swept
    /// node_modules, hostile names, and plain directories of known sizes.
    static func makeTree(_ tree: TemporaryDirectory) -> String {
      let root = tree.directory("root")
      tree.file("root/big/data", String(repeating: "b", count: 300_000))
      tree.file("root/small/data", String(repeating: "s", count: 20_000))
      setfattr(tree.directory("root/cache"), .xdg)
      tree.file("root/cache/blob", String(repeating: "c", count: 150_000))
      setfattr(tree.directory("root/cache/sub"), .legacy)
      tree.file("root/cache/sub/deeper", String(repeating: "d", count: 30_000))
      tree.file("root/proj/package.json", "{}")
      tree.file("root/proj/node_modules/dep/index.js", String(repeating: "n", count: 80_000))
      #expect(skipbackup("sweep", Argument(root)).status == 0)
      // ESC [ 2 J clears a screen, ESC [ 31 m turns text red, ESC ] 0 ; sets a title.
      tree.file(named: Array("evil\u{1B}[2J\u{1B}[31mRED\u{1B}]0;pwned\u{07}".utf8), in: "root")
      tree.file(named: Array("bad".utf8) + [0xFF, 0xFE], in: "root")
      tree.file(named: Array("two\nlines".utf8), in: "root")
      return root
    }

    /// `race`: what the debug build's SKIPBACKUP_RACE runs, and before which call.
    static func browse(_ root: String, _ options: String = "", race: String? = nil) throws
      -> TmuxSession
    {
      let environment = race.map { "SKIPBACKUP_RACE='\($0)' " } ?? ""
      // The shell traps SIGINT (a command, so browse gets the default
      // action back), so that Ctrl-C ends browse and not the script too.
      let session = try TmuxSession(
        "trap true INT\nstty -g > \"$SCRATCH/before\"\n\(environment)\"$SKIPBACKUP\" browse \(options) '\(root)'\n"
          + "echo $? > \"$SCRATCH/status\"\nstty -g > \"$SCRATCH/after\"")
      session.waitFor("items by size")
      return session
    }

    /// Moves the selection to the row named `name`: Home, then Down as
    /// many times as rows come before it. Keys reach the browser in order,
    /// so the next key acts on that row.
    static func select(_ name: String, in session: TmuxSession) -> [String] {
      let screen = session.screen()
      guard
        let head = screen.firstIndex(where: { $0.contains("Backed up") && $0.contains("Name") }),
        let row = screen[(head + 1)...].firstIndex(where: { $0.hasSuffix(" " + name) })
      else {
        Issue.record("no row \(name):\n\(screen.joined(separator: "\n"))")
        return screen
      }
      session.keys("Home")
      for _ in 0..<(row - head - 1) { session.keys("Down") }
      return screen
    }

    @Test func rowsAndSizesMatchDu() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root)
      var screen = Self.exactBytes(session)
      let rows = Self.rows(screen)
      #expect(
        Set(rows.keys)
          == [
            "big/", "small/", "cache/", "proj/", "evil\\033[2J\\033[31mRED\\033]0;pwned\\a",
            "bad\\377\\376", "two\\nlines",
          ], "\(screen.joined(separator: "\n"))")
      for name in ["big", "small", "cache", "proj"] {
        let row = try #require(rows[name + "/"])
        #expect(row.included + row.excluded == Self.du(root + "/" + name), "\(name): \(row)")
      }
      #expect(rows["big/"]?.excluded == 0)
      #expect(rows["cache/"]?.included == 0)
      #expect(rows["cache/"]?.why == "marked: xdg")
      #expect(rows["proj/"]?.excluded == Self.du(root + "/proj/node_modules"))
      // Sorted by backed-up size: the largest first.
      let order = screen.compactMap { line in
        ["big/", "small/", "proj/"].first { line.hasSuffix(" " + $0) }
      }
      #expect(order == ["big/", "small/", "proj/"])
      // n sorts by name, n again reverses it, s goes back to size.
      func names(_ screen: [String]) -> [String] {
        screen.compactMap { line in
          ["big/", "cache/", "proj/", "small/"].first { line.hasSuffix(" " + $0) }
        }
      }
      session.keys("n")
      #expect(names(session.waitFor("items by name")) == ["big/", "cache/", "proj/", "small/"])
      session.keys("n")
      #expect(names(session.waitFor("name, Z first")) == ["small/", "proj/", "cache/", "big/"])
      session.keys("s")
      #expect(names(session.waitFor("items by size")) == ["big/", "small/", "proj/", "cache/"])
      // The totals of ROOT are du's.
      let totals = try #require(screen.first { $0.contains("Backup here:") })
      let numbers = totals.split { !$0.isNumber }.compactMap { Int64($0) }
      #expect(numbers.count == 2 && numbers[0] + numbers[1] == Self.du(root), "\(totals)")
      // The names with escape sequences changed nothing: row 0 is still the
      // title, nothing is red, no title was set.
      #expect(screen[0].contains("skipbackup browse:"))
      let colored = session.tmux("capture-pane", "-p", "-e", "-t", "0").output
      #expect(!colored.contains("\u{1B}[31m"))
      #expect(session.tmux("display-message", "-p", "-t", "0", "#{pane_title}").output != "pwned\n")

      // Into proj: the swept node_modules says so; under it, where it comes from.
      _ = Self.select("proj/", in: session)
      session.keys("Enter")
      screen = session.waitFor("node_modules/")
      let inner = Self.rows(screen)
      let modules = try #require(inner["node_modules/"])
      #expect(modules.why == "swept: node_modules")
      #expect(modules.included == 0)
      #expect(modules.excluded == Self.du(root + "/proj/node_modules"))
      _ = Self.select("node_modules/", in: session)
      session.keys("Enter")
      screen = session.waitFor("dep/")
      #expect(Self.rows(screen)["dep/"]?.why == "in proj/node_modules/")
      session.keys("BSpace", "BSpace")
      session.waitFor("cache/")
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func markClearAndUndoChangeTheAttributes() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root, "--confirm-above 100M")
      var screen = Self.exactBytes(session)
      let big = root + "/big"
      // The top row is the largest backed-up directory: m marks it (resource,
      // as skipbackup mark does without -m).
      #expect(Self.rows(screen)["big/"]?.included == Self.du(big))
      let before = try #require(screen.first { $0.contains("Backup here:") })
        .split { !$0.isNumber }.compactMap { Int64($0) }
      _ = Self.select("big/", in: session)
      session.keys("m")
      screen = session.waitFor("marked big")
      #expect(peerMarks(big) == [.resource])
      var rows = Self.rows(screen)
      #expect(rows["big/"]?.included == 0)
      #expect(rows["big/"]?.excluded == Self.du(big))
      #expect(rows["big/"]?.why == "marked: resource")
      // The backup's size on row 2 dropped by what big holds, and all of
      // ROOT still adds up to du -s -B1.
      let totals = try #require(screen.first { $0.contains("Backup here:") })
        .split { !$0.isNumber }.compactMap { Int64($0) }
      #expect(totals.count == 2 && totals[0] == Self.du(root) - totals[1], "\(totals)")
      #expect(totals.count == 2 && totals[1] == before[1] + Self.du(big), "\(totals) \(before)")
      // u takes it back.
      session.keys("u")
      screen = session.waitFor("undone")
      #expect(peerMarks(big) == [])
      #expect(Self.rows(screen)["big/"]?.included == Self.du(big))

      // c on the hand-marked cache clears it as clear does (all three
      // attribute marks): what stays out is cache/sub, marked inside it.
      _ = Self.select("cache/", in: session)
      let ctimeBefore = changeTime(root + "/cache/sub")
      session.keys("c")
      screen = session.waitFor("cleared cache")
      #expect(peerMarks(root + "/cache") == [])
      #expect(peerMarks(root + "/cache/sub") == [.legacy])
      #expect(changeTime(root + "/cache/sub") == ctimeBefore)
      rows = Self.rows(screen)
      #expect(rows["cache/"]?.excluded == Self.du(root + "/cache/sub"))
      #expect(
        (rows["cache/"]?.included ?? 0) + (rows["cache/"]?.excluded ?? 0)
          == Self.du(root + "/cache"))
      session.keys("u")
      session.waitFor("undone")
      #expect(peerMarks(root + "/cache") == [.xdg])

      // c on the swept node_modules takes the sweep's mark and record away;
      // u puts both back.
      let modules = root + "/proj/node_modules"
      let record = "user.skipbackup.sweep.resource:node_modules"
      #expect(getfattr(modules, record) != nil)
      _ = Self.select("proj/", in: session)
      session.keys("Enter")
      session.waitFor("node_modules/")
      _ = Self.select("node_modules/", in: session)
      session.keys("c")
      session.waitFor("cleared proj/node_modules")
      #expect(peerMarks(modules) == [])
      #expect(getfattr(modules, record) == nil)
      session.keys("u")
      screen = session.waitFor("undone")
      #expect(peerMarks(modules) == [.resource])
      #expect(getfattr(modules, record) != nil)
      #expect(Self.rows(screen)["node_modules/"]?.why == "swept: node_modules")
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func markingAMarkedItemKeepsItsCtime() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root, "-m xdg")
      _ = Self.select("cache/", in: session)
      let before = changeTime(root + "/cache")
      session.keys("m")
      session.waitFor("already marked")
      #expect(changeTime(root + "/cache") == before)
      #expect(peerMarks(root + "/cache") == [.xdg])
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func aLargeDirectoryAsksFirst() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root, "--confirm-above 100K")
      _ = Self.select("big/", in: session)
      session.keys("m")
      session.waitFor("y to mark")
      session.keys("n")
      session.waitFor("not marked")
      #expect(peerMarks(root + "/big") == [])
      session.keys("m")
      session.waitFor("y to mark")
      session.keys("y")
      session.waitFor("marked big")
      #expect(peerMarks(root + "/big") == [.resource])
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func quitAndSignalsLeaveTheTerminalAsItWas() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root)
      session.keys("?")
      session.waitFor("Any key closes this help")
      session.keys("x")
      session.waitFor("items by size")
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
      let before = session.waitForFile("before")
      #expect(before != nil)
      #expect(session.waitForFile("after") == before)

      // SIGTERM, and SIGSEGV as a crash raises it: the process dies by
      // the signal, and the terminal is put back.
      for signal in [SIGTERM, SIGSEGV] {
        let killed = try Self.browse(root)
        let shell = killed.tmux("display-message", "-p", "-t", "0", "#{pane_pid}").output
        let child = run([
          "pgrep", "-P", Argument(shell.trimmingCharacters(in: .whitespacesAndNewlines)),
        ])
        let pid = try #require(
          Int32(child.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, signal) == 0)
        #expect(killed.waitForFile("status") == "\(128 + signal)\n")
        #expect(killed.waitForFile("after") == killed.waitForFile("before"))
        #expect(!killed.screen().contains { $0.contains("items by size") })
      }

      // Ctrl-C: SIGINT, the same.
      let interrupted = try Self.browse(root)
      interrupted.keys("C-c")
      #expect(interrupted.waitForFile("status") == "\(128 + SIGINT)\n")
      #expect(interrupted.waitForFile("after") == interrupted.waitForFile("before"))
    }

    @Test func redrawsAtANewSize() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let session = try Self.browse(root)
      #expect(session.tmux("resize-window", "-t", "0", "-x", "80", "-y", "24").status == 0)
      let screen = session.waitFor {
        $0.count == 24 && $0[0].hasSuffix("? help") && $0[0].count <= 80
      }
      #expect(screen.count == 24)
      #expect(screen[0].count == 78, "\(screen[0])")
      #expect(screen.last?.contains("items by size") == true)
      #expect(Self.rows(screen).isEmpty)  // human sizes, not bytes
      #expect(screen.contains { $0.hasSuffix(" big/") })
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func unreadableItemsShowAsSuchAndVanishedOnesGo() throws {
      let tree = try TemporaryDirectory()
      let root = Self.makeTree(tree)
      let locked = tree.directory("root/locked")
      tree.file("root/locked/inside", String(repeating: "l", count: 10_000))
      #expect(chmod(locked, 0o700) == 0)
      // As nobody, who may not read root's 0700 directory.
      let session = try TmuxSession(
        "setpriv --reuid=nobody --regid=nogroup --clear-groups \"$SKIPBACKUP\" browse '\(root)'\n"
          + "echo $? > \"$SCRATCH/status\"")
      var screen = session.waitFor("could not be read")
      #expect(screen.last?.contains("1 item could not be read") == true)
      #expect(screen.contains { $0.contains("! unreadable") && $0.hasSuffix(" locked/") })
      _ = Self.select("locked/", in: session)
      session.keys("Enter")
      screen = session.waitFor("(could not be read)")
      // A mark nobody may not write: the screen says why, and after q the
      // exit status is 1, with a line on standard error.
      session.keys("BSpace")
      session.waitFor("big/")
      _ = Self.select("big/", in: session)
      session.keys("m")
      screen = session.waitFor("big: permission denied: changing its attributes needs write")
      #expect(peerMarks(root + "/big") == [])
      session.keys("q")
      #expect(session.waitForFile("status") == "1\n")
      #expect(
        session.waitFor("change of marks failed").contains {
          $0 == "skipbackup: 1 change of marks failed in browse (the screen said why)"
        })

      // An item gone since the walk: m says so, looks for it once more, and
      // drops its row and its bytes, as a walk leaves out what is gone.
      tree.file("root/gone/data", String(repeating: "g", count: 5_000))
      let again = try Self.browse(root)
      let before = Self.exactBytes(again)
      let rowsBefore = Self.rows(before).count
      #expect(rowsBefore > 1, "\(before)")
      #expect(run(["rm", "-rf", Argument(root + "/gone")]).status == 0)
      _ = Self.select("gone/", in: again)
      again.keys("m")
      screen = again.waitFor("/root/gone: ")
      #expect(!screen.contains { $0.contains("vanished") || $0.hasSuffix(" gone/") })
      #expect(Self.rows(screen).count == rowsBefore - 1)
      let totals = try #require(screen.first { $0.contains("Backup here:") })
        .split { !$0.isNumber }.compactMap { Int64($0) }
      #expect(totals.count == 2 && totals[0] + totals[1] == Self.du(root), "\(totals)")
      again.keys("q")
      // The mark asked for was not made: 1.
      #expect(again.waitForFile("status") == "1\n")
    }

    /// An entry gone between its directory's listing and its visit (moved
    /// away just before its fstatat, SKIPBACKUP_RACE): looked up again at
    /// the end of the walk, as every command does. Gone for good, it is not
    /// shown; moved back by then, it is shown as it is.
    @Test func anEntryGoneDuringTheWalkIsLookedUpAgain() throws {
      for back in [false, true] {
        let tree = try TemporaryDirectory()
        let root = tree.directory("root")
        tree.file("root/only", String(repeating: "o", count: 5_000))
        let away = tree.file(
          "away.sh", "#!/bin/sh\nmv '\(root)/only' '\(tree.path)/only'\n")
        let again = tree.file(
          "back.sh", "#!/bin/sh\nmv '\(tree.path)/only' '\(root)/only'\n")
        #expect(chmod(away, 0o755) == 0 && chmod(again, 0o755) == 0)
        let races = "fstatat:3:\(away)" + (back ? ",fstatat:4:\(again)" : "")
        let session = try Self.browse(root, race: races)
        let screen = session.waitFor("items by size")
        #expect(!screen.contains { $0.contains("vanished") }, "\(screen.joined(separator: "\n"))")
        if back {
          #expect(screen.last?.contains(" 1 items by size") == true)
          #expect(screen.contains { $0.hasSuffix(" only") })
        } else {
          #expect(screen.last?.contains(" 0 items by size") == true)
          #expect(screen.contains { $0.contains("(empty)") })
          #expect(FileManager.default.fileExists(atPath: tree.path + "/only"))
        }
        session.keys("q")
        #expect(session.waitForFile("status") == "0\n")
      }
    }

    @Test func aDirectoryOnTheWaySwappedForALinkLeadsNoMarkOut() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/way/inner/data", String(repeating: "w", count: 10_000))
      tree.file("outside/inner/data", String(repeating: "o", count: 10_000))
      let session = try Self.browse(root)
      _ = Self.select("way/", in: session)
      session.keys("Enter")
      session.waitFor("inner/")
      // Since the screen was drawn: way is now a link to a directory outside ROOT.
      #expect(rename(root + "/way", root + "/way.old") == 0)
      #expect(symlink(tree.path + "/outside", root + "/way") == 0)
      _ = Self.select("inner/", in: session)
      session.keys("m")
      let screen = session.waitFor("/root/way: not a directory (openat")
      #expect(screen.contains { $0.hasSuffix(" inner/") }, "\(screen.joined(separator: "\n"))")
      #expect(getfattrDump(tree.path + "/outside/inner") == [])
      #expect(getfattrDump(tree.path + "/outside") == [])
      #expect(getfattrDump(root + "/way.old/inner") == [])
      session.keys("q")
      // A change asked for and not made: 1.
      #expect(session.waitForFile("status") == "1\n")
    }

    @Test func aRootBelowAMarkedDirectoryIsLeftOutWhole() throws {
      let tree = try TemporaryDirectory()
      setfattr(tree.directory("outer"), .xdg)
      let root = tree.directory("outer/root")
      tree.file("outer/root/data", String(repeating: "d", count: 20_000))
      let session = try Self.browse(root)
      let screen = Self.exactBytes(session)
      let row = try #require(Self.rows(screen)["data"], "\(screen.joined(separator: "\n"))")
      #expect(row.included == 0)
      #expect(row.excluded == Self.du(root + "/data"))
      // The marked directory's path, cut to the Why column's width.
      #expect(row.why.hasPrefix("in /"), "\(row)")
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    /// m reads the item's attribute names once before the change and once
    /// after it: the change's effect and the row come from those two
    /// listings. Counted with SKIPBACKUP_RACE: a program before each
    /// listxattrat adds a line to a file.
    @Test func aMarkListsTheItemsAttributesTwiceBesideMarksOwn() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/dir/data", String(repeating: "d", count: 5_000))
      let log = tree.path + "/calls"
      let counter = tree.file("count.sh", "#!/bin/sh\necho x >> '\(log)'\n")
      #expect(chmod(counter, 0o755) == 0)
      let races = (1...60).map { "listxattrat:\($0):\(counter)" }.joined(separator: ",")
      let session = try Self.browse(root, race: races)
      func calls() -> Int {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").count { $0 == "\n" }
      }
      let walked = calls()
      session.keys("m")
      session.waitFor("marked dir")
      #expect(peerMarks(root + "/dir") == [.resource])
      // mark's own code lists the names to remove a sweep's record: 1; the
      // browser's state before and after: 2.
      #expect(calls() - walked == 3, "\(calls() - walked) listings for one m")
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    /// -m cachedir writes a CACHEDIR.TAG, no item of the tree: its bytes
    /// count in its directory's own, so that the row still adds up to du.
    @Test func aCacheDirectoryTagCountsInItsDirectory() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/cache/data", String(repeating: "c", count: 20_000))
      let session = try Self.browse(root, "-m cachedir")
      var screen = Self.exactBytes(session)
      _ = Self.select("cache/", in: session)
      session.keys("m")
      screen = session.waitFor("marked cache")
      #expect(FileManager.default.fileExists(atPath: root + "/cache/CACHEDIR.TAG"))
      let row = try #require(Self.rows(screen)["cache/"], "\(screen.joined(separator: "\n"))")
      #expect(row.why == "marked: cachedir")
      #expect(row.included == 0)
      #expect(row.excluded == Self.du(root + "/cache"))
      session.keys("q")
      #expect(session.waitForFile("status") == "0\n")
    }

    @Test func anUnknownTerminalIsRefused() throws {
      let tree = try TemporaryDirectory()
      let session = try TmuxSession(
        "TERM=no-such-terminal \"$SKIPBACKUP\" browse '\(tree.path)' 2> \"$SCRATCH/errors\"\n"
          + "echo $? > \"$SCRATCH/status\"")
      #expect(session.waitForFile("status") == "1\n")
      #expect(
        session.waitForFile("errors")
          == "skipbackup: browse cannot drive this terminal: terminfo does not know its type (TERM), or it cannot move the cursor\n"
      )
    }

    @Test func refusesWithoutATerminal() throws {
      let tree = try TemporaryDirectory()
      let result = skipbackup("browse", Argument(tree.path))
      #expect(result.status == 1)
      #expect(result.output.isEmpty)
      #expect(
        result.errors
          == "skipbackup: browse needs a terminal: standard output is not a terminal (skipbackup du prints the same sizes as text)\n"
      )
    }
  }
}
