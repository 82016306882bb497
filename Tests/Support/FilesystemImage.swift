import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// btrfs-progs, which `scripts/deps test` installs, is not there, or one of
/// its programs failed.
public struct BtrfsImageFailure: Error, CustomStringConvertible {
  public var result: ProcessResult
  public var description: String {
    result.status == 127 || result.errors.contains("not found")
      ? "btrfs-progs is missing: scripts/deps test installs it\n\(result)" : "\(result)"
  }
}

/// A btrfs filesystem of a test's own: a sparse 512 MiB image, made with
/// mkfs.btrfs and loop-mounted at DIRECTORY/mnt with `options`; unmounted
/// (lazily, so that a process a failed test left cannot keep it) when the
/// test is done, which frees the loop device.
public final class BtrfsImage {
  public let directory: TemporaryDirectory
  /// Where the filesystem is mounted.
  public let mountPoint: String
  private var mounts: [String] = []

  public init(options: [String] = []) throws {
    try Self.succeed(run(["sh", "-c", "command -v mkfs.btrfs"]))
    directory = try TemporaryDirectory(prefix: "skipbackup-btrfs")
    let image = directory.path + "/image"
    mountPoint = directory.directory("mnt")
    try Self.succeed(run(["truncate", "-s", "512M", Argument(image)]))
    try Self.succeed(run(["mkfs.btrfs", "-q", Argument(image)]))
    try Self.succeed(
      run(
        [
          "mount", "-o", Argument((["loop"] + options).joined(separator: ",")), Argument(image),
          Argument(mountPoint),
        ]))
    mounts.append(mountPoint)
  }

  deinit {
    for mount in mounts.reversed() { _ = run(["umount", "-l", Argument(mount)]) }
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

  /// `btrfs subvolume list`: every subvolume and snapshot, with its id and
  /// path (not its generation, which every transaction moves on).
  public func subvolumes() throws -> [String] {
    try Self.succeed(run(["btrfs", "subvolume", "list", Argument(mountPoint)])).lines.map { line in
      let words = line.split(separator: " ")
      guard words.count > 3, words[2] == "gen" else { return line }
      return (words[..<2] + words[4...]).joined(separator: " ")
    }
  }

  @discardableResult
  private static func succeed(_ result: ProcessResult) throws(BtrfsImageFailure) -> ProcessResult {
    guard result.status == 0 else { throw BtrfsImageFailure(result: result) }
    return result
  }
}
