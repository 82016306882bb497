import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

#if ENABLE_MOCKING
  /// The syscall layer's debug-only mocking: a forced errno reaches the code
  /// above the `system_*` wrapper exactly as the kernel's would.
  @Suite(.onTestThreads) struct MockingTests {
    let tree: TemporaryDirectory
    init() throws { tree = try TemporaryDirectory() }

    /// Linux before 6.13 has no `getxattrat`: the read goes through
    /// `/proc/self/fd/DIR/NAME` and still finds the value setfattr wrote.
    @Test func withoutXattratTheProcPathIsTaken() throws {
      let file = tree.file("dir/a")
      setfattr(file, "user.probe", hex: "0102ff")
      let directory = try FileDescriptor.open(FilePath(tree.path + "/dir"), .readOnly)
      defer { try? directory.close() }
      let attributes = ExtendedAttributes(of: FileItem(name: "a", in: directory))
      try MockingDriver.withMocking { driver throws in
        driver.force(.noFunction, on: .getxattrat)
        #expect(try attributes.value(of: "user.probe") == [0x01, 0x02, 0xFF])
        #expect(driver.calls[.getxattrat] == 1)
        // A name in a directory never follows a link, so the fallback is lgetxattr.
        #expect(driver.calls[.lgetxattr] == 1)
        // Once missing, the *at call is not tried again.
        #expect(try attributes.value(of: "user.probe") == [0x01, 0x02, 0xFF])
        #expect(try attributes.value(of: "user.none") == nil)
        #expect(driver.calls[.getxattrat] == 1)
        #expect(driver.calls[.lgetxattr] == 3)
      }
      // Outside the driver the kernel's own answer counts again.
      try MockingDriver.withMocking { driver throws in
        #expect(try attributes.value(of: "user.probe") == [0x01, 0x02, 0xFF])
        #expect(driver.calls[.lgetxattr] == nil)
      }
    }

    /// An interrupted call is made again, and its error never shows.
    @Test func anInterruptedCallIsRetried() throws {
      let file = tree.file("a")
      setfattr(file, "user.com.apple.MobileBackup", hex: "01")
      let item = FileItem(path: FilePath(file))
      try MockingDriver.withMocking { driver throws in
        driver.force(.interrupted, on: .getxattr, times: 2)
        #expect(try Mechanism.legacy.isMarked(item))
        #expect(driver.calls[.getxattr] == 3)
      }
    }

    /// A forced failure is reported as the kernel's would be: path first,
    /// the call by name.
    @Test func aForcedFailureIsReportedWithItsCall() throws {
      let file = tree.file("a")
      let failure = MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .setxattr)
        return Result { () throws(SkipBackupError) in
          try Mechanism.resource.mark(FileItem(path: FilePath(file)))
        }
      }
      guard case .failure(let error) = failure else {
        Issue.record("the forced EIO was not thrown")
        return
      }
      #expect(error.cause == .failed(.setxattr, .ioError))
      #expect(error.description.hasPrefix(file + ": input/output error (setxattr "))
      #expect(getfattr(file, "user.com.apple.metadata:com_apple_backup_excludeItem") == nil)
    }
  }
#endif
