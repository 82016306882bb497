// The sizes a dry sweep shows, in process, against GNU du: the sized walk
// of what the sweep would mark.

import Foundation
import SkipBackupCore
import SkipBackupReport
import SkipBackupSweep
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct SweepSizeTests {
  /// A home as pnpm and cargo leave it: two node_modules holding hard
  /// links to one store outside them and to each other, a target holding
  /// two links of one file and a sparse file, and a filesystem mounted
  /// inside a node_modules.
  private func makeHome(_ scratch: TemporaryDirectory) -> (home: String, mount: TemporaryMount?) {
    let home = scratch.directory("home")
    scratch.file("home/store/big", String(repeating: "s", count: 200_000))
    for project in ["p1", "p2", "p4"] {
      scratch.file("home/\(project)/package.json", "{}")
      scratch.file(
        "home/\(project)/node_modules/own.js", String(repeating: "n", count: 30_000 + project.count)
      )
    }
    #expect(link(home + "/store/big", home + "/p1/node_modules/big") == 0)
    #expect(link(home + "/store/big", home + "/p2/node_modules/big") == 0)
    scratch.file("home/p1/node_modules/shared.js", String(repeating: "h", count: 80_000))
    #expect(link(home + "/p1/node_modules/shared.js", home + "/p2/node_modules/shared.js") == 0)
    scratch.file("home/p3/Cargo.toml", "")
    scratch.file("home/p3/target/debug/app", String(repeating: "a", count: 120_000))
    #expect(link(home + "/p3/target/debug/app", home + "/p3/target/app") == 0)
    #expect(run(["truncate", "-s", "20M", Argument(home + "/p3/target/sparse")]).status == 0)
    let mount = TemporaryMount(at: scratch.directory("home/p4/node_modules/mnt"))
    scratch.file("home/p4/node_modules/mnt/inside", String(repeating: "i", count: 500_000))
    return (home, mount)
  }

  /// Each item's bytes, and their total, are what GNU du counts of the
  /// items the sweep would mark: each inode with several links once in the
  /// whole run, where it is met first, so that the total is `du -sc`'s (not
  /// the links' sum), and with -x as `du -x` counts, without what is
  /// mounted inside. Nothing is marked.
  @Test func aDrySweepSizesWhatItWouldMarkAsGNUDuCountsIt() throws {
    let scratch = try TemporaryDirectory()
    let (home, mount) = makeHome(scratch)
    defer { mount?.unmount() }
    try #require(mount != nil)
    let rules = scratch.file("rules", "")
    let items = ["p1/node_modules", "p2/node_modules", "p3/target", "p4/node_modules"].map {
      home + "/" + $0
    }
    for oneFileSystem in [false, true] {
      let x = oneFileSystem ? ["-x"] : []
      let objects = try jsonObjectsWritten { descriptor in
        try SweepRun(
          roots: [FilePath(home)], rulesFile: FilePath(rules), oneFileSystem: oneFileSystem,
          dryRun: true, quiet: true, format: .json, streams: Streams(output: descriptor)
        ).run()
      }
      var bytes: [String: Int64] = [:]
      for object in objects {
        bytes[object["path"] as? String ?? "?"] = (object["bytes"] as? NSNumber)?.int64Value
      }
      #expect(bytes.keys.sorted() == items, "-x \(oneFileSystem): \(objects)")
      let total = gnuDu(["-s", "-c", "-B1"] + x, items).last
      #expect(total?.path == "total")
      #expect(bytes.values.reduce(0, +) == total?.value, "-x \(oneFileSystem): \(bytes)")
      // Links only within it: as du counts it alone.
      for item in items.suffix(2) {
        #expect(bytes[item] == gnuDuTotal(["-B1"] + x, item), "-x \(oneFileSystem): \(item)")
      }
    }
    #expect(run(["getfattr", "-R", "-d", "-m", "-", Argument(home)]).output.isEmpty)
  }
}
