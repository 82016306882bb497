import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// An `EPERM` or `EACCES` is explained by what the item really is, as a
/// look at it after the failure finds: never
/// "immutable" without the inode flags saying so, never "needs write
/// permission on it" when a directory on the way denies the lookup.
extension ErrorTests {
  @Test func anImmutableOrAppendOnlyItemIsNamedByItsFlag() throws {
    for (flag, finding, words) in [
      ("+i", SkipBackupError.Finding.immutable, "the item is immutable (chattr +i)"),
      ("+a", .appendOnly, "the item is append-only (chattr +a)"),
    ] {
      let file = tree.file("flagged\(flag)")
      try #require(run(["chattr", Argument(flag), Argument(file)]).status == 0, "needs root")
      defer { _ = run(["chattr", "-i", "-a", Argument(file)]) }
      let failure = try #require(
        error { try Mechanism.resource.mark(FileItem(path: FilePath(file))) })
      #expect(failure.errno == .notPermitted)
      #expect(failure.finding == finding)
      #expect(failure.description.hasPrefix(file + ": operation not permitted: " + words))
    }
  }

  /// /proc's process directories answer `EPERM`, not `EOPNOTSUPP`: once
  /// explained as "immutable".
  @Test func aProcTaskDirectoryIsAPseudoFilesystemNotImmutable() throws {
    let task = "/proc/\(getpid())/task/\(getpid())"
    let failure = try #require(
      error { try Mechanism.resource.mark(FileItem(path: FilePath(task))) })
    #expect(failure.errno == .notPermitted)
    #expect(failure.finding == .pseudoFilesystem(.proc))
    #expect(
      failure.description.hasPrefix(
        task
          + ": operation not permitted: this is on proc, a kernel pseudo-filesystem that refuses"
          + " user extended attributes"))
    #expect(!failure.description.contains("immutable"))
  }

  /// A message names the filesystem by its case's name, so a case renamed
  /// would change the message: the names are pinned here, as
  /// /proc/filesystems and mount(8) show them.
  @Test func aPseudoFilesystemIsNamedAsTheKernelNamesIt() {
    #expect(
      SkipBackupError.PseudoFilesystem.allCases.map(\.name) == [
        "proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "bpf",
      ])
  }

  /// `EACCES` from a directory without search permission on the way is not
  /// the item's own permissions (probe = the library run as nobody).
  @Test func aFileInADirectoryWithoutSearchPermissionSaysSo() throws {
    let directory = tree.directory("no-search")
    let file = tree.file("no-search/f")
    chmod(file, 0o666)
    chmod(directory, 0o644)
    defer { chmod(directory, 0o755) }
    let commands: [[Argument]] = [
      ["set", Argument(file), "user.x", "01"], ["get", Argument(file), "user.x"],
    ]
    for command in commands {
      let result = run([Argument(probePath)] + command, asNobody: true)
      #expect(result.status == 1, "\(result)")
      #expect(
        result.lines.first?.hasPrefix(
          file + ": permission denied: a directory on the way to it lacks search (x) permission")
          == true, "\(result)")
      #expect(result.lines.last == "errno 13")
    }
    // With search permission the file's own mode is the reason again.
    chmod(directory, 0o755)
    chmod(file, 0o644)
    let own = probe("set", Argument(file), "user.x", "01", asNobody: true)
    #expect(
      own.lines.first?.hasPrefix(
        file + ": permission denied: changing its attributes needs write permission on it")
        == true, "\(own)")
  }

  /// What a walk met swapped in since its directory was listed is one
  /// question, asked by `mark -R` and `sweep` alike: they skip and count
  /// the same refusals, and report the rest (an immutable file, another
  /// tool's CACHEDIR.TAG, an item gone, which is counted as vanished, and
  /// an EPERM on a plain file or directory: both try again a few times, and
  /// one that refuses each time is reported, so a filesystem that refuses
  /// for good is never skipped silently).
  @Test func whatWasSwappedInDuringAWalkIsOneQuestion() {
    let path = FilePath("/x")
    var momentary = SkipBackupError(.setxattrat, .notPermitted, path: path, fileType: .directory)
    momentary.finding = .neitherImmutableNorAppendOnly
    let swapped = [
      SkipBackupError(.setxattrat, .notPermitted, path: path, fileType: .symbolicLink),
      SkipBackupError(.lsetxattr, .notPermitted, path: path, fileType: .fifo),
      SkipBackupError(.openat, .tooManySymbolicLinkLevels, path: path),
      SkipBackupError(refusing: .inodeFlagsNeedFileOrDirectory, path: path, fileType: .socket),
      SkipBackupError(refusing: .cacheDirectoryTagNeedsDirectory, path: path),
    ]
    for error in swapped { #expect(error.isSwappedInDuringWalk, "\(error)") }
    var immutable = SkipBackupError(.setxattrat, .notPermitted, path: path, fileType: .regular)
    immutable.finding = .immutable
    let reported = [
      immutable,
      momentary,
      SkipBackupError(.setxattrat, .permissionDenied, path: path, fileType: .directory),
      SkipBackupError(.setxattrat, .noSuchFileOrDirectory, path: path),
      SkipBackupError(refusing: .foreignCacheDirectoryTag, path: path),
      SkipBackupError(refusing: .symbolicLinkNotFollowed, path: path),
    ]
    for error in reported { #expect(!error.isSwappedInDuringWalk, "\(error)") }
  }

  /// An `EPERM` on what is a directory at the look after it is tried
  /// again, up to the attempts in all, below a walk's root alone; a
  /// refusal for the item's type (a link there now) is never tried again.
  @Test func aMomentaryRefusalIsTriedAgainUpToTheAttempts() throws {
    var momentary = SkipBackupError(.setxattrat, .notPermitted, path: "/x", fileType: .directory)
    momentary.finding = .neitherImmutableNorAppendOnly
    var calls = 0
    func failing(_ times: Int, with error: SkipBackupError) -> () throws(SkipBackupError) -> Int {
      calls = 0
      return { () throws(SkipBackupError) -> Int in
        calls += 1
        if calls <= times { throw error }
        return calls
      }
    }
    let attempts = momentaryRefusalAttempts
    #expect(attempts > 2)
    #expect(
      try retryingAMomentaryRefusal(at: 1, failing(attempts - 1, with: momentary)) == attempts)
    #expect(throws: SkipBackupError.self) {
      try retryingAMomentaryRefusal(at: 1, failing(attempts, with: momentary))
    }
    #expect(calls == attempts)
    #expect(throws: SkipBackupError.self) {
      try retryingAMomentaryRefusal(at: 0, failing(1, with: momentary))
    }
    #expect(calls == 1)
    let link = SkipBackupError(.setxattrat, .notPermitted, path: "/x", fileType: .symbolicLink)
    #expect(throws: SkipBackupError.self) {
      try retryingAMomentaryRefusal(at: 1, failing(1, with: link))
    }
    #expect(calls == 1)
  }

  #if ENABLE_MOCKING
    /// The race of item 7, made exact: a symbolic link is swapped in just
    /// before the set (the kernel answers `EPERM`), and the directory is
    /// back by the time the item is looked at. Its flags say it is not
    /// immutable, so the message says what most likely happened instead.
    @Test func anEPERMFromALinkSwappedInAndOutIsNotBlamedOnImmutability() throws {
      let parent = tree.directory("parent")
      tree.file("parent/item/inside")
      let directory = try FileDescriptor.open(FilePath(parent), .readOnly)
      defer { try? directory.close() }
      let item = FileItem(name: "item", in: directory, displayPath: FilePath(parent + "/item"))
      let failure = MockingDriver.withMocking { driver in
        driver.perform(before: .setxattrat, number: 1) {
          precondition(rename(parent + "/item", parent + "/away") == 0)
          precondition(symlink("/", parent + "/item") == 0)
        }
        driver.perform(before: .statx, number: 1) {
          precondition(unlink(parent + "/item") == 0)
          precondition(rename(parent + "/away", parent + "/item") == 0)
        }
        return Result { () throws(SkipBackupError) in try Mechanism.xdg.mark(item) }
      }
      guard case .failure(let error) = failure else {
        Issue.record("the kernel's EPERM on the link was not thrown")
        return
      }
      #expect(error.cause == .failed(.setxattrat, .notPermitted))
      #expect(error.fileType == .directory)
      #expect(error.finding == .neitherImmutableNorAppendOnly)
      // The walking commands try such an item again (it holds the
      // directory again), and report it only if it refuses each time.
      #expect(error.isRefusedForAMomentaryType)
      #expect(!error.isSwappedInDuringWalk)
      #expect(!error.description.contains("immutable or append-only"))
      #expect(error.description.contains("neither immutable nor append-only"))
      #expect(error.description.contains("symbolic link or special file"))
      #expect(getfattr(parent + "/item", Names.xdg) == nil)
    }

    /// Left in place, the link is what the message names.
    @Test func anEPERMFromALinkThatStaysNamesTheLink() throws {
      let parent = tree.directory("parent")
      tree.file("parent/item")
      let directory = try FileDescriptor.open(FilePath(parent), .readOnly)
      defer { try? directory.close() }
      let item = FileItem(name: "item", in: directory, displayPath: FilePath(parent + "/item"))
      let failure = MockingDriver.withMocking { driver in
        driver.perform(before: .setxattrat, number: 1) {
          precondition(unlink(parent + "/item") == 0)
          precondition(symlink("/", parent + "/item") == 0)
        }
        return Result { () throws(SkipBackupError) in try Mechanism.xdg.mark(item) }
      }
      guard case .failure(let error) = failure else {
        Issue.record("the kernel's EPERM on the link was not thrown")
        return
      }
      #expect(error.fileType == .symbolicLink)
      #expect(error.isRefusedForFileType)
      #expect(error.isSwappedInDuringWalk)
      #expect(error.reason == "Linux keeps no user extended attributes on symbolic links")
    }
  #endif
}
