import Foundation
import SkipBackup
import Synchronization
import Testing
import TestSupport

/// Saving replaces the file with a new inode; the mark must be on it before
/// it takes the old one's place.
@Suite struct SafeSaveTests {
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
        if (try? opened.contains(BackupExcludeItemAttribute.attributeName)) != true {
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
}
