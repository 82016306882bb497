import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Where `export` writes: `-o` into a sticky directory where another user
/// keeps changing what the name is, and a terminal.
@Suite(.onTestThreads) struct ExportOutputTests {
  /// A ROOT with one marked file, a sticky directory everyone may write,
  /// and root's 0600 file outside it that another user's link points at.
  private struct StickyPlace {
    let tree: TemporaryDirectory
    var root: String { tree.path + "/root" }
    var shared: String { tree.path + "/shared" }
    var output: String { shared + "/out" }
    var victim: String { tree.path + "/victim" }
    var ran: String { tree.path + "/toggled" }
    static let secret = "root only\n"

    init(in base: String = scratch) throws {
      tree = try TemporaryDirectory(in: base)
      tree.file("root/d/marked")
      setfattr(tree.path + "/root/d/marked", .legacy)
      Make.directory(Bytes(shared))
      chmod(shared, 0o1777)
      tree.file("victim", Self.secret)
      chmod(victim, 0o600)
    }

    /// A script that, as nobody, puts a link to the victim at the output
    /// path when there is none and takes it away when there is, and counts
    /// itself in `ran`: the other user of the race.
    func toggle() -> String {
      tree.file(
        "toggle.sh",
        """
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- sh -c \
          'if [ -L "$1" ]; then rm "$1"; else ln -s "$2" "$1"; fi' toggle '\(output)' '\(victim)'
        echo >> '\(ran)'
        """)
    }

    /// Puts nobody's link to the victim at the output path, or takes
    /// whatever is there away.
    func reset(linked: Bool) throws {
      _ = run(["rm", "-f", Argument(output)])
      if linked {
        try check(run(["ln", "-s", Argument(victim), Argument(output)], asNobody: true))
      }
    }

    /// The victim is as root left it: its bytes, and the same file.
    func victimIsUntouched(_ inode: ino_t, _ context: String) -> Bool {
      var status = stat()
      let contents = try? String(contentsOfFile: victim, encoding: .utf8)
      let same = lstat(victim, &status) == 0 && status.st_ino == inode
      #expect(contents == Self.secret && same, "the victim was written: \(context)")
      return contents == Self.secret && same
    }

    /// What one `export -o` may end in: refused by a line that names the
    /// output, or root's rules in a file of root's at the output path.
    func outcomeIsHonest(_ result: ProcessResult, _ context: String) {
      if result.status == 0 {
        var status = stat()
        let rules = try? String(contentsOfFile: output, encoding: .utf8)
        #expect(
          lstat(output, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_uid == 0
            && rules == "/d/marked\0", "\(context): \(result)")
      } else {
        #expect(result.status == 1, "\(context): \(result)")
        #expect(
          result.errors.hasPrefix("skipbackup: \(output): ")
            && result.errors.split(separator: "\n").count == 1, "\(context): \(result)")
      }
    }
  }

  /// Root's `export -o` into a sticky directory while another user puts a
  /// link to root's file at the output path and takes it away, at each of
  /// the calls before the output is in place (`SKIPBACKUP_RACE` runs the
  /// toggle just before the Nth call of each): the file the link points at
  /// is never written, whatever the link did between a look and an open.
  /// The look and the open by path left a window: with the link there at
  /// the first look, gone at the second and back at the open, root
  /// replaced its own file with the rules.
  @Test func anotherUsersLinkToggledDuringTheOpenIsNeverWrittenThrough() throws {
    let place = try StickyPlace()
    var status = stat()
    #expect(lstat(place.victim, &status) == 0)
    let inode = status.st_ino
    let toggle = place.toggle()
    // Points that come before the output is in place, before and after
    // the open went by descriptor (read with strace): the looks, the opens,
    // and the link that names the new file; and each look with each open.
    var points: [[String]] = [["linkat:1"]]
    for number in 1...2 { points.append(["fstatat:\(number)"]) }
    for number in 1...4 { points.append(["openat:\(number)"]) }
    for first in 1...4 {
      for second in 1...3 { points.append(["fstatat:\(first)", "openat:\(second)"]) }
    }
    var fired: Set<[String]> = []
    for linked in [true, false] {
      for point in points {
        try place.reset(linked: linked)
        _ = run(["rm", "-f", Argument(place.ran)])
        let race = point.map { "\($0):\(toggle)" }.joined(separator: ",")
        let result = run(
          [
            Argument(skipbackupPath), "export", "--for", "rsync", "-o", Argument(place.output),
            Argument(place.root),
          ], environment: ["SKIPBACKUP_RACE": race])
        let context = "linked \(linked), toggled before \(point)"
        if FileManager.default.fileExists(atPath: place.ran) { fired.insert(point) }
        guard place.victimIsUntouched(inode, context) else { return }
        place.outcomeIsHonest(result, context)
      }
    }
    // Each toggle leaves a line: a race that never ran proves nothing. A
    // refusal at the look ends the run before the later points, so each
    // point must run from one of the two starts.
    let missed = points.filter { !fired.contains($0) }
    #expect(missed.isEmpty, "these toggles never ran: \(missed)")
  }

  /// The same race as it happens: nobody toggles the link in a loop of
  /// its own while root exports again and again.
  @Test func anotherUsersLinkToggledInALoopIsNeverWrittenThrough() throws {
    let place = try StickyPlace()
    let rounds = 100
    let script = """
      setpriv --reuid=nobody --regid=nogroup --clear-groups -- sh -c \
        'while :; do ln -s "$1" "$2" 2>/dev/null; rm -f "$2"; done' toggle "$VICTIM" "$OUT" &
      toggler=$!
      written=0
      i=0
      while [ $i -lt \(rounds) ]; do
        if "$SKIPBACKUP" export --for rsync -o "$OUT" "$ROOT" 2>/dev/null; then
          written=$((written + 1))
        fi
        # Root's own output stays there until root takes it away.
        [ -L "$OUT" ] || rm -f "$OUT"
        i=$((i + 1))
      done
      kill $toggler
      wait $toggler
      echo $written
      cat "$VICTIM"
      """
    let result = run(
      ["sh", "-c", Argument(script)],
      environment: [
        "SKIPBACKUP": skipbackupPath, "VICTIM": place.victim, "OUT": place.output,
        "ROOT": place.root,
      ])
    #expect(result.lines.dropFirst() == ["root only"], "\(result)")
    #expect(Int(result.lines.first ?? "") != nil, "\(result)")
  }

  /// A name that would write the clipboard (OSC 52), retitle the window
  /// (OSC 0, and its C1 form) reaches a terminal from
  /// `export` escaped, as from `status`; piped, the rules hold its bytes.
  /// The links to a descriptor that the kernel keeps, in directories only
  /// root may write, are followed and written in place: the rules reach
  /// standard output as `export` without `-o` prints them, as root and as
  /// nobody (whose /proc/self/fd is their own, mode 0500).
  @Test(arguments: ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
  func aLinkToADescriptorIsWrittenThrough(output: String) throws {
    let place = try StickyPlace()
    let expected = try check(skipbackup("export", "--for", "rsync", Argument(place.root)))
    #expect(!expected.standardOutput.isEmpty)
    for nobody in [false, true] {
      // Through sh, so that standard output is a pipe of the user's own:
      // nobody may not open root's.
      let result = run(
        [
          "sh", "-c", "\"$0\" export --for rsync -o \"$1\" \"$2\" | cat", Argument(skipbackupPath),
          Argument(output), Argument(place.root),
        ], asNobody: nobody)
      #expect(
        result.status == 0 && result.errors.isEmpty, "\(output), nobody: \(nobody): \(result)")
      #expect(result.standardOutput == expected.standardOutput, "\(output), nobody: \(nobody)")
    }
  }

  /// A link is followed only where no user but root may write: in root's
  /// own 0700 directory it is, in nobody's directory (root's `export -o`
  /// there) it is refused, and the file it names is untouched; under /tmp
  /// and /dev/shm alike (under /dev, nobody's link was once followed).
  @Test(arguments: ["/tmp", "/dev/shm"])
  func aLinkIsFollowedOnlyWhereNoUserButRootMayWrite(in base: String) throws {
    let place = try StickyPlace(in: base)
    let roots = place.tree.directory("roots")
    chmod(roots, 0o700)
    let target = place.tree.file("target", "old\n")
    symlink(target, roots + "/rules")
    let followed = skipbackup(
      "export", "--for", "rsync", "-o", Argument(roots + "/rules"), Argument(place.root))
    #expect(followed.status == 0, "\(followed)")
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "/d/marked\0")
    let nobodys = place.tree.directory("nobodys")
    try check(run(["chown", "nobody:nogroup", Argument(nobodys)]))
    try check(
      run(["ln", "-s", Argument(place.victim), Argument(nobodys + "/rules")], asNobody: true))
    let refused = skipbackup(
      "export", "--for", "rsync", "-o", Argument(nobodys + "/rules"), Argument(place.root))
    #expect(refused.status == 1, "\(refused)")
    #expect(
      refused.errors.hasPrefix("skipbackup: \(nobodys): another user owns this directory"),
      "\(refused)")
    #expect(try String(contentsOfFile: place.victim, encoding: .utf8) == StickyPlace.secret)
  }

  /// Another user's directory, `chmod 555` after a link to root's file was
  /// planted in it: its owner may not write it now, but may make it
  /// writable again at any time, so it is not a place only root can have
  /// put the link. Root's `export -o` there is refused with one line that
  /// names the directory, exit 1, and the file the link names is untouched.
  @Test func aLinkInAnotherUsersReadOnlyDirectoryIsNotFollowed() throws {
    let place = try StickyPlace()
    let trap = place.tree.directory("trap")
    try check(run(["chown", "nobody:nogroup", Argument(trap)]))
    try check(run(["ln", "-s", Argument(place.victim), Argument(trap + "/rules")], asNobody: true))
    try check(run(["chmod", "555", Argument(trap)], asNobody: true))
    var status = stat()
    #expect(lstat(place.victim, &status) == 0)
    let result = skipbackup(
      "export", "--for", "rsync", "-o", Argument(trap + "/rules"), Argument(place.root))
    #expect(result.status == 1, "\(result)")
    #expect(result.standardOutput.isEmpty, "\(result)")
    #expect(
      result.errors.hasPrefix("skipbackup: \(trap): another user owns this directory")
        && result.errors.split(separator: "\n").count == 1, "\(result)")
    _ = place.victimIsUntouched(status.st_ino, "0555 trap")
  }

  /// A symbolic link as FILE's parent, put by another user in a sticky
  /// directory everyone may write (as /tmp): with `fs.protected_symlinks=0`
  /// (as here, and in many containers) the kernel follows it for root, so
  /// root's `export -o /tmp/LINK/rules` would replace root's own file in
  /// the directory the link names. It is refused by its place, whatever the
  /// sysctl says, and nothing there is written.
  @Test func anotherUsersLinkAsTheParentInStickyTmpIsNotFollowed() throws {
    let place = try StickyPlace()
    let privateDirectory = place.tree.directory("private")
    chmod(privateDirectory, 0o700)
    let victim = place.tree.file("private/rules", StickyPlace.secret)
    let link = "/tmp/skipbackup-parent-link-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try check(run(["ln", "-s", Argument(privateDirectory), Argument(link)], asNobody: true))
    defer { unlink(link) }
    var status = stat()
    #expect(lstat(victim, &status) == 0)
    let result = skipbackup(
      "export", "--for", "rsync", "-o", Argument(link + "/rules"), Argument(place.root))
    #expect(result.status == 1, "\(result)")
    #expect(
      result.errors.hasPrefix("skipbackup: \(link): a symbolic link on the way")
        && result.errors.split(separator: "\n").count == 1, "\(result)")
    let contents = try String(contentsOfFile: victim, encoding: .utf8)
    var after = stat()
    #expect(lstat(victim, &after) == 0)
    #expect(contents == StickyPlace.secret && after.st_ino == status.st_ino, "victim written")
  }

  /// What the rule leaves alone: root into its own directories, through a
  /// link of its own on the way and a relative FILE; an ordinary user into
  /// a directory of their own below root's; both get the rules.
  @Test func filesInPlacesOnlyRootOrTheUserOwnAreWritten() throws {
    let place = try StickyPlace()
    let expected = "/d/marked\0"
    let mine = place.tree.directory("mine/deeper")
    chmod(place.tree.path + "/mine", 0o700)
    symlink("mine/deeper", place.tree.path + "/via")
    for output in [mine + "/rules", place.tree.path + "/via/linked"] {
      let result = skipbackup(
        "export", "--for", "rsync", "-o", Argument(output), Argument(place.root))
      #expect(result.status == 0 && result.errors.isEmpty, "\(output): \(result)")
      #expect(
        try String(
          contentsOfFile: mine + "/" + (output as NSString).lastPathComponent, encoding: .utf8)
          == expected)
    }
    let relative = run(
      [
        Argument(skipbackupPath), "export", "--for", "rsync", "-o", "relative",
        Argument(place.root),
      ],
      directory: mine)
    #expect(relative.status == 0 && relative.errors.isEmpty, "\(relative)")
    #expect(try String(contentsOfFile: mine + "/relative", encoding: .utf8) == expected)

    let nobodys = place.tree.directory("nobodys")
    try check(run(["chown", "nobody:nogroup", Argument(nobodys)]))
    let asNobody = run(
      [
        Argument(skipbackupPath), "export", "--for", "rsync", "-o", Argument(nobodys + "/rules"),
        Argument(place.root),
      ], asNobody: true)
    #expect(asNobody.status == 0 && asNobody.errors.isEmpty, "\(asNobody)")
    #expect(try String(contentsOfFile: nobodys + "/rules", encoding: .utf8) == expected)
  }

  @Test func namesAreEscapedOnATerminalAndByteExactWhenPiped() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    let names = [
      "clip\u{1b}]52;c;cHduZWQ=\u{07}", "title\u{1b}]0;pwned\u{07}", "c1\u{9d}0;pwned\u{9c}",
    ]
    for name in names {
      let path = tree.file(named: Array(name.utf8), in: "root")
      setfattr(path, .legacy)
    }
    for tool in ["rsync", "tar", "restic", "borg"] {
      let shown = python(
        CLITests.StatusTests.onATerminal,
        [Argument(root), Argument(skipbackupPath), "export", "--for", Argument(tool), "."]
      ).standardOutput
      let text = String(decoding: shown, as: UTF8.self)
      #expect(!shown.contains(0x1B) && !shown.contains(0x07), "\(tool): \(text)")
      #expect(
        !text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(tool): \(text)")
      #expect(text.contains("clip\\x1b") && text.contains("52;c;cHduZWQ=\\x07"), "\(tool): \(text)")
      #expect(text.contains("\\xc2\\x9d0;pwned\\xc2\\x9c"), "\(tool): \(text)")

      let piped = try check(skipbackup("export", "--for", Argument(tool), Argument(root)))
      // restic's rules escape the ] of a name; the others hold it as it is.
      #expect(piped.standardOutput.contains(0x1B), "\(tool): \(piped)")
      for name in names where tool != "restic" {
        #expect(piped.standardOutput.firstRange(of: Array(name.utf8)) != nil, "\(tool): \(name)")
      }
    }
  }
}
