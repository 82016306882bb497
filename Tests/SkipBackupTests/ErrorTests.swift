import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

/// Every error of the attribute layer: its errno, and a message that names
/// the path and says what is wrong.
@Suite(.onTestThreads) struct ErrorTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  func error(_ body: () throws -> Any) -> SkipBackupError? {
    do {
      _ = try body()
      return nil
    } catch {
      return error as? SkipBackupError
    }
  }

  @Test func missingPath() throws {
    let path = tree.path + "/nothing here"
    let failure = try #require(
      error { try Mechanism.resource.mark(FileItem(path: FilePath(path))) })
    #expect(failure.errno == .noSuchFileOrDirectory)
    #expect(failure.isNoSuchFile)
    #expect(failure.description.hasPrefix(path + ": no such file or directory"))
    #expect(failure.attribute == Mechanism.resource.attributeName)
    #expect(failure.call == .setxattr)
  }

  @Test func symbolicLink() throws {
    tree.file("target")
    let link = tree.path + "/link"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target")
    let item = FileItem(path: FilePath(link), followSymbolicLinks: false)
    let failure = try #require(error { try Mechanism.resource.mark(item) })
    #expect(failure.errno == .notPermitted)
    #expect(failure.isSymbolicLinkRefusal)
    #expect(failure.call == .lsetxattr)
    #expect(
      failure.description.hasPrefix(
        link + ": Linux keeps no user extended attributes on symbolic links"))
    // Reading a link finds no mark, and that is no error.
    #expect(try MechanismSet.all.isMarked(item) == false)
  }

  @Test func fifo() throws {
    let fifo = tree.path + "/fifo"
    #expect(mkfifo(fifo, 0o644) == 0)
    let failure = try #require(
      error { try Mechanism.legacy.mark(FileItem(path: FilePath(fifo))) })
    #expect(failure.errno == .notPermitted)
    #expect(failure.fileType == .fifo)
    #expect(
      failure.description.contains(
        fifo
          + ": Linux keeps user extended attributes only on regular files and directories, and this is a FIFO"
      ))
  }

  @Test func filesystemWithoutUserAttributes() throws {
    let path = "/proc/self/comm"
    let failure = try #require(
      error { try Mechanism.resource.mark(FileItem(path: FilePath(path))) })
    #expect(failure.errno == .notSupported)
    #expect(
      failure.description.hasPrefix(
        path + ": the filesystem here keeps no user extended attributes"))
    // Nothing there can be marked, so it reads as unmarked, and clearing is no error.
    #expect(try MechanismSet.all.isMarked(FileItem(path: FilePath(path))) == false)
    #expect(try MechanismSet.all.clear(FileItem(path: FilePath(path))) == false)
  }

  @Test func nameOutsideAnyNamespace() throws {
    let file = tree.file("a")
    let failure = try #require(
      error {
        try ExtendedAttributes(of: FileItem(path: FilePath(file))).setValue(
          [1], of: "com.apple.MobileBackup")
      })
    #expect(failure.errno == .notSupported)
    #expect(
      failure.description.hasPrefix(
        file + ": 'com.apple.MobileBackup' is in no namespace Linux knows"))
  }

  /// `ENOSPC` names what ran out: the attribute space only for a call that
  /// sets an attribute's value, the filesystem for every other (a full
  /// btrfs refuses `mkdirat` and `linkat` with it too).
  @Test(arguments: SystemCall.allCases)
  func noSpaceNamesWhatRanOut(_ call: SystemCall) {
    let reason = SkipBackupError(call, .noSpace, path: "/x").reason
    if [.setxattr, .lsetxattr, .fsetxattr, .setxattrat].contains(call) {
      #expect(reason.hasPrefix("no space left for extended attributes on this item"), "\(call)")
    } else {
      #expect(
        reason == "no space left on the device: the filesystem that holds it is full", "\(call)")
    }
  }

  /// A real full filesystem: an ext4 whose inodes are all taken refuses
  /// the CACHEDIR.TAG's `openat(O_CREAT)` with `ENOSPC`, and the message
  /// names the device, not the attributes.
  @Test func noInodeLeftIsTheDevicesToo() throws {
    let ext4 = try TestFilesystem(.ext4, size: "4M")
    let directory = ext4.mountPoint + "/cache"
    #expect(mkdir(directory, 0o755) == 0)
    var made = 0
    while made < 10_000 {
      let descriptor = open(ext4.mountPoint + "/f\(made)", O_CREAT | O_WRONLY, 0o644)
      if descriptor < 0 { break }
      close(descriptor)
      made += 1
    }
    try #require(errno == ENOSPC, "the inodes ran out after \(made) files")
    let failure = try #require(
      error { try Mechanism.cachedir.mark(FileItem(path: FilePath(directory))) })
    #expect(failure.errno == .noSpace)
    #expect(failure.call == .openat)
    #expect(failure.reason == "no space left on the device: the filesystem that holds it is full")
  }

  #if ENABLE_MOCKING
    /// A CACHEDIR.TAG that cannot be made on a full filesystem (its
    /// `openat` refused with `ENOSPC`) says the device is full, not the
    /// attributes.
    @Test func noSpaceForATagIsTheDevices() throws {
      let directory = tree.directory("cache")
      let failure = try #require(
        MockingDriver.withMocking { driver in
          driver.force(.noSpace, on: .openat)
          return error { try Mechanism.cachedir.mark(FileItem(path: FilePath(directory))) }
        })
      #expect(failure.call == .openat)
      #expect(
        failure.description.contains(": no space left on the device: the filesystem"), "\(failure)")
      #expect(!failure.description.contains("extended attributes"), "\(failure)")
    }
  #endif

  /// ext4 keeps all of an inode's attributes in one block: 5,000 bytes do
  /// not fit, and no filesystem takes a value over 64 KiB. On an ext4 of the
  /// test's own, since the tests' directories may be on tmpfs.
  @Test func noSpaceForTheValue() throws {
    let ext4 = try TestFilesystem(.ext4, size: "16M")
    let file = ext4.mountPoint + "/a"
    try #require(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(file)))
    let failure = try #require(
      error {
        try attributes.setValue([UInt8](repeating: 1, count: 5000), of: "user.big")
      })
    #expect(failure.errno == .noSpace)
    #expect(failure.description.hasPrefix(file + ": no space left for extended attributes"))
    let tooBig = try #require(
      error {
        try attributes.setValue([UInt8](repeating: 1, count: 70_000), of: "user.big")
      })
    #expect(tooBig.errno == .argListTooLong)
    #expect(
      tooBig.description.hasPrefix(
        file + ": the attribute value is larger than the filesystem allows"))
  }

  @Test func immutableFile() throws {
    let file = tree.file("a")
    // Setting the flag needs root, as CI runs the tests.
    try #require(run(["chattr", "+i", Argument(file)]).status == 0, "chattr +i needs root")
    defer { _ = run(["chattr", "-i", Argument(file)]) }
    let failure = try #require(
      error { try Mechanism.resource.mark(FileItem(path: FilePath(file))) })
    #expect(failure.errno == .notPermitted)
    #expect(failure.description.contains("immutable"))
  }

  /// Root bypasses permissions; the probe runs the library as nobody.
  @Test func permissionDeniedAsAnUnprivilegedUser() throws {
    let file = tree.file("root-owned")
    chmod(file, 0o644)
    let write = probe("set", Argument(file), Argument(Names.legacy), "01", asNobody: true)
    #expect(write.status == 1, "\(write)")
    #expect(write.lines.first?.hasPrefix(file + ": permission denied") == true, "\(write)")
    #expect(write.lines.last == "errno 13")
    #expect(getfattr(file, Names.legacy) == nil)

    chmod(file, 0o600)
    setfattr(file, Names.legacy, hex: "01")
    let read = probe("get", Argument(file), Argument(Names.legacy), asNobody: true)
    #expect(read.status == 1, "\(read)")
    #expect(read.lines.first?.hasPrefix(file + ": permission denied") == true, "\(read)")

    chmod(file, 0o666)
    let allowed = probe("set", Argument(file), "user.by-nobody", "02", asNobody: true)
    #expect(allowed.status == 0, "\(allowed)")
    #expect(getfattrHex(file, "user.by-nobody") == "0x02")
  }

  @Test func qa1719PrintsTheErrorAndReturnsFalse() throws {
    let missing = tree.path + "/gone.db"
    let result = probe("qa1719", Argument(missing))
    #expect(result.output == "false\n")
    #expect(
      result.errors.hasPrefix(
        "Error excluding gone.db from backup " + missing + ": no such file or directory"))
    let present = tree.file("present.db")
    #expect(probe("qa1719", Argument(present)).output == "ok\n")
    #expect(getfattrHex(present, Names.resource) == "0x" + Names.resourceValueHex)
  }
}
