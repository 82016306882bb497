// run's reading of /proc/self/mountinfo in process: the kernel's escapes
// (show_mountinfo quotes space, tab, newline and backslash as \ooo), the
// fields it keeps, and the mounts of one filesystem; and the live table
// against util-linux's findmnt, which reads the same file with a parser of
// its own.

import SkipBackupView
import Testing
import TestSupport

@Suite(.onTestThreads) struct MountTableTests {
  private static let table = Array(
    """
    22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
    36 22 8:1 /srv/sub /mnt/a\\040b\\011c\\012d\\134e rw,noatime shared:2 master:1 - ext4 /dev/sda1 rw
    37 22 0:40 / /tmp/x rw - tmpfs tmpfs rw
    38 22 8:1 / /mnt/\\777\\04 rw - ext4 /dev/sdb1 rw
    short line
    39 22 0:41 /dir\\040one /media/usb rw - vfat /dev/sdc1 rw

    """.utf8)

  @Test func eachMountReadsBackAsTheKernelWroteIt() {
    let mounts = MountTable.mounts(in: Self.table)
    #expect(
      mounts.map { String(decoding: $0.id, as: UTF8.self) } == ["22", "36", "37", "38", "39"])
    #expect(mounts[1].place.device == Array("8:1".utf8))
    #expect(mounts[1].place.root == Array("/srv/sub".utf8))
    // Each \ooo is its byte; the space, tab, newline and backslash of a name.
    #expect(mounts[1].place.point == Array("/mnt/a b\tc\nd\\e".utf8))
    // What is no octal byte (\777 is 511), or too short, stays as written.
    #expect(mounts[3].place.point == Array("/mnt/\\777\\04".utf8))
    #expect(mounts[4].place.root == Array("/dir one".utf8))
    #expect(MountTable.mountPoints(in: Self.table) == mounts.map(\.place.point))
  }

  /// The mounts of one filesystem: same type and source after the " - ",
  /// whatever the optional fields before it.
  @Test func theMountsOfOneFilesystem() {
    let sda1 = [Array("/".utf8), Array("/mnt/a b\tc\nd\\e".utf8)]
    #expect(MountTable.mountPoints(in: Self.table, sharingFilesystemWith: 36) == sda1)
    #expect(MountTable.mountPoints(in: Self.table, sharingFilesystemWith: 22) == sda1)
    #expect(
      MountTable.mountPoints(in: Self.table, sharingFilesystemWith: 37) == [Array("/tmp/x".utf8)])
    #expect(MountTable.mountPoints(in: Self.table, sharingFilesystemWith: 99).isEmpty)
  }

  /// This process's table as findmnt reads it: every mount's ID, device,
  /// root and mount point. findmnt's raw output escapes a byte as \xHH.
  @Test func theLiveTableIsFindmntsTable() throws {
    func findmnt() -> [[UInt8]] {
      let listed = run(["findmnt", "--raw", "--noheadings", "--output", "ID,MAJ:MIN,FSROOT,TARGET"])
      #expect(listed.status == 0, "\(listed.errors)")
      return listed.standardOutput.split(separator: UInt8(ascii: "\n")).map { line in
        unescape(Array(line), after: Array("\\x".utf8), digits: 2, radix: 16)
      }
    }
    func ours() throws -> [[UInt8]] {
      try MountTable.mounts().map { mount in
        mount.id + [0x20] + mount.place.device + [0x20] + mount.place.root + [0x20]
          + mount.place.point
      }
    }
    // Other tests mount loop images: a table read the same twice around
    // findmnt's is the one findmnt read.
    for _ in 0..<5 {
      let before = try ours()
      let theirs = findmnt()
      guard try ours() == before else { continue }
      #expect(!before.isEmpty)
      #expect(
        before.sorted { $0.lexicographicallyPrecedes($1) }
          == theirs.sorted { $0.lexicographicallyPrecedes($1) })
      return
    }
    Issue.record("the mount table changed during every one of 5 reads")
  }
}
