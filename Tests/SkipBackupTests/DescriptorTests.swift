import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// The system layer's owned descriptor and its typed calls, in process:
  /// what closes a descriptor (its end, once), what does not (a release),
  /// and `openat2`'s refusal of links on the way, by the kernel and by
  /// the walk that stands in for it where the kernel has no `openat2`
  /// (forced `ENOSYS`). The calls the mocking driver counts are this
  /// thread's alone, so a parallel test's descriptors do not blur them.
  @Suite(.onTestThreads) struct DescriptorTests {
    let tree: TemporaryDirectory

    init() throws {
      tree = try TemporaryDirectory()
      tree.file("real/dir/file", "contents")
      try FileManager.default.createSymbolicLink(
        atPath: tree.path + "/link", withDestinationPath: "real")
      try FileManager.default.createSymbolicLink(
        atPath: tree.path + "/real/dir/last", withDestinationPath: "file")
    }

    private func path(_ name: String) -> FilePath { FilePath(tree.path + "/" + name) }

    /// The bytes of what `descriptor` reads.
    private func contents(_ descriptor: borrowing Descriptor) throws -> String {
      var bytes = [UInt8](repeating: 0, count: 64)
      let count = try bytes.withUnsafeMutableBytes { try descriptor.read(into: $0) }
      return String(decoding: bytes[..<count], as: UTF8.self)
    }

    @Test func theEndOfTheValueClosesItOnce() throws {
      try MockingDriver.withMocking { driver in
        do {
          let file = try Descriptor.open(path("real/dir/file"), .readOnly)
          #expect(try contents(file) == "contents")
          #expect(driver.calls[.close] == nil)
        }
        #expect(driver.calls[.close] == 1)
      }
    }

    @Test func aReleasedDescriptorIsNotClosed() throws {
      try MockingDriver.withMocking { driver in
        let number = try Descriptor.open(path("real/dir/file"), .readOnly).release()
        #expect(driver.calls[.close] == nil)
        #expect(fcntl(number, F_GETFD) >= 0)
        #expect(Glibc.close(number) == 0)
      }
    }

    /// `close()` reports what the kernel says, and closes it only once:
    /// no second close at the value's end.
    @Test func anExplicitCloseReportsItsError() throws {
      try MockingDriver.withMocking { driver in
        let file = try Descriptor.open(path("real/dir/file"), .readOnly)
        let number = file.rawValue
        driver.force(.ioError, on: .close, times: 1)
        var failure: SkipBackupError?
        do throws(SkipBackupError) { try file.close() } catch { failure = error }
        #expect(failure?.call == .close)
        #expect(failure?.errno == .ioError)
        #expect(failure?.path == path("real/dir/file"))
        #expect(driver.calls[.close] == 1)
        // The forced failure made no call: the descriptor is still open here.
        #expect(Glibc.close(number) == 0)
      }
    }

    @Test func anEntryOpenedFromADirectoryIsNamedBelowIt() throws {
      let directory = try Descriptor.open(path("real/dir"), [.pathOnly, .directory])
      let file = try directory.open("file", .readOnly)
      #expect(file.path == path("real/dir/file"))
      #expect(try contents(file) == "contents")
      let error = #expect(throws: SkipBackupError.self) {
        _ = try directory.open("gone", .readOnly)
      }
      #expect(error?.call == .openat)
      #expect(error?.path == path("real/dir/gone"))
      #expect(error?.isNoSuchFile == true)
    }

    /// Through real directories `openat2` opens what `open` would; a
    /// symbolic link anywhere on the way, at the end, or a magic link of
    /// /proc, is `ELOOP`. Each both by the kernel and by the walk a
    /// forced `ENOSYS` sends it down.
    @Test(arguments: [false, true])
    func openWithoutLinksRefusesEveryLink(kernelLacksOpenat2: Bool) throws {
      try MockingDriver.withMocking { driver in
        if kernelLacksOpenat2 { driver.force(.noFunction, on: .openat2) }
        let file = try Descriptor.open(path("real/dir/file"), .readOnly, resolve: .noLinks)
        #expect(try contents(file) == "contents")
        let relative = try Descriptor.open(path("real"), [.pathOnly, .directory])
          .open("dir/file", .readOnly, resolve: .noLinks)
        #expect(try contents(relative) == "contents")
        #expect(relative.path == path("real/dir/file"))

        for (name, flags) in [
          ("link/dir/file", OpenFlags.readOnly), ("real/dir/last", .readOnly),
          ("real/dir/last", .pathOnly), ("link", [.pathOnly, .directory]),
        ] {
          let error = #expect(throws: SkipBackupError.self, "\(name)") {
            _ = try Descriptor.open(path(name), flags, resolve: .noLinks)
          }
          #expect(error?.call == .openat2, "\(name)")
          #expect(error?.errno == .tooManySymbolicLinkLevels, "\(name)")
          #expect(error?.path == path(name), "\(name)")
        }
        let magic = try Descriptor.open(path("real/dir/file"), .readOnly)
        let error = #expect(throws: SkipBackupError.self) {
          _ = try Descriptor.open(
            FilePath("/proc/self/fd/\(magic.rawValue)"), .readOnly, resolve: .noLinks)
        }
        #expect(error?.errno == .tooManySymbolicLinkLevels)
        // What the walk stands in for is exactly the kernel's refusal of
        // links: a flag it cannot honour is refused, not dropped.
        if kernelLacksOpenat2 {
          let beneath = #expect(throws: SkipBackupError.self) {
            _ = try Descriptor.open(path("real/dir/file"), .readOnly, resolve: .beneath)
          }
          #expect(beneath?.errno == .noFunction)
          #expect(driver.calls[.openat, default: 0] > 0)
        } else {
          #expect(driver.calls[.openat] == 2)  // the two opened without openat2
        }
      }
    }

    /// A mount attached by descriptor covers the directory that was
    /// opened, even when its path leads elsewhere by the time it is
    /// attached: the directory renamed away and a symbolic link to a
    /// victim put at its name (as another user can do in a tree they own).
    @Test(.enabled(if: geteuid() == 0)) func aMountGoesWhereItsDescriptorIs() throws {
      tree.directory("victim")
      tree.directory("target")
      let target = try Descriptor.open(path("target"), [.pathOnly, .directory], resolve: .noLinks)
      #expect(rename(tree.path + "/target", tree.path + "/moved") == 0)
      try FileManager.default.createSymbolicLink(
        atPath: tree.path + "/target", withDestinationPath: "victim")

      let context = try Descriptor.filesystemContext("tmpfs")
      try context.createFilesystem()
      let mount = try context.mount([])
      try mount.moveMount(onto: target)
      defer { _ = run(["umount", "-l", Argument(tree.path + "/moved")]) }

      var moved = stat()
      var parent = stat()
      var victim = stat()
      #expect(lstat(tree.path + "/moved", &moved) == 0)
      #expect(lstat(tree.path, &parent) == 0)
      #expect(lstat(tree.path + "/victim", &victim) == 0)
      #expect(moved.st_dev != parent.st_dev, "the opened directory is covered")
      #expect(victim.st_dev == parent.st_dev, "the link's target is not")
    }
  }
#endif
