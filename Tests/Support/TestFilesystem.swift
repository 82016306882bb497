import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The program that makes or mounts a test's filesystem is not there (for
/// btrfs: btrfs-progs, which `scripts/deps test` installs), or it failed.
public struct TestFilesystemFailure: Error, CustomStringConvertible {
  public var result: ProcessResult
  public var description: String {
    result.status == 127 || result.errors.contains("not found")
      ? "a program is missing (scripts/deps test installs btrfs-progs)\n\(result)" : "\(result)"
  }
}

/// A filesystem of a test's own, of `kind`, in a sparse image of `size`
/// made by mkfs and loop-mounted at DIRECTORY/mnt with `options`;
/// unmounted (lazily, so that a process a failed test left cannot keep it)
/// when the test is done, which frees the loop device.
public class TestFilesystem {
  public enum Kind: String {
    case btrfs, ext4
  }

  public let directory: TemporaryDirectory
  /// Where the filesystem is mounted.
  public let mountPoint: String
  fileprivate var mounts: [String] = []

  public init(_ kind: Kind, size: String, options: [String] = []) throws {
    let mkfs = "mkfs." + kind.rawValue
    try Self.succeed(run(["sh", "-c", Argument("command -v \(mkfs)")]))
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

  deinit {
    for mount in mounts.reversed() { _ = run(["umount", "-l", Argument(mount)]) }
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
