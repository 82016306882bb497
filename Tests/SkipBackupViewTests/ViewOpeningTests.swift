import Foundation
import SkipBackupCore
import SkipBackupView
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// How the mounter reaches each ROOT's real directory, in process: by its
/// canonical path, resolved once, with no symbolic link anywhere on the
/// way. A link there now was swapped in since the path was made canonical
/// (another user's directory on the way to root's ROOT, turned into a link
/// to root's own), and is refused rather than followed.
@Suite(.onTestThreads) struct ViewOpeningTests {
  @Test func aLinkOnTheWayToTheRealRootIsRefused() throws {
    let tree = try TemporaryDirectory()
    tree.directory("real/root")
    try FileManager.default.createSymbolicLink(
      atPath: tree.path + "/link", withDestinationPath: "real")
    let opened = try OverlayView.openReal(FilePath(tree.path + "/real/root"))
    #expect(opened.path == FilePath(tree.path + "/real/root"))

    var failure: SkipBackupError?
    do throws(SkipBackupError) {
      _ = try OverlayView.openReal(FilePath(tree.path + "/link/root"))
    } catch {
      failure = error
    }
    #expect(failure?.call == .openat2)
    #expect(failure?.errno == .tooManySymbolicLinkLevels)
    #expect(failure?.path == FilePath(tree.path + "/link/root"))
  }
}
