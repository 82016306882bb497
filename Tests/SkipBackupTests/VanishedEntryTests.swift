import Foundation
import Testing
import TestSupport

import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// A directory renamed away and straight back during
  /// `mark -R` was counted "vanished" and its items were never visited. A
  /// vanished entry whose path exists again at the end of the walk is
  /// handled then; one still gone is counted. The walk runs on the test's
  /// thread (one visitor), where the mocking driver acts.
  @Suite(.onTestThreads) struct VanishedEntryTests {
    let tree: TemporaryDirectory
    let root: String
    init() throws {
      tree = try TemporaryDirectory()
      root = tree.directory("root")
      tree.file("root/before")
      tree.file("root/d/x")
      tree.file("root/d/inner/y")
      tree.file("root/e/z")
    }

    var everything: [String] {
      ["", "/before", "/d", "/d/x", "/d/inner", "/d/inner/y", "/e", "/e/z"].map { root + $0 }
    }

    /// The walk's own `openat` of `d` finds it gone (ENOENT, as a rename
    /// away makes it) and it is there again afterwards: its items are
    /// walked at the end, `d` itself is not visited twice.
    @Test func aDirectoryGoneWhenOpenedAndBackIsWalkedAtTheEnd() {
      var visited: [String] = []
      let counts = MockingDriver.withMocking { driver in
        walkTree(
          root: FilePath(root),
          visit: { entry in
            let path = String(decoding: entry.pathBytes, as: UTF8.self)
            visited.append(path)
            // The next openat is the walk's own, of this directory.
            if path == root + "/d", visited.filter({ $0 == path }).count == 1 {
              driver.force(.noSuchFileOrDirectory, on: .openat, times: 1)
            }
            return .descend
          },
          failure: { Issue.record("\($0)") })
      }
      #expect(counts.vanished == 0)
      #expect(visited.sorted() == everything.sorted())
    }

    /// Gone for good (renamed out of the tree when the walk reached it):
    /// counted vanished once, and nothing of it is visited.
    @Test func aDirectoryStillGoneAtTheEndIsCountedVanished() {
      var visited: [String] = []
      let counts = walkTree(
        root: FilePath(root),
        visit: { entry in
          let path = String(decoding: entry.pathBytes, as: UTF8.self)
          visited.append(path)
          if path == root + "/d" { precondition(rename(path, tree.path + "/away") == 0) }
          return .descend
        },
        failure: { Issue.record("\($0)") })
      #expect(counts.vanished == 1)
      #expect(visited.sorted() == ["", "/before", "/d", "/e", "/e/z"].map { root + $0 }.sorted())
    }

    /// A visitor that finds the entry gone when it acts (a mark's ENOENT)
    /// says `.vanished`: the entry is visited again at the end, with its
    /// items, when it is back by then.
    @Test func anEntryTheVisitorFoundGoneIsVisitedAgainAtTheEnd() {
      var visited: [String] = []
      var gone = 0
      let counts = walkTree(
        root: FilePath(root),
        visit: { entry in
          let path = String(decoding: entry.pathBytes, as: UTF8.self)
          visited.append(path)
          guard path == root + "/d", gone == 0 else { return .descend }
          // Away and straight back, between the listing and the visitor's call.
          precondition(rename(path, tree.path + "/away") == 0)
          let failed = (try? Mechanism.xdg.mark(entry.item)) == nil
          precondition(rename(tree.path + "/away", path) == 0)
          gone += 1
          return failed ? .vanished : .descend
        },
        failure: { Issue.record("\($0)") })
      #expect(gone == 1)
      #expect(counts.vanished == 0)
      #expect(visited.sorted() == (everything + [root + "/d"]).sorted(), "d twice, the rest once")
    }
  }
#endif

#if ENABLE_MOCKING
  /// A walk with `wholeListings` (sweep's) shows each entry with its
  /// parent's whole listing, valid only while that directory's entries are
  /// visited. An entry found gone before its visit cannot be visited at the
  /// end of the walk, when no listing of its parent is left: it is counted
  /// vanished at once (looked for again at the end, the sweep's visitor read
  /// the freed listing of its parent, or an index past its open directories).
  @Suite(.onTestThreads) struct VanishedEntryWithWholeListingsTests {
    /// Records the visits and the listings it was shown.
    final class Recorder: TreeVisitor {
      let onRootListing: () -> Void
      var visited: [String] = []
      var listed: [String] = []
      init(onRootListing: @escaping () -> Void) { self.onRootListing = onRootListing }

      func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
        visited.append(String(decoding: entry.pathBytes, as: UTF8.self))
        return .descend
      }
      func walkFailed(_ error: SkipBackupError) { Issue.record("\(error)") }
      func enterDirectory(_ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int)
      {
        listed.append(String(decoding: path, as: UTF8.self))
        if depth == 1 { onRootListing() }
      }
    }

    @Test func anEntryGoneBeforeItsVisitIsCountedNotVisitedAtTheEnd() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      tree.file("root/d/x")
      var recorder: Recorder?
      let counts = MockingDriver.withMocking { driver in
        // With -x every directory is looked up (fstatat) before its visit:
        // the first, of d, says it is gone; it is there again at the end.
        let visitor = Recorder { driver.force(.noSuchFileOrDirectory, on: .fstatat, times: 1) }
        recorder = visitor
        return walkTree(
          root: FilePath(root), options: TreeWalkOptions(oneFileSystem: true, wholeListings: true),
          visitors: [visitor])
      }
      #expect(counts.vanished == 1)
      #expect(recorder?.visited == [root], "\(String(describing: recorder?.visited))")
      #expect(recorder?.listed == [root])
    }
  }
#endif
