import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// The typed calls `run`'s view makes (Sources/SkipBackupView), in
  /// process: each does what its C call does on a real directory, and a
  /// failure the mocking driver forces becomes the error of that call,
  /// naming the path a person would act on (the ROOT, or the item below
  /// it), not a descriptor's number.
  @Suite(.onTestThreads) struct ViewCallTests {
    let tree: TemporaryDirectory

    init() throws {
      tree = try TemporaryDirectory()
      tree.file("a/b/c/file", "contents")
      try FileManager.default.createSymbolicLink(
        atPath: tree.path + "/a/link", withDestinationPath: "b")
    }

    private func path(_ name: String) -> FilePath { FilePath(tree.path + "/" + name) }

    private func failure(_ body: () throws -> Void) -> SkipBackupError? {
      do { try body() } catch { return error as? SkipBackupError }
      return nil
    }

    /// A directory below another is opened one name at a time, each
    /// directory named by the path it stands for; a failure on the way
    /// names the directory it happened at.
    @Test func aDirectoryBelowIsOpenedOneNameAtATime() throws {
      try MockingDriver.withMocking { driver in
        let top = try Descriptor.open(path(""), [.pathOnly, .directory])
        let opened = try top.openDirectory(Array("a/b/c".utf8), reporting: "/shown")
        #expect(opened.path == "/shown/a/b/c")
        #expect(driver.calls[.openat] == 4)
        var status = stat()
        #expect(stat(tree.path + "/a/b/c", &status) == 0)
        #expect(try opened.status().st_ino == status.st_ino)

        driver.perform(before: .openat, number: 6) { driver.force(.ioError, on: .openat) }
        let error = failure { _ = try top.openDirectory(Array("a/b/c".utf8), reporting: "/shown") }
        driver.stopForcing(.openat)
        #expect(error?.call == .openat)
        #expect(error?.errno == .ioError)
        #expect(error?.path == "/shown/a/b")
      }
    }

    /// A symbolic link on the way is refused, never followed.
    @Test func aLinkOnTheWayIsRefused() throws {
      let top = try Descriptor.open(path(""), [.pathOnly, .directory])
      let error = failure { _ = try top.openDirectory(Array("a/link/c".utf8), reporting: "/r") }
      #expect(error?.call == .openat)
      #expect(error?.errno == .notDirectory || error?.errno == .tooManySymbolicLinkLevels)
      #expect(error?.path == "/r/a/link")
    }

    /// No names: the directory itself, opened no more.
    @Test func withNoNamesTheDirectoryItselfIsLent() throws {
      try MockingDriver.withMocking { driver in
        let top = try Descriptor.open(path(""), [.pathOnly, .directory])
        let number = try top.withDirectory([], reporting: "/r") { directory in directory.rawValue }
        #expect(number == top.rawValue)
        #expect(driver.calls[.openat] == 1)
      }
    }

    /// Each descriptor a list holds is closed when the list ends, once;
    /// the list grows past its first capacity.
    @Test func aListClosesEachOfItsDescriptors() throws {
      try MockingDriver.withMocking { driver in
        do {
          var list = DescriptorList(capacity: 1)
          for name in ["a", "a/b", "a/b/c"] {
            list.append(try Descriptor.open(path(name), [.pathOnly, .directory]))
          }
          #expect(list.count == 3)
          #expect(list[2].path == path("a/b/c"))
          list.removeLast()
          #expect(driver.calls[.close] == 1)
        }
        #expect(driver.calls[.close] == 3)
      }
    }

    /// A whiteout is the character device 0/0; its failure names the
    /// item it stands for.
    @Test(.enabled(if: geteuid() == 0)) func aWhiteoutIsTheDeviceZeroZero() throws {
      let top = try Descriptor.open(path("a"), [.directory])
      try top.makeWhiteout("gone", reporting: "/root/gone")
      var status = stat()
      #expect(lstat(tree.path + "/a/gone", &status) == 0)
      #expect(status.st_mode & S_IFMT == S_IFCHR)
      #expect(status.st_rdev == 0)
      MockingDriver.withMocking { driver in
        driver.force(.notPermitted, on: .mknodat, times: 1)
        let error = failure { try top.makeWhiteout("other", reporting: "/root/other") }
        #expect(error?.call == .mknodat)
        #expect(error?.errno == .notPermitted)
        #expect(error?.path == "/root/other")
      }
    }

    /// The calls that copy a directory's metadata onto the layer: each
    /// forced failure names the real directory given, not the layer's.
    @Test func theMetadataCallsNameTheRealDirectory() throws {
      let layer = try Descriptor.open(path("a/b"), [.directory])
      let zero = timespec(tv_sec: 1_000_000, tv_nsec: 0)
      try layer.changeTimes(access: zero, modification: zero)
      var status = stat()
      #expect(stat(tree.path + "/a/b", &status) == 0)
      #expect(status.st_mtim.tv_sec == 1_000_000)
      let calls: [(SystemCall, (borrowing Descriptor) throws -> Void)] = [
        (.fchown, { try $0.changeOwner(geteuid(), group: getegid(), reporting: "/real/b") }),
        (.fchmod, { try $0.changeMode(0o755, reporting: "/real/b") }),
        (.futimens, { try $0.changeTimes(access: zero, modification: zero, reporting: "/real/b") }),
        (.setInodeFlags, { try $0.setInodeFlags(0, reporting: "/real/b") }),
        (.fstatfs, { _ = try $0.filesystemStatus(reporting: "/real/b") }),
      ]
      for (call, body) in calls {
        MockingDriver.withMocking { driver in
          driver.force(.ioError, on: call, times: 1)
          let error = failure { try body(layer) }
          #expect(error?.call == call)
          #expect(error?.path == "/real/b", "\(call)")
        }
      }
    }

    /// A filesystem context and the mount made of it name the ROOT they
    /// are for; attaching it names the place given.
    @Test(.enabled(if: geteuid() == 0)) func aMountsCallsNameItsRoot() throws {
      try MockingDriver.withMocking { driver in
        let context = try Descriptor.filesystemContext("tmpfs", for: "/home/root")
        #expect(context.path == "/home/root")
        driver.force(.invalidArgument, on: .fsconfig, times: 1)
        let error = failure { try context.configure("mode", to: Array("0755".utf8)) }
        #expect(error?.call == .fsconfig)
        #expect(error?.path == "/home/root")
        try context.createFilesystem()
        let mount = try context.mount(.readOnly)
        let target = try Descriptor.open(path("a"), [.pathOnly, .directory], resolve: .noLinks)
        driver.force(.resourceBusy, on: .moveMount, times: 1)
        let moved = failure { try mount.moveMount(onto: target, reporting: "/home/root/a") }
        #expect(moved?.call == .moveMount)
        #expect(moved?.path == "/home/root/a")
        driver.force(.notPermitted, on: .fsopen, times: 1)
        let opened = failure { _ = try Descriptor.filesystemContext("overlay", for: "/home/x") }
        #expect(opened?.call == .fsopen)
        #expect(opened?.path == "/home/x")
      }
    }

    /// A signal blocked and sent to this thread is waited for, with the
    /// code of one a process sent (SI_TKILL, below zero); the mask comes
    /// back as it was. A forced failure is sigprocmask's.
    @Test func aBlockedSignalIsWaitedFor() throws {
      let before = try SignalSet([SIGUSR2]).block()
      defer { try? before.setAsMask() }
      try ProcessCalls.send(SIGUSR2, toThread: pthread_self())
      #expect(try SignalSet.pending().contains(SIGUSR2))
      let (signal, code) = try SignalSet([SIGUSR2]).wait()
      #expect(signal == SIGUSR2)
      #expect(code <= 0)
      #expect(!(try SignalSet.pending().contains(SIGUSR2)))
      MockingDriver.withMocking { driver in
        driver.force(.invalidArgument, on: .sigprocmask, times: 1)
        let error = failure { _ = try SignalSet([SIGUSR1]).block() }
        #expect(error?.call == .sigprocmask)
        #expect(error?.path == "/")
        driver.force(.wouldBlock, on: .fork, times: 1)
        let forked = failure { _ = try ProcessCalls.fork() }
        #expect(forked?.call == .fork)
        #expect(driver.calls[.fork] == 1)
      }
    }

    /// A directory's handle, as fanotify names it: a forced failure names
    /// the item.
    @Test func aDirectorysHandleNamesTheItemOnFailure() throws {
      let top = try Descriptor.open(path("a"), [.pathOnly, .directory])
      let (handle, mountID) = try fileHandle(
        in: top.rawValue, "", .emptyPath, reporting: path("a"))
      let length = Int(handle.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
      #expect(length > 0)
      #expect(mountID > 0)
      MockingDriver.withMocking { driver in
        driver.force(.notSupported, on: .nameToHandleAt, times: 1)
        let error = failure {
          _ = try fileHandle(in: top.rawValue, "", .emptyPath, reporting: path("a"))
        }
        #expect(error?.call == .nameToHandleAt)
        #expect(error?.path == path("a"))
      }
    }

    /// The working directory, and its forced failure, getcwd's.
    @Test func theWorkingDirectoryIsGetcwds() throws {
      let directory = try currentDirectory()
      #expect(directory == FilePath(FileManager.default.currentDirectoryPath))
      MockingDriver.withMocking { driver in
        driver.force(.noSuchFileOrDirectory, on: .getcwd, times: 1)
        let error = failure { _ = try currentDirectory() }
        #expect(error?.call == .getcwd)
      }
    }
  }
#endif
