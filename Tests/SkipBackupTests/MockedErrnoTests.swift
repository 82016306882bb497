import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// The error paths a kernel will not take on demand, reached through the
  /// syscall layer's debug-only mocking: every `*xattrat` call's
  /// `ENOSYS` fallback, `EINTR`, `ERANGE` growth and write errors. Each test
  /// proves its path ran by the calls the driver counted, and that the
  /// result is the one the kernel's own path gives.
  @Suite(.onTestThreads) struct MockedErrnoTests {
    let tree: TemporaryDirectory
    /// `dir/a`, reached as a tree walk reaches it: by name in the open `dir`,
    /// which is where the `*xattrat` calls (Linux 6.13) are used.
    let directory: FileDescriptor
    let file: String

    init() throws {
      tree = try TemporaryDirectory()
      file = tree.file("dir/a")
      directory = try FileDescriptor.open(FilePath(tree.path + "/dir"), .readOnly)
    }

    var item: FileItem { FileItem(name: "a", in: directory) }
    var attributes: ExtendedAttributes { ExtendedAttributes(of: item) }

    // MARK: - The calls a walk's read makes

    /// One member is read as several are: from the listing of names, with a
    /// value read only where a member's mark depends on it and its
    /// attribute is there. A `getxattr` per item instead (it checks read
    /// permission on the inode, a listing does not) made `status -R -m
    /// resource` of the 200,000-file tree 11 % slower.
    @Test func oneMemberIsReadFromTheListingOfNames() throws {
      defer { try? directory.close() }
      try MockingDriver.withMocking { driver throws in
        #expect(try MechanismSet.resource.marks(on: item) == [])
        #expect(try MechanismSet.legacy.marks(on: item) == [])
        #expect(driver.calls[.listxattrat] == 2)
        #expect(driver.calls[.getxattrat] == nil)
      }
      setfattr(file, Names.legacy, hex: "01")
      setfattr(file, Names.resource, hex: Names.resourceValueHex)
      try MockingDriver.withMocking { driver throws in
        #expect(try MechanismSet.resource.marks(on: item) == .resource)
        #expect(try MechanismSet.legacy.marks(on: item) == .legacy)
        #expect(driver.calls[.listxattrat] == 2)
        #expect(driver.calls[.getxattrat] == 1, "legacy's value: its first byte must not be 0")
      }
    }

    /// A dry run's check asks once per item whether this user may write its
    /// user attributes: the attribute members' probes were one identical
    /// `removexattr` each. A refusal is still thrown, as the first member's.
    @Test func aCheckProbesTheAttributeMechanismsOnce() throws {
      defer { try? directory.close() }
      let members = MechanismSet([.legacy, .resource, .xdg])
      try MockingDriver.withMocking { driver throws in
        try members.check(item)
        #expect(driver.calls[.removexattrat] == 1)
      }
      MockingDriver.withMocking { driver in
        driver.force(.permissionDenied, on: .removexattrat)
        #expect(throws: SkipBackupError.self) { try members.check(item) }
        #expect(driver.calls[.removexattrat] == 1)
      }
    }

    /// A Mac's marks as a Linux Samba server keeps them (MacServerForms.swift)
    /// come from the same listing: an item without those names costs what
    /// it did (one `listxattrat`, no value), the resource stream no value
    /// either, and the legacy stream one value, its own.
    @Test func sambaStreamsAreReadFromTheSameListing() throws {
      defer { try? directory.close() }
      setfattr(file, "user.DosStream.AFP_AfpInfo:$DATA", hex: "0100")
      setfattr(file, "user.DOSATTRIB", hex: "00")
      try MockingDriver.withMocking { driver throws in
        #expect(try MechanismSet.all.marks(on: item) == [])
        #expect(driver.calls[.listxattrat] == 1)
        #expect(driver.calls[.getxattrat] == nil, "no candidate name, no value read")
      }
      setfattr(
        file, "user.DosStream.com.apple.metadata\u{F022}com_apple_backup_excludeItem:$DATA",
        hex: Names.resourceValueHex + "00")
      try MockingDriver.withMocking { driver throws in
        #expect(try MechanismSet.all.marks(on: item) == .resource)
        #expect(driver.calls[.listxattrat] == 1)
        #expect(driver.calls[.getxattrat] == nil, "the resource value counts by its presence")
      }
      setfattr(file, "user.DosStream.com.apple.MobileBackup:$DATA", hex: "0100")
      try MockingDriver.withMocking { driver throws in
        #expect(try MechanismSet.all.marks(on: item) == [.legacy, .resource])
        #expect(try MechanismSet.legacy.marks(on: item) == .legacy)
        #expect(driver.calls[.listxattrat] == 2)
        #expect(driver.calls[.getxattrat] == 2, "legacy's stream: its first byte must not be 0")
      }
    }

    // MARK: - ENOSYS: the *xattrat calls missing (Linux before 6.13, Debian 12)

    /// Without `getxattrat` the value is read through `/proc/self/fd/DIR/a`
    /// with `lgetxattr`, and is the value the `*at` call reads.
    @Test func getxattratMissingFallsBackToLgetxattr() throws {
      defer { try? directory.close() }
      setfattr(file, "user.probe", hex: "00ff10")
      let direct = try MockingDriver.withMocking { driver throws in
        let value = try attributes.value(of: "user.probe")
        #expect(driver.calls[.getxattrat] == 1)
        #expect(driver.calls[.lgetxattr] == nil)
        return value
      }
      try MockingDriver.withMocking { driver throws in
        driver.force(.noFunction, on: .getxattrat)
        #expect(try attributes.value(of: "user.probe") == direct)
        #expect(try attributes.contains("user.probe"))
        #expect(try !attributes.contains("user.none"))
        #expect(driver.calls[.getxattrat] == 1, "tried once, then known to be missing")
        #expect(driver.calls[.lgetxattr] == 3)
      }
      #expect(direct == [0x00, 0xFF, 0x10])
    }

    /// Without `setxattrat` the mark is written with `lsetxattr` through
    /// `/proc/self/fd`: getfattr reads the same bytes the `*at` call writes.
    @Test func setxattratMissingFallsBackToLsetxattr() throws {
      defer { try? directory.close() }
      let other = tree.file("dir/b")
      try MockingDriver.withMocking { driver throws in
        try ExtendedAttributes(of: FileItem(name: "b", in: directory)).setValue(
          [7, 0, 7], of: "user.probe")
        #expect(driver.calls[.setxattrat] == 1)
        #expect(driver.calls[.lsetxattr] == nil)
      }
      try MockingDriver.withMocking { driver throws in
        driver.force(.noFunction, on: .setxattrat)
        try attributes.setValue([7, 0, 7], of: "user.probe")
        #expect(try Mechanism.legacy.mark(item))
        #expect(driver.calls[.setxattrat] == 1)
        #expect(driver.calls[.lsetxattr] == 2)
      }
      #expect(getfattr(file, "user.probe") == getfattr(other, "user.probe"))
      #expect(getfattr(file, "user.probe") == [7, 0, 7])
      #expect(getfattrHex(file, Names.legacy) == "0x01")
    }

    /// Without `listxattrat` the names are listed with `llistxattr`: the
    /// same names, and the marks read from them are the same.
    @Test func listxattratMissingFallsBackToLlistxattr() throws {
      defer { try? directory.close() }
      setfattr(file, Names.legacy, hex: "01")
      setfattr(file, Names.xdg, hex: "66616c7365")  // "false"
      setfattr(file, "user.other", hex: "02")
      let direct = try MockingDriver.withMocking { driver throws in
        let names = try attributes.names()
        #expect(driver.calls[.listxattrat] == 1)
        #expect(driver.calls[.llistxattr] == nil)
        return names
      }
      try MockingDriver.withMocking { driver throws in
        driver.force(.noFunction, on: .listxattrat)
        #expect(try attributes.names() == direct)
        #expect(try MechanismSet([.legacy, .resource, .xdg]).marks(on: item) == [.legacy, .xdg])
        #expect(driver.calls[.listxattrat] == 1)
        #expect(driver.calls[.llistxattr] == 2)
      }
      #expect(Set(direct.map(\.description)) == [Names.legacy, Names.xdg, "user.other"])
    }

    /// Without `removexattrat` the mark is removed with `lremovexattr`.
    @Test func removexattratMissingFallsBackToLremovexattr() throws {
      defer { try? directory.close() }
      setfattr(file, Names.legacy, hex: "01")
      setfattr(file, "user.keep", hex: "01")
      try MockingDriver.withMocking { driver throws in
        driver.force(.noFunction, on: .removexattrat)
        #expect(try Mechanism.legacy.clear(item))
        #expect(try !attributes.removeValue(of: "user.none"))
        #expect(driver.calls[.removexattrat] == 1)
        #expect(driver.calls[.lremovexattr] == 2)
      }
      #expect(getfattr(file, Names.legacy) == nil)
      #expect(getfattr(file, "user.keep") == [1])
    }

    // MARK: - EINTR

    /// An interrupted set, list, remove or write is made again until it is
    /// not, and its error never shows.
    @Test func interruptedCallsAreMadeAgain() throws {
      defer { try? directory.close() }
      try MockingDriver.withMocking { driver throws in
        driver.force(.interrupted, on: .setxattrat, times: 2)
        try attributes.setValue([1], of: "user.probe")
        #expect(driver.calls[.setxattrat] == 3)
        driver.force(.interrupted, on: .listxattrat, times: 1)
        #expect(try attributes.names().map(\.description) == ["user.probe"])
        #expect(driver.calls[.listxattrat] == 2)
        driver.force(.interrupted, on: .removexattrat, times: 3)
        #expect(try attributes.removeValue(of: "user.probe"))
        #expect(driver.calls[.removexattrat] == 4)
      }
      #expect(getfattr(file, "user.probe") == nil)

      let output = tree.path + "/out"
      let descriptor = open(output, O_WRONLY | O_CREAT, 0o644)
      defer { close(descriptor) }
      try MockingDriver.withMocking { driver throws in
        driver.force(.interrupted, on: .write, times: 2)
        try OutputDescriptor.writeAll("whole\n", to: descriptor).get()
        #expect(driver.calls[.write] == 3)
      }
      #expect(try String(contentsOfFile: output, encoding: .utf8) == "whole\n")
    }

    // MARK: - ERANGE: a value larger than the buffer, or grown

    /// An `ERANGE` from the read sends it to ask the size and read again.
    @Test func rangeErrorOnTheReadAsksTheSizeAndReadsAgain() throws {
      defer { try? directory.close() }
      setfattr(file, "user.probe", hex: "0a0b0c")
      try MockingDriver.withMocking { driver throws in
        driver.force(.outOfRange, on: .getxattrat, times: 1)
        #expect(try attributes.value(of: "user.probe") == [0x0A, 0x0B, 0x0C])
        // The read that failed, the size, the read that worked.
        #expect(driver.calls[.getxattrat] == 3)
        driver.force(.outOfRange, on: .listxattrat, times: 1)
        #expect(try attributes.names().map(\.description) == ["user.probe"])
        #expect(driver.calls[.listxattrat] == 3)
      }
    }

    /// The race the read is written for: the value grows between asking its
    /// size and reading it. The buffer grows to hold the new value, which is
    /// read whole; before, only a 30-second race ever tried this, and could
    /// not say whether it took the path.
    @Test func aValueThatGrowsBetweenSizeAndReadIsReadWhole() throws {
      defer { try? directory.close() }
      setfattr(file, "user.probe", hex: "01")
      let grown = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
      try MockingDriver.withMocking { driver throws in
        driver.force(.outOfRange, on: .getxattrat, times: 1)
        // Between the size (call 2, one byte) and the read (call 3), another
        // process makes the value 5000 bytes: larger than any buffer so far.
        driver.perform(before: .getxattrat, number: 3) {
          setfattr(file, "user.probe", hex: hex(grown))
        }
        #expect(try attributes.value(of: "user.probe") == grown)
        // Forced ERANGE, size 1, real ERANGE (3000 > 512), size 3000, read.
        #expect(driver.calls[.getxattrat] == 5)
      }
    }

    /// A value that never stops changing size ends in an error, not a loop.
    @Test func aValueThatKeepsGrowingEndsInAnError() throws {
      defer { try? directory.close() }
      setfattr(file, "user.probe", hex: "01")
      let failure = MockingDriver.withMocking { driver in
        driver.force(.noFunction, on: .getxattrat)
        driver.force(.outOfRange, on: .lgetxattr)
        return Result { () throws(SkipBackupError) in try attributes.value(of: "user.probe") }
      }
      guard case .failure(let error) = failure else {
        Issue.record("no error")
        return
      }
      #expect(error.cause == .failed(.lgetxattr, .outOfRange))
      #expect(error.description.contains("kept growing"))
    }

    // MARK: - Write errors

    /// ENOSPC, EPIPE and EBADF end the write at once with that errno: the
    /// caller reports it (the tool as `skipbackup: write error: REASON`,
    /// ReliabilityTests shows it once with exit 1 for the kernel's own).
    @Test(arguments: [Errno.noSpace, .brokenPipe, .badFileDescriptor, .ioError])
    func aWriteErrorIsReturnedOnceAndNotRetried(errno: Errno) throws {
      defer { try? directory.close() }
      let output = tree.path + "/out"
      let descriptor = open(output, O_WRONLY | O_CREAT, 0o644)
      defer { close(descriptor) }
      MockingDriver.withMocking { driver in
        driver.force(errno, on: .write)
        let result = OutputDescriptor.writeAll(
          Array(repeating: 0x41, count: 100_000), to: descriptor)
        #expect(throws: errno) { try result.get() }
        #expect(driver.calls[.write] == 1)
      }
    }

    /// A save whose write fails leaves the old file as it was and nothing
    /// beside it, and says why with the path first.
    @Test(arguments: [Errno.noSpace, .brokenPipe, .badFileDescriptor])
    func aSaveWhoseWriteFailsReplacesNothing(errno: Errno) throws {
      defer { try? directory.close() }
      let path = tree.file("dir/saved.db", "old")
      setfattr(path, "user.keep", hex: "01")
      let failure = MockingDriver.withMocking { driver in
        driver.force(errno, on: .write)
        return Result { () throws(SkipBackupError) in
          try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
        }
      }
      guard case .failure(let error) = failure else {
        Issue.record("the forced \(errno) was not thrown")
        return
      }
      #expect(error.cause == .failed(.write, errno))
      #expect(error.description.hasPrefix(path + ": "))
      #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
      #expect(getfattr(path, "user.keep") == [1])
      #expect(getfattr(path, Names.resource) == nil)
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: tree.path + "/dir").sorted() == [
          "a", "saved.db",
        ])
    }
  }
#endif
