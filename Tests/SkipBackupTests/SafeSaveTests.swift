import Foundation
import SkipBackup
import Synchronization
import Testing
import TestSupport

/// Saving replaces the file with a new inode; the mark must be on it before
/// it takes the old one's place.
@Suite(.onTestThreads) struct SafeSaveTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  @Test func aNewFileIsWrittenMarked() throws {
    let path = tree.path + "/new.db"
    try FilePath(path).writeExcludedFromBackup(Array("contents".utf8))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "contents")
    #expect(getfattrHex(path, Names.resource) == "0x" + Names.resourceValueHex)
    // Nothing left behind.
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["new.db"])
  }

  @Test func anOldFileLendsItsPermissionsAndAttributes() throws {
    let path = tree.file("old.db", "old")
    chmod(path, 0o640)
    setfattr(path, "user.keep", hex: "6b656570")
    try FilePath(path).writeExcludedFromBackup(Array("new".utf8), mechanism: .legacy)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
    var status = stat()
    stat(path, &status)
    #expect(status.st_mode & 0o7777 == 0o640)
    #expect(getfattrHex(path, "user.keep") == "0x6b656570")
    #expect(getfattrHex(path, Names.legacy) == "0x01")
  }

  @Test func dataWritesLikeAnAtomicWrite() throws {
    let url = URL(fileURLWithPath: tree.path + "/data.bin")
    try Data([1, 2, 3]).writeExcludedFromBackup(to: url)
    #expect(try Data(contentsOf: url) == Data([1, 2, 3]))
    #expect(try url.isExcludedFromBackup)
  }

  /// A reader that looks at the file over and over while it is saved again
  /// and again never sees it without its mark.
  @Test func thereIsNoInstantAtWhichTheFileIsUnmarked() throws {
    let path = tree.path + "/watched.db"
    try FilePath(path).writeExcludedFromBackup(Array("0".utf8))
    let done = Atomic<Bool>(false)
    let looks = Atomic<Int>(0)
    let unmarked = Atomic<Int>(0)
    let observer = BackgroundThread {
      while !done.load(ordering: .relaxed) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { continue }
        let opened = ExtendedAttributes(
          of: FileItem(
            descriptor: FileDescriptor(rawValue: descriptor), displayPath: FilePath(path)))
        if (try? opened.contains(Mechanism.resource.attributeName!)) != true {
          unmarked.add(1, ordering: .relaxed)
        }
        close(descriptor)
        looks.add(1, ordering: .relaxed)
      }
    }
    while looks.load(ordering: .relaxed) == 0 { usleep(100) }
    for round in 1...300 {
      try FilePath(path).writeExcludedFromBackup(Array("\(round)".utf8))
    }
    done.store(true, ordering: .relaxed)
    observer.wait()
    #expect(looks.load(ordering: .relaxed) > 100)
    #expect(unmarked.load(ordering: .relaxed) == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["watched.db"])
  }

  @Test func aCopyCarriesTheMarks() throws {
    let source = tree.file("source.db", "payload")
    chmod(source, 0o600)
    setfattr(source, Names.legacy, hex: "01")
    setfattr(source, Names.resource, hex: Names.resourceValueHex)
    let destination = tree.path + "/copy.db"
    try FilePath(source).copyKeepingMarks(to: FilePath(destination))
    #expect(try String(contentsOfFile: destination, encoding: .utf8) == "payload")
    #expect(getfattrHex(destination, Names.legacy) == "0x01")
    #expect(getfattrHex(destination, Names.resource) == "0x" + Names.resourceValueHex)
    var status = stat()
    stat(destination, &status)
    #expect(status.st_mode & 0o7777 == 0o600)

    // Copying over a file replaces its attributes with the source's.
    let unmarkedSource = tree.file("plain", "plain")
    try FilePath(unmarkedSource).copyKeepingMarks(to: FilePath(destination))
    #expect(try MechanismSet.all.isMarked(FileItem(path: FilePath(destination))) == false)
  }

  /// libattr's default copy leaves out `system.posix_acl_*` ("permissions"
  /// in /etc/xattr.conf); a save keeps them, as getfacl shows.
  @Test func aSaveKeepsThePOSIXACL() throws {
    let path = tree.file("shared.db", "old")
    chmod(path, 0o640)
    let granted = run(["setfacl", "-m", "u:nobody:rw", Argument(path)])
    try #require(granted.status == 0, "setfacl (Debian acl): \(granted)")
    let before = run(["getfacl", "-cn", Argument(path)]).output
    try #require(before.contains("user:65534:rw-"), "\(before)")
    try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
    #expect(run(["getfacl", "-cn", Argument(path)]).output == before)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
    // And the ACL works: nobody may write the saved file.
    #expect(probe("set", Argument(path), "user.by-nobody", "01", asNobody: true).status == 0)
  }

  /// nobody may replace root's 0600 file in a 0777 directory, but cannot
  /// read its attributes: the save fails naming the one it would lose, and
  /// leaves the old file and no temporary file behind.
  @Test func aSaveThatWouldLoseAnAttributeFailsNamingIt() throws {
    let directory = tree.directory("open")
    chmod(directory, 0o777)
    let path = tree.file("open/root.db", "old")
    chmod(path, 0o600)
    setfattr(path, "user.keep", hex: "6b656570")
    let result = probe("save", Argument(path), "3", asNobody: true)
    #expect(result.status == 1, "\(result)")
    #expect(
      result.lines.first?.hasPrefix(path + ": the attribute user.keep cannot be read") == true,
      "\(result)")
    #expect(result.lines.first?.contains("nothing was replaced") == true, "\(result)")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
    #expect(getfattrHex(path, "user.keep") == "0x6b656570")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["root.db"])

    // Without attributes to lose, the same save goes through.
    let plain = tree.file("open/plain.db", "old")
    chmod(plain, 0o600)
    let saved = probe("save", Argument(plain), "3", asNobody: true)
    #expect(saved.status == 0, "\(saved)")
    #expect(getfattrHex(plain, Names.resource) == "0x" + Names.resourceValueHex)
  }

  /// A killed save leaves at most its hidden `.skipbackup-save-N`, which is
  /// unlocked once its process is dead; the next save in the directory
  /// removes it, and leaves alone one that a live save holds locked.
  @Test func theNextSaveRemovesADeadSavesFileButNotALiveOnes() throws {
    let path = tree.file("target.db", "old")
    let dead = tree.file(".skipbackup-save-0", "torn")
    let live = tree.file(".skipbackup-save-1", "in progress")
    // flock(1) holds the lock as a save in progress does, until it is
    // killed. --no-fork makes the lock's holder the process that is killed,
    // and SIGKILL kills it: the test runner's children may inherit SIGTERM
    // blocked (strace: `sleep` outlived a SIGTERM by its whole minute).
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    holder.arguments = ["--no-fork", "--exclusive", live, "sleep", "60"]
    try holder.run()
    func killHolder() {
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    defer { killHolder() }
    var tries = 0
    while run(["flock", "--nonblock", "--shared", Argument(live), "true"]).status == 0
      && tries < 500
    {
      usleep(10_000)
      tries += 1
    }
    try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
    #expect(!FileManager.default.fileExists(atPath: dead))
    #expect(try String(contentsOfFile: live, encoding: .utf8) == "in progress")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")

    killHolder()
    try FilePath(path).writeExcludedFromBackup(Array("newer".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["target.db"])
  }

  /// Through a link to a file the save writes that file; a dangling link
  /// or a loop is refused, and the link stays a link.
  @Test func aSaveThroughASymbolicLinkNeverTurnsTheLinkIntoAFile() throws {
    let real = tree.file("real.db", "old")
    symlink("real.db", tree.path + "/link.db")
    try FilePath(tree.path + "/link.db").writeExcludedFromBackup(Array("new".utf8))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: tree.path + "/link.db") == "real.db"
    )
    #expect(try String(contentsOfFile: real, encoding: .utf8) == "new")
    #expect(getfattrHex(real, Names.resource) == "0x" + Names.resourceValueHex)

    symlink("nowhere.db", tree.path + "/dangling.db")
    symlink("loop-b", tree.path + "/loop-a")
    symlink("loop-a", tree.path + "/loop-b")
    for (name, reason) in [
      ("dangling.db", "a symbolic link to nothing"),
      ("loop-a", "too many levels of symbolic links"),
    ] {
      let link = tree.path + "/" + name
      let before = try FileManager.default.destinationOfSymbolicLink(atPath: link)
      do {
        try FilePath(link).writeExcludedFromBackup(Array("x".utf8))
        Issue.record("a save through \(name) went through")
      } catch {
        #expect(error.description.hasPrefix(link + ": " + reason), "\(error)")
      }
      #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == before)
    }
    #expect(!FileManager.default.fileExists(atPath: tree.path + "/nowhere.db"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: tree.path).sorted()
        == ["dangling.db", "link.db", "loop-a", "loop-b", "real.db"])
  }

  /// A copy from a FIFO is refused at once instead of waiting for a writer;
  /// a save over one is refused too, and the FIFO stays.
  @Test func aCopyFromAnythingButARegularFileIsRefusedAtOnce() throws {
    let fifo = tree.path + "/fifo"
    try #require(mkfifo(fifo, 0o644) == 0)
    let destination = tree.path + "/copy.db"
    // timeout(1) turns a copy that blocks into status 124, instead of a hung test.
    let copy = run([
      "timeout", "-s", "KILL", "20", Argument(probePath), "copy", Argument(fifo),
      Argument(destination),
    ])
    #expect(copy.status == 1, "\(copy)")
    #expect(
      copy.lines.first == fifo
        + ": only a regular file can be copied or saved over, and this is a FIFO", "\(copy)")
    let directory = run([
      "timeout", "-s", "KILL", "20", Argument(probePath), "copy", Argument(tree.path),
      Argument(destination),
    ])
    #expect(directory.lines.first?.hasSuffix("and this is a directory") == true, "\(directory)")
    let save = run([
      "timeout", "-s", "KILL", "20", Argument(probePath), "save", Argument(fifo), "3",
    ])
    #expect(save.status == 1, "\(save)")
    #expect(
      save.lines.first?.hasPrefix(
        fifo + ": only a regular file can be copied or saved over, and this is a FIFO") == true,
      "\(save)")
    var status = stat()
    lstat(fifo, &status)
    #expect(status.st_mode & S_IFMT == S_IFIFO)
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["fifo"])
  }

  /// A copy carries POSIX ACLs too.
  @Test func aCopyKeepsThePOSIXACL() throws {
    let source = tree.file("source.db", "payload")
    try #require(run(["setfacl", "-m", "u:nobody:rw", Argument(source)]).status == 0)
    let destination = tree.path + "/copy.db"
    try FilePath(source).copyKeepingMarks(to: FilePath(destination))
    #expect(run(["getfacl", "-cn", Argument(destination)]).output.contains("user:65534:rw-"))
  }
}
