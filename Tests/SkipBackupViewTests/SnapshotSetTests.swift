import SkipBackupCore
import SkipBackupReport
import SkipBackupView
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `run --snapshot`'s snapshots in process, on a btrfs image of the test's
/// own, read back with btrfs-progs: one read-only snapshot a subvolume,
/// shared by its ROOTs, holding the instant it was taken, and gone after
/// `delete` with `btrfs subvolume list` as it was.
@Suite(
  .serialized, .enabled(if: getuid() == 0, "root: loop-mounting a btrfs image needs it"),
  .onTestThreads)
struct SnapshotSetTests {
  @Test func rootsOnOneSubvolumeShareOneReadOnlySnapshotUntilDeleted() throws {
    let image = try BtrfsImage()
    let home = try image.subvolume("home")
    let other = try image.subvolume("other")
    for directory in ["a", "b"] {
      #expect(run(["mkdir", Argument(home + "/" + directory)]).status == 0)
      let file = home + "/\(directory)/f"
      #expect(
        run(["sh", "-c", Argument("echo \(directory) > \"$0\""), Argument(file)]).status == 0)
    }
    let before = try image.subvolumes()

    let set = try SnapshotSet(
      [FilePath(home + "/a"), FilePath(home + "/b"), FilePath(other)].map { SnapshotRequest($0) },
      privilege: .root)
    #expect(set.snapshots.count == 2)
    #expect(set.roots.map(\.snapshot) == [0, 0, 1])
    #expect(set.roots.map(\.inside) == [Array("a".utf8), Array("b".utf8), []])
    let taken = try image.subvolumes().filter { !before.contains($0) }
    #expect(taken.count == 2, "\(taken)")
    #expect(taken.allSatisfy { $0.contains(".skipbackup-snapshots/") }, "\(taken)")
    for snapshot in set.snapshots {
      let property = run(["btrfs", "property", "get", "-ts", Argument(snapshot.path.string), "ro"])
      #expect(property.output == "ro=true\n", "\(property)")
    }

    // The snapshot is one instant: a change to the live tree is not in it.
    #expect(run(["sh", "-c", "echo changed > \"$0\"", Argument(home + "/a/f")]).status == 0)
    let frozen = run(["cat", Argument(set.roots[0].real.string + "/f")])
    #expect(frozen.output == "a\n", "\(frozen)")

    let streams = try CapturedStreams()
    set.delete(Diagnostics(streams: Streams(output: streams.output, errors: streams.errors)))
    #expect(streams.errorText.isEmpty, "\(streams.description)")
    #expect(try image.subvolumes() == before)
  }

  /// The subvolumes nested below a ROOT, from btrfs's own records: a
  /// subvolume before those nested in it, names as bytes (a newline, a
  /// byte that is no UTF-8), none outside the ROOT.
  @Test func nestedSubvolumesAreFoundBelowTheRoot() throws {
    let image = try BtrfsImage()
    let home = try image.subvolume("home")
    let odd = "in/odd\nname\u{00e9}"
    let script = #"""
      cd "$1" && mkdir -p in/d out && btrfs -q subvolume create "$2" &&
        btrfs -q subvolume create "$2/deeper" &&
        btrfs -q subvolume create "in/d/$(printf 'x\377')" && btrfs -q subvolume create out/x
      """#
    let made = run(["sh", "-c", Argument(script), "sh", Argument(home), Argument(odd)])
    try #require(made.status == 0, "\(made)")
    let found = try SnapshotProvider.facts(
      of: FilePath(home + "/in"), privilege: .root,
      listingNested: .listed(skippingUnreachable: false)
    ).nested.map(\.path.bytes)
    let deeper = Array((home + "/" + odd + "/deeper").utf8)
    #expect(
      Set(found) == [
        Array((home + "/in/d/x").utf8) + [0xFF], Array((home + "/" + odd).utf8), deeper,
      ],
      "\(found)")
    #expect(found.last == deeper, "\(found)")
    #expect(try SnapshotProvider.nestedSubvolumes(below: FilePath(home + "/out/x")).isEmpty)
  }

  /// A ROOT inside another on the same mount, in a subvolume of its own,
  /// has its snapshot kept beside the other's: nothing is written in the
  /// inner subvolume. A read-only subvolume is its own snapshot.
  @Test func anInnerSubvolumesSnapshotIsKeptBesideTheOuterOnes() throws {
    let image = try BtrfsImage()
    let home = try image.subvolume("home")
    let made = run([
      "sh", "-c",
      "btrfs -q subvolume create \"$0/vm\" && btrfs -q subvolume snapshot -r \"$0/vm\" \"$0/ro\"",
      Argument(home),
    ])
    try #require(made.status == 0, "\(made)")
    let before = try image.subvolumes()
    let set = try SnapshotSet(
      [FilePath(home), FilePath(home + "/vm"), FilePath(home + "/ro")].map { SnapshotRequest($0) },
      privilege: .root)
    #expect(set.snapshots.count == 3)
    let kept = home + "/.skipbackup-snapshots/"
    #expect(set.snapshots[0].path.string.hasPrefix(kept), "\(set.snapshots[0].path)")
    #expect(set.snapshots[1].path.string.hasPrefix(kept), "\(set.snapshots[1].path)")
    #expect(set.snapshots[2].path.string == home + "/ro")
    #expect(access(home + "/vm/.skipbackup-snapshots", F_OK) != 0)
    #expect(try image.subvolumes().count == before.count + 2)
    let streams = try CapturedStreams()
    set.delete(Diagnostics(streams: Streams(output: streams.output, errors: streams.errors)))
    #expect(streams.errorText.isEmpty, "\(streams.description)")
    #expect(try image.subvolumes() == before)
  }
}
