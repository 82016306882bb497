import Foundation
import Testing
import TestSupport

/// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN), for
/// the tests that need another filesystem or a full one.
let canMount: Bool = {
  guard let scratch = try? TemporaryDirectory(prefix: "skipbackup-mount") else { return false }
  let mounted = run(["mount", "-t", "tmpfs", "-o", "size=64k", "none", Argument(scratch.path)])
  guard mounted.status == 0 else { return false }
  _ = run(["umount", Argument(scratch.path)])
  return true
}()

/// The nodump and cachedir mechanisms, which Linux backup tools read
/// themselves: marked by skipbackup or by a peer, read by the other, and
/// honoured by the real tools.
@Suite(.serialized, .onTestThreads(startingFirst: true)) struct BridgeTests {
  /// A small tree: marked files and directories with content, unmarked ones
  /// beside them.
  private func tree() throws -> TemporaryDirectory {
    let tree = try TemporaryDirectory()
    for path in [
      "root/keep", "root/by tool", "root/by peer", "root/dir by tool/inside",
      "root/dir by peer/sub/inside", "root/kept dir/inside", "root/kept dir/marked inside",
    ] {
      tree.file(path)
    }
    return tree
  }

  @Test func nodumpIsHonouredByBsdtarAndBorg() throws {
    let tree = try tree()
    defer { withExtendedLifetime(tree) {} }
    let root = tree.path + "/root"
    try check(
      skipbackup(
        "mark", "-m", "nodump", Argument(root + "/by tool"), Argument(root + "/dir by tool"),
        Argument(root + "/kept dir/marked inside")))
    try check(
      run(["chattr", "+d", Argument(root + "/by peer"), Argument(root + "/dir by peer")]))

    // Each side reads what the other wrote.
    let flags = try check(run(["lsattr", "-d", Argument(root + "/by tool")]))
    #expect(flags.output.prefix(while: { $0 != " " }).contains("d"), "\(flags)")
    let status = try check(
      skipbackup("status", "-m", "nodump", Argument(root + "/by peer"), Argument(root + "/keep")))
    #expect(status.lines == ["[Excluded]    \(root)/by peer", "[Included]    \(root)/keep"])
    #expect(
      skipbackup("check", "-m", "nodump", Argument(root + "/dir by peer/sub/inside")).status == 0)
    #expect(skipbackup("check", Argument(root + "/by peer")).status == 1, "nodump is not in all")

    let included = try listedIncluded(root, mechanisms: "nodump")
    #expect(included.count == 4, "\(included.map(\.display))")
    let place = try BackupPlace()
    defer { withExtendedLifetime(place) {} }

    try check(
      run(
        ["bsdtar", "--create", "--file", "nodump.tar", "--nodump", "-C", Argument(root), "."],
        directory: place.work))
    let bsdtar = place.work + "/bsdtar"
    Make.directory(Bytes(bsdtar))
    try check(
      run(["bsdtar", "--extract", "--file", "nodump.tar", "-C", "bsdtar"], directory: place.work))
    let fromBsdtar = try pathSet(under: Bytes(bsdtar))
    #expect(fromBsdtar == included, "bsdtar --nodump: \(difference(fromBsdtar, included))")

    try place.prepare(.borg)
    try check(place.tool(["borg", "create", "--exclude-nodump", "::nodump", Argument(root)]))
    let fromBorg = try extractedByBorg("nodump", root: root, place)
    #expect(fromBorg == included, "borg --exclude-nodump: \(difference(fromBorg, included))")

    // clear takes the flag off again.
    try check(skipbackup("clear", "-m", "nodump", Argument(root + "/by peer")))
    let cleared = try check(run(["lsattr", "-d", Argument(root + "/by peer")]))
    #expect(!cleared.output.prefix(while: { $0 != " " }).contains("d"), "\(cleared)")
  }

  @Test func cachedirIsHonouredByTarBorgAndRestic() throws {
    let tree = try tree()
    defer { withExtendedLifetime(tree) {} }
    let root = tree.path + "/root"
    try check(
      skipbackup("mark", "-m", "cachedir", Argument(root + "/dir by tool")))
    // A tag another program wrote, with the bare signature and no newline.
    tree.file("root/dir by peer/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55")
    // A file of that name that is no tag: nobody reads it as one.
    tree.file("root/kept dir/CACHEDIR.TAG", "Signature: not a cache directory")

    let status = try check(
      skipbackup(
        "status", "-m", "cachedir", Argument(root + "/dir by peer"), Argument(root + "/kept dir"),
        Argument(root + "/dir by tool/inside")))
    #expect(
      status.lines == [
        "[Excluded]    \(root)/dir by peer", "[Included]    \(root)/kept dir",
        "[Excluded]    \(root)/dir by tool/inside",
      ])
    let tag = try #require(
      FileManager.default.contents(atPath: root + "/dir by tool/CACHEDIR.TAG"))
    #expect(tag.starts(with: Data("Signature: 8a477f597d28d172789f06886806bc55".utf8)))

    let included = try listedIncluded(root, mechanisms: "cachedir")
    #expect(included.count == 8, "\(included.map(\.display))")
    // What --exclude-caches keeps of a cache directory: the directory and its tag.
    let withTags = included.union(
      ["dir by tool", "dir by tool/CACHEDIR.TAG", "dir by peer", "dir by peer/CACHEDIR.TAG"].map(
        Bytes.init))
    let place = try BackupPlace()
    defer { withExtendedLifetime(place) {} }

    for (option, expected) in [("--exclude-caches-all", included), ("--exclude-caches", withTags)] {
      let archive = place.work + "/caches.tar"
      try check(
        run([
          "tar", "--create", "--file", Argument(archive), Argument(option), "-C", Argument(root),
          ".",
        ]))
      let extracted = place.work + "/tar" + option
      Make.directory(Bytes(extracted))
      try check(run(["tar", "--extract", "--file", Argument(archive), "-C", Argument(extracted)]))
      let fromTar = try pathSet(under: Bytes(extracted))
      #expect(fromTar == expected, "tar \(option): \(difference(fromTar, expected))")
    }

    try place.prepare(.borg)
    try check(place.tool(["borg", "create", "--exclude-caches", "::caches", Argument(root)]))
    let fromBorg = try extractedByBorg("caches", root: root, place)
    #expect(fromBorg == included, "borg --exclude-caches: \(difference(fromBorg, included))")

    try place.prepare(.restic)
    try check(place.tool(["restic", "backup", "--exclude-caches", Argument(root)]))
    let restore = place.work + "/restic"
    try check(place.tool(["restic", "restore", "latest", "--target", Argument(restore)]))
    let fromRestic = try pathSet(under: Bytes(restore + root))
    #expect(fromRestic == withTags, "restic --exclude-caches: \(difference(fromRestic, withTags))")

    // clear removes the tag skipbackup wrote and leaves the file that is no
    // tag; the tag another program wrote stays too, and clear says so and
    // fails, since that directory is still excluded.
    let cleared = skipbackup(
      "clear", "-m", "cachedir", Argument(root + "/dir by tool"), Argument(root + "/dir by peer"),
      Argument(root + "/kept dir"))
    #expect(cleared.status == 1)
    #expect(
      cleared.errors
        == "skipbackup: \(root)/dir by peer/CACHEDIR.TAG: left in place: this cache directory tag "
        + "was not written by skipbackup (its contents differ), so another tool such as cargo keeps "
        + "a cache here and expects it; the directory stays excluded until you remove the tag "
        + "yourself\n")
    #expect(!FileManager.default.fileExists(atPath: root + "/dir by tool/CACHEDIR.TAG"))
    #expect(
      try String(contentsOfFile: root + "/dir by peer/CACHEDIR.TAG", encoding: .utf8)
        == "Signature: 8a477f597d28d172789f06886806bc55")
    #expect(FileManager.default.fileExists(atPath: root + "/kept dir/CACHEDIR.TAG"))
    // mark never writes over it either.
    let refused = skipbackup("mark", "-m", "cachedir", Argument(root + "/kept dir"))
    #expect(refused.status == 1)
    #expect(refused.errors.contains("not a cache directory tag; it is left as it is"))
    let kept = try String(contentsOfFile: root + "/kept dir/CACHEDIR.TAG", encoding: .utf8)
    #expect(kept == "Signature: not a cache directory")
  }

  /// A filesystem without inode flags (procfs here; NFS and FAT alike)
  /// carries no nodump mark: reading says included, clearing has nothing to do.
  @Test func nodumpWhereThereAreNoInodeFlags() throws {
    let status = try check(skipbackup("status", "-m", "nodump", "/proc/self/status", "/proc/self"))
    #expect(status.lines == ["[Included]    /proc/self/status", "[Included]    /proc/self"])
    #expect(skipbackup("check", "-m", "nodump", "/proc/self/status").status == 1)
    #expect(skipbackup("clear", "-m", "nodump", "/proc/self/status").status == 0)
    let marked = skipbackup("mark", "-m", "nodump", "/proc/self/status")
    #expect(marked.status == 1)
    #expect(marked.errors.contains("the filesystem here keeps no inode flags"), "\(marked)")
  }

  /// As chattr does, nodump refuses a FIFO or a device without opening it:
  /// opening a device can act on it (a tape rewinds on close). A writer
  /// blocked on the FIFO would be released by any open for reading.
  @Test func nodumpNeverOpensAFIFO() throws {
    let tree = try TemporaryDirectory()
    defer { withExtendedLifetime(tree) {} }
    let fifo = tree.path + "/fifo"
    Make.fifo(Bytes(fifo))
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = ["-c", ": > \"$0\"; touch \"$0.opened\"", fifo]
    try writer.run()
    Thread.sleep(forTimeInterval: 0.3)  // the writer blocks in open(2)

    let marked = skipbackup("mark", "-m", "nodump", Argument(fifo))
    #expect(marked.status == 1)
    #expect(
      marked.errors.contains(
        "only regular files and directories carry the nodump flag (chattr +d), and this is a FIFO"),
      "\(marked)")
    #expect(skipbackup("clear", "-m", "nodump", Argument(fifo)).status == 0)
    #expect(
      try check(skipbackup("status", "-m", "nodump", Argument(fifo))).output.hasPrefix("[Included]")
    )
    Thread.sleep(forTimeInterval: 0.3)
    #expect(!FileManager.default.fileExists(atPath: fifo + ".opened"), "skipbackup opened the FIFO")

    // Release the writer.
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    writer.waitUntilExit()
    close(reader)
    let device = skipbackup("mark", "-m", "nodump", "/dev/null")
    #expect(device.errors.contains("and this is a character device"), "\(device)")
  }

  /// A tag cut short by a full disk would read as someone else's file, which
  /// mark and clear never touch again: none is left behind.
  @Test(.enabled(if: canMount)) func cachedirOnAFullFilesystemLeavesNoTag() throws {
    let tree = try TemporaryDirectory()
    defer { withExtendedLifetime(tree) {} }
    let mountPoint = tree.directory("small")
    try check(run(["mount", "-t", "tmpfs", "-o", "size=4k", "none", Argument(mountPoint)]))
    defer { _ = run(["umount", Argument(mountPoint)]) }
    let directory = mountPoint + "/cache"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    // Fill the filesystem; dd stops at ENOSPC.
    _ = run(["dd", "if=/dev/zero", Argument("of=" + mountPoint + "/fill"), "bs=1k", "count=64"])

    let full = skipbackup("mark", "-m", "cachedir", Argument(directory))
    #expect(full.status == 1)
    #expect(full.errors.contains("no space left on the device"), "\(full)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/CACHEDIR.TAG"))

    try FileManager.default.removeItem(atPath: mountPoint + "/fill")
    try check(skipbackup("mark", "-m", "cachedir", Argument(directory)))
    #expect(skipbackup("check", "-m", "cachedir", Argument(directory)).status == 0)
  }

  /// The paths of borg archive `name`, extracted, relative to ROOT.
  private func extractedByBorg(_ name: String, root: String, _ place: BackupPlace) throws -> Set<
    Bytes
  > {
    let target = place.work + "/borg-" + name
    Make.directory(Bytes(target))
    try check(place.tool(["borg", "extract", Argument("::" + name)], in: target))
    return try pathSet(under: Bytes(target + root))
  }
}
