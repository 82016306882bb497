import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// The marks room's calls on the typed layer, in process: each failure
  /// the mocking driver forces comes back as the error of that call,
  /// naming the item as the caller gave it, and every descriptor opened on
  /// the way is closed (as many `close` calls as opens), the failed ones
  /// too. The calls the driver counts are this thread's alone.
  @Suite(.onTestThreads) struct MarksTypedCallsTests {
    let tree: TemporaryDirectory
    init() throws { tree = try TemporaryDirectory() }

    /// What `body` throws, or `nil`.
    private func failure(_ body: () throws(SkipBackupError) -> Void) -> SkipBackupError? {
      do throws(SkipBackupError) {
        try body()
        return nil
      } catch {
        return error
      }
    }

    /// Each open of the driver's count closed once.
    private func expectEveryOpenClosed(_ driver: MockingDriver) {
      let opened = (driver.calls[.openat] ?? 0) + (driver.calls[.dup] ?? 0)
      #expect(driver.calls[.close] ?? 0 == opened, "\(driver.calls)")
    }

    @Test func aLookAtAnItemNamesItAndItsCall() throws {
      let file = FilePath(tree.file("a"))
      let directory = try Descriptor.open(FilePath(tree.path), [.pathOnly, .directory])
      let entry = FileItem(
        name: "a", in: FileDescriptor(rawValue: directory.rawValue), displayPath: "shown/a")
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .fstatat)
        let byPath = failure { () throws(SkipBackupError) in _ = try FileItem(path: file).status() }
        #expect(byPath?.cause == .failed(.fstatat, .ioError))
        #expect(byPath?.path == file)
        let byName = failure { () throws(SkipBackupError) in _ = try entry.status() }
        #expect(byName?.cause == .failed(.fstatat, .ioError))
        #expect(byName?.path == "shown/a")
      }
    }

    @Test func aWalksEntryIsLookedAtByItsDirectoryAndName() throws {
      tree.file("dir/b", "bytes")
      let directory = try Descriptor.open(FilePath(tree.path + "/dir"), [.pathOnly, .directory])
      let entry = FileItem(name: "b", in: FileDescriptor(rawValue: directory.rawValue))
      #expect(try entry.status().st_size == 5)
      // The name is resolved in the directory opened, not from the working directory.
      let missing = FileItem(name: "dir", in: FileDescriptor(rawValue: directory.rawValue))
      #expect(
        failure { () throws(SkipBackupError) in _ = try missing.status() }?.isNoSuchFile == true)
    }

    @Test func nodumpNamesEachCallThatFails() throws {
      let file = FilePath(tree.file("flagged"))
      let item = FileItem(path: file)
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .statx, times: 1)
        let read = failure { () throws(SkipBackupError) in _ = try Mechanism.nodump.isMarked(item) }
        #expect(read?.cause == .failed(.statx, .ioError))
        #expect(read?.path == file)

        driver.force(.ioError, on: .getInodeFlags, times: 1)
        let get = failure { () throws(SkipBackupError) in _ = try Mechanism.nodump.mark(item) }
        #expect(get?.cause == .failed(.getInodeFlags, .ioError))
        #expect(get?.path == file)

        driver.force(.noSpace, on: .setInodeFlags, times: 1)
        let set = failure { () throws(SkipBackupError) in _ = try Mechanism.nodump.mark(item) }
        #expect(set?.cause == .failed(.setInodeFlags, .noSpace))
        #expect(set?.path == file)
        #expect(driver.calls[.setInodeFlags] == 1)
        expectEveryOpenClosed(driver)
      }
      #expect(
        !run(["lsattr", Argument(file.string)]).output.prefix(while: { $0 != " " }).contains("d"))
    }

    @Test func aTagThatCannotBeReadOrWrittenIsNamed() throws {
      let directory = tree.directory("cache")
      let item = FileItem(path: FilePath(directory))
      let tag = FilePath(directory + "/CACHEDIR.TAG")
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .write, times: 1)
        let written = failure { () throws(SkipBackupError) in _ = try Mechanism.cachedir.mark(item)
        }
        #expect(written?.cause == .failed(.write, .ioError))
        #expect(written?.path == tag)
        expectEveryOpenClosed(driver)
      }
      // A tag that could not be written whole is never named.
      #expect(!FileManager.default.fileExists(atPath: tag.string))
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .linkat, times: 1)
        let linked = failure { () throws(SkipBackupError) in _ = try Mechanism.cachedir.mark(item) }
        #expect(linked?.cause == .failed(.linkat, .ioError))
        #expect(linked?.path == tag)
        expectEveryOpenClosed(driver)
      }
      #expect(!FileManager.default.fileExists(atPath: tag.string))
      #expect(try Mechanism.cachedir.mark(item))
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .read, times: 1)
        let read = failure { () throws(SkipBackupError) in _ = try Mechanism.cachedir.isMarked(item)
        }
        #expect(read?.cause == .failed(.read, .ioError))
        #expect(read?.path == tag)
        driver.force(.permissionDenied, on: .unlinkat, times: 1)
        let removed = failure { () throws(SkipBackupError) in _ = try Mechanism.cachedir.clear(item)
        }
        #expect(removed?.cause == .failed(.unlinkat, .permissionDenied))
        #expect(removed?.path == tag)
        expectEveryOpenClosed(driver)
      }
      #expect(try Mechanism.cachedir.isMarked(item))
    }

    @Test func aSaveThatCannotSyncOrRenameLeavesTheOldFile() throws {
      let path = tree.file("kept.db", "old")
      for call in [SystemCall.fsync, .renameat] {
        MockingDriver.withMocking { driver in
          driver.force(.ioError, on: call, times: 1)
          let save = failure { () throws(SkipBackupError) in
            try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
          }
          #expect(save?.cause == .failed(call, .ioError))
          #expect(save?.path == FilePath(path))
          expectEveryOpenClosed(driver)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["kept.db"])
      }
    }

    /// The save looked at the old file by its name, then opened it for its
    /// attributes: a file another put at the name between the two lent
    /// its attributes (here a mark) to the new file, which took the old
    /// one's permissions. The open is the third (the directory, the new
    /// unnamed file, the old one).
    @Test func aFileSwappedInAfterTheLookLendsNothing() throws {
      let path = tree.file("swapped.db", "old")
      chmod(path, 0o600)
      let intruder = tree.file("intruder", "theirs")
      setfattr(intruder, "user.intruder", hex: "01")
      var swapped = false
      let save = MockingDriver.withMocking { driver in
        driver.perform(before: .openat, number: 3) {
          swapped = rename(intruder, path) == 0
        }
        return failure { () throws(SkipBackupError) in
          try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
        }
      }
      #expect(swapped)
      #expect(save?.refusal == .replacedWhileSaved, "\(String(describing: save))")
      #expect(save?.path == FilePath(path))
      #expect(try String(contentsOfFile: path, encoding: .utf8) == "theirs")
      #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["swapped.db"])
    }

    @Test func aCopyReadsTheSourceItLookedAt() throws {
      let source = tree.file("source", "bytes")
      let destination = tree.path + "/copy"
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .read, times: 1)
        let copy = failure { () throws(SkipBackupError) in
          try FilePath(source).copyKeepingMarks(to: FilePath(destination))
        }
        #expect(copy?.cause == .failed(.read, .ioError))
        #expect(copy?.path == FilePath(source))
        expectEveryOpenClosed(driver)
      }
      #expect(!FileManager.default.fileExists(atPath: destination))
      let fifo = tree.path + "/fifo"
      #expect(mkfifo(fifo, 0o600) == 0)
      let refused = failure { () throws(SkipBackupError) in
        try FilePath(fifo).copyKeepingMarks(to: FilePath(destination))
      }
      #expect(refused?.refusal == .notARegularFile)
      try FilePath(source).copyKeepingMarks(to: FilePath(destination))
      #expect(try String(contentsOfFile: destination, encoding: .utf8) == "bytes")
    }

    @Test func theUserDatabaseFailureNamesItsCall() throws {
      #expect(try loginName(of: 0, reporting: "/etc/passwd") == Array("root".utf8))
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .getpwuidR, times: 1)
        let looked = failure { () throws(SkipBackupError) in
          _ = try loginName(of: 0, reporting: "/etc/passwd")
        }
        #expect(looked?.cause == .failed(.getpwuidR, .ioError))
        #expect(looked?.path == "/etc/passwd")
        driver.force(.noSuchFileOrDirectory, on: .getcwd, times: 1)
        let directory = failure { () throws(SkipBackupError) in _ = try currentDirectory() }
        #expect(directory?.cause == .failed(.getcwd, .noSuchFileOrDirectory))
      }
    }
  }
#endif
