import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The program that makes or mounts a test's filesystem is not there
/// (`scripts/deps test` installs btrfs-progs, xfsprogs, bindfs,
/// squashfs-tools and erofs-utils), or it failed.
public struct TestFilesystemFailure: Error, CustomStringConvertible {
  public var result: ProcessResult
  public var description: String {
    result.status == 127 || result.errors.contains("not found")
      ? "a program is missing (scripts/deps test installs btrfs-progs, xfsprogs, bindfs, "
        + "squashfs-tools and erofs-utils)\n\(result)" : "\(result)"
  }
}

/// A filesystem of a test's own, of `kind`, in a sparse image of `size`
/// made by mkfs and loop-mounted at DIRECTORY/mnt with `options`;
/// unmounted (lazily, so that a process a failed test left cannot keep it)
/// when the test is done, which frees the loop device.
public class TestFilesystem {
  public enum Kind: String {
    case btrfs, ext4, xfs
  }

  public let directory: TemporaryDirectory
  /// Where the filesystem is mounted.
  public let mountPoint: String
  fileprivate var mounts: [String] = []

  public init(_ kind: Kind, size: String, options: [String] = []) throws {
    let mkfs = "mkfs." + kind.rawValue
    try Self.require(mkfs)
    directory = try TemporaryDirectory(prefix: "skipbackup-\(kind.rawValue)")
    let image = directory.path + "/image"
    mountPoint = directory.directory("mnt")
    try Self.succeed(run(["truncate", "-s", Argument(size), Argument(image)]))
    try Self.succeed(run([Argument(mkfs), "-q", Argument(image)]))
    try Self.succeed(
      run(
        [
          "mount", "-o", Argument((["loop"] + options).joined(separator: ",")), Argument(image),
          Argument(mountPoint),
        ]))
    mounts.append(mountPoint)
  }

  /// A filesystem with no device (tmpfs, ramfs), mounted by `type` at
  /// DIRECTORY/mnt with `options`.
  public init(mounting type: String, options: [String] = []) throws {
    directory = try TemporaryDirectory(prefix: "skipbackup-\(type)")
    mountPoint = directory.directory("mnt")
    try Self.succeed(
      run(
        ["mount", "-t", Argument(type)]
          + (options.isEmpty ? [] : ["-o", Argument(options.joined(separator: ","))])
          + [Argument(type), Argument(mountPoint)]))
    mounts.append(mountPoint)
  }

  /// A FUSE mount at DIRECTORY/mnt that bindfs passes through to
  /// DIRECTORY/source, with `options` (`--xattr-none`: no attributes).
  public init(bindfs options: [String] = []) throws {
    try Self.require("bindfs")
    directory = try TemporaryDirectory(prefix: "skipbackup-bindfs")
    let source = directory.directory("source")
    mountPoint = directory.directory("mnt")
    try Self.succeed(
      run(["bindfs"] + options.map { Argument($0) } + [Argument(source), Argument(mountPoint)]))
    mounts.append(mountPoint)
  }

  /// An overlayfs at DIRECTORY/mnt over DIRECTORY/lower, writing to
  /// DIRECTORY/upper: a container's root as the tree.
  public init(overlay: ()) throws {
    directory = try TemporaryDirectory(prefix: "skipbackup-overlay")
    let lower = directory.directory("lower")
    let upper = directory.directory("upper")
    let work = directory.directory("work")
    mountPoint = directory.directory("mnt")
    try Self.succeed(
      run(
        [
          "mount", "-t", "overlay", "overlay", "-o",
          Argument("lowerdir=\(lower),upperdir=\(upper),workdir=\(work)"), Argument(mountPoint),
        ]))
    mounts.append(mountPoint)
  }

  /// The read-only images a backup reads.
  public enum Image: String, Sendable {
    case squashfs, erofs
  }

  /// An image of `image`'s kind made of the tree `source`, its attributes
  /// kept, loop-mounted read-only at DIRECTORY/mnt.
  public init(_ image: Image, of source: String) throws {
    let command: [Argument]
    directory = try TemporaryDirectory(prefix: "skipbackup-\(image.rawValue)")
    let file = directory.path + "/image"
    switch image {
    case .squashfs:
      command = ["mksquashfs", Argument(source), Argument(file), "-xattrs", "-quiet", "-noappend"]
    case .erofs:
      command = ["mkfs.erofs", Argument(file), Argument(source)]
    }
    try Self.require(String(decoding: command[0].bytes, as: UTF8.self))
    mountPoint = directory.directory("mnt")
    try Self.succeed(run(command))
    try Self.succeed(run(["mount", "-o", "loop,ro", Argument(file), Argument(mountPoint)]))
    mounts.append(mountPoint)
  }

  deinit {
    for mount in mounts.reversed() { _ = run(["umount", "-l", Argument(mount)]) }
  }

  /// Fails, as the status 127 of a missing program, when `program` is not
  /// on the PATH.
  fileprivate static func require(_ program: String) throws(TestFilesystemFailure) {
    try succeed(run(["sh", "-c", Argument("command -v \(program) || exit 127")]))
  }

  @discardableResult
  fileprivate static func succeed(_ result: ProcessResult) throws(TestFilesystemFailure)
    -> ProcessResult
  {
    guard result.status == 0 else { throw TestFilesystemFailure(result: result) }
    return result
  }
}

/// A btrfs filesystem of a test's own, of 512 MiB, and its subvolumes.
public final class BtrfsImage: TestFilesystem {
  public init(options: [String] = []) throws {
    try super.init(.btrfs, size: "512M", options: options)
  }

  /// Creates the subvolume `name` at the top, owned by `owner` (user:group).
  @discardableResult
  public func subvolume(_ name: String, owner: String? = nil) throws -> String {
    let path = mountPoint + "/" + name
    try Self.succeed(run(["btrfs", "-q", "subvolume", "create", Argument(path)]))
    if let owner { try Self.succeed(run(["chown", Argument(owner), Argument(path)])) }
    return path
  }

  /// Mounts the same filesystem a second time, at `path`: its files as
  /// they are, under no view.
  public func bind(at path: String) throws {
    try Self.succeed(run(["mkdir", "-p", Argument(path)]))
    try Self.succeed(run(["mount", "--bind", Argument(mountPoint), Argument(path)]))
    mounts.append(path)
  }

  /// Mounts the subvolume `name` a second time, at `path`, as its mount's
  /// root (`subvol=`), as a home of its own is mounted.
  public func mount(subvolume name: String, at path: String) throws {
    let device = try Self.succeed(
      run(["findmnt", "-n", "--nofsroot", "-o", "SOURCE", Argument(mountPoint)])
    ).output.trimmingCharacters(in: .whitespacesAndNewlines)
    try Self.succeed(run(["mkdir", "-p", Argument(path)]))
    try Self.succeed(
      run(["mount", "-o", Argument("subvol=" + name), Argument(device), Argument(path)]))
    mounts.append(path)
  }

  /// `btrfs subvolume list`: every subvolume and snapshot, with its id and
  /// path (not its generation, which every transaction moves on).
  public func subvolumes() throws -> [String] {
    try Self.succeed(run(["btrfs", "subvolume", "list", Argument(mountPoint)])).lines.map { line in
      let words = line.split(separator: " ")
      guard words.count > 3, words[2] == "gen" else { return line }
      return (words[..<2] + words[4...]).joined(separator: " ")
    }
  }
}
