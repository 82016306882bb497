// du's side of the sized walk, in process, against GNU du: every
// directory's sum when the walk hands nearly every directory to another
// thread, and -x with a filesystem mounted below ROOT.

import Foundation
import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SkipBackupUsage
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct DiskUsageTests {
  /// One ROOT walked by `threads` visitors that start handing directories
  /// over after the first item, as UsageRun walks with two after 1,000;
  /// every included directory and excluded item ranked.
  private func usage(
    of root: String, apparentSize: Bool, threads: Int = 8
  ) -> (usage: DiskUsage, visitors: [UsageVisitor]) {
    let links = SharedLinks()
    let diagnostics = Diagnostics()
    let progress = Progress(enabled: false)
    let visitors = (0..<threads).map { _ in
      UsageVisitor(
        mechanisms: .all, apparentSize: apparentSize, top: 100_000, links: links,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    for visitor in visitors { visitor.reset(rootLength: root.utf8.count, rootExclusion: nil) }
    _ = walkTree(root: FilePath(root), visitors: visitors, parallelAfter: 1)
    #expect(diagnostics.failures == 0)
    let usage = DiskUsage(
      root: Array(root.utf8), visitors: visitors, mechanisms: MechanismSet.all.count,
      top: 100_000, rule: SizeRule(apparentSize: apparentSize, links: links))
    return (usage, visitors)
  }

  private static func text(_ sized: [SizedPath]) -> [String] {
    sized.map { "\($0.bytes) \(String(decoding: $0.path, as: UTF8.self))" }
  }

  /// Every directory's included bytes, every excluded item's bytes, the
  /// bytes by mechanism and the counts of each side are what GNU du counts
  /// of those items, whichever threads met their entries: the chain rebuilt
  /// above each handed-over directory and the parts joined by path add up.
  @Test(arguments: [false, true])
  func everySumIsGNUDusWhicheverThreadsHoldIt(apparentSize: Bool) throws {
    let scratch = try TemporaryDirectory()
    let tree = SizedTree(at: scratch.path + "/root")
    let unit = apparentSize ? ["-b"] : ["-B1"]
    let sizes = Dictionary(
      gnuDu(["-a"] + unit, [tree.root]).map { ($0.path, $0.value) }, uniquingKeysWith: { a, _ in a }
    )
    let directories = gnuDu(unit, [tree.root]).map(\.path)
    let tops = tree.excluded.map(\.path)
    func excludedBytes(below directory: String) -> Int64 {
      tops.filter { SizedTree.path($0, isAtOrBelow: directory) }.reduce(0) { $0 + sizes[$1]! }
    }
    // Larger first, equal sizes by path: the order du's report promises.
    func ranked(_ items: [(String, Int64)]) -> [String] {
      items.sorted {
        $0.1 != $1.1 ? $0.1 > $1.1 : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8))
      }.map { "\($0.1) \($0.0)" }
    }
    let expectedExcluded = ranked(tops.map { ($0, sizes[$0]!) })
    let expectedIncluded = ranked(
      directories.filter { path in
        path != tree.root && !tops.contains { SizedTree.path(path, isAtOrBelow: $0) }
      }.map { ($0, sizes[$0]! - excludedBytes(below: $0)) })
    let inodes = gnuDuTotal(["--inodes"], tree.root)
    let excludedInodes = tops.reduce(0) { $0 + gnuDuTotal(["--inodes"], $1) }
    // MechanismSet.all's order: legacy, resource, xdg.
    let byMechanism = [Names.legacy, Names.resource, Names.xdg].map { attribute in
      tree.excluded.filter { $0.attribute == attribute }.reduce(Int64(0)) { $0 + sizes[$1.path]! }
    }

    // The order the threads meet directories in changes from walk to walk.
    for _ in 0..<3 {
      let (usage, visitors) = self.usage(of: tree.root, apparentSize: apparentSize)
      #expect(
        visitors.filter { $0.included.files > 0 }.count > 1, "the walk was not shared")
      #expect(Self.text(usage.topExcluded) == expectedExcluded)
      #expect(Self.text(usage.topIncludedDirectories) == expectedIncluded)
      #expect(usage.included.bytes + usage.excluded.bytes == sizes[tree.root])
      #expect(usage.excluded.bytes == excludedBytes(below: tree.root))
      #expect(
        Int64(
          usage.included.files + usage.included.directories + usage.excluded.files
            + usage.excluded.directories) == inodes)
      #expect(Int64(usage.excluded.files + usage.excluded.directories) == excludedInodes)
      #expect(usage.byMechanism == byMechanism)
    }
  }

  /// With -x a filesystem mounted below ROOT is left out altogether, as
  /// `du -x` leaves it, also below a marked directory; without, it counts.
  /// An inode linked from two ROOTs counts under the first, as
  /// `du -s ROOT1 ROOT2` counts it.
  @Test func aMountPointIsLeftOutWithOneFileSystemAndLinksCountOnceAcrossRoots() throws {
    let scratch = try TemporaryDirectory()
    let first = scratch.directory("first")
    let second = scratch.directory("second")
    scratch.file("first/plain", String(repeating: "p", count: 40_000))
    scratch.file("first/shared", String(repeating: "s", count: 90_000))
    #expect(link(first + "/shared", second + "/shared-too") == 0)
    scratch.file("second/own", String(repeating: "o", count: 7_000))
    let marked = scratch.directory("first/marked")
    SizedTree.mark(marked, Names.xdg)
    scratch.file("first/marked/f", String(repeating: "m", count: 12_000))
    let mounts = [scratch.directory("first/mnt"), scratch.directory("first/marked/mnt")].compactMap
    {
      TemporaryMount(at: $0)
    }
    defer { for mount in mounts { mount.unmount() } }
    try #require(mounts.count == 2)
    scratch.file("first/mnt/inside", String(repeating: "i", count: 300_000))
    scratch.file("first/marked/mnt/inside", String(repeating: "j", count: 200_000))

    for oneFileSystem in [true, false] {
      for apparentSize in [false, true] {
        let x = oneFileSystem ? ["-x"] : []
        let unit = apparentSize ? ["-b"] : ["-B1"]
        let objects = try jsonObjectsWritten { descriptor in
          try UsageRun(
            roots: [FilePath(first), FilePath(second)], mechanisms: .all,
            apparentSize: apparentSize, format: .json, oneFileSystem: oneFileSystem, quiet: true,
            streams: Streams(output: descriptor)
          ).run()
        }
        let totals = objects.map {
          Self.side($0, "included").bytes + Self.side($0, "excluded").bytes
        }
        let inodes = objects.map { object in
          ["included", "excluded"].reduce(0) {
            $0 + Self.side(object, $1).files + Self.side(object, $1).directories
          }
        }
        let what = "-x \(oneFileSystem), apparent \(apparentSize)"
        #expect(totals == gnuDu(["-s"] + x + unit, [first, second]).map(\.value), "\(what)")
        #expect(inodes == gnuDu(["-s", "--inodes"] + x, [first, second]).map(\.value), "\(what)")
        #expect(
          objects.first.map { Self.side($0, "excluded").bytes }
            == gnuDuTotal(x + unit, marked), "\(what)")
      }
    }
  }

  private static func side(_ object: [String: Any], _ key: String) -> (
    files: Int64, directories: Int64, bytes: Int64
  ) {
    let counts = object[key] as? [String: Any] ?? [:]
    return (
      (counts["files"] as? NSNumber)?.int64Value ?? -1,
      (counts["directories"] as? NSNumber)?.int64Value ?? -1,
      (counts["bytes"] as? NSNumber)?.int64Value ?? -1
    )
  }
}
