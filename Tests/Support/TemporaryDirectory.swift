import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A directory for one test, under ``scratch`` or `base`, removed when the
/// test is done. Readable by everyone, so that tests can also run the tool
/// as nobody.
public final class TemporaryDirectory: @unchecked Sendable {
  public let path: String

  public init(prefix: String = "skipbackup-test", in base: String = scratch) throws {
    var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
    guard mkdtemp(&template) != nil else { throw POSIXError(.init(rawValue: errno)!) }
    path = String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    chmod(path, 0o755)
  }

  deinit { remove() }

  /// Removes the directory and everything in it, if it is still there.
  fileprivate func remove() {
    var status = stat()
    guard lstat(path, &status) == 0 else { return }
    if (try? FileManager.default.removeItem(atPath: path)) == nil {
      // A test left an immutable or append-only file (chattr +i, +a): clear and retry.
      _ = run(["chattr", "-R", "-i", "-a", Argument(path)])
      try? FileManager.default.removeItem(atPath: path)
    }
  }

  /// Creates the regular file `name` (directories on the way too) with
  /// `contents`; returns its path.
  @discardableResult
  public func file(_ name: String, _ contents: String = "x") -> String {
    let full = path + "/" + name
    try! FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let created = FileManager.default.createFile(atPath: full, contents: Data(contents.utf8))
    precondition(created, "cannot create \(full)")
    return full
  }

  /// Creates the directory `name` and its parents; returns its path.
  @discardableResult
  public func directory(_ name: String) -> String {
    let full = path + "/" + name
    try! FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
    return full
  }

  /// Creates a file whose name is `parent/` followed by `name`'s exact bytes;
  /// returns the whole path's bytes.
  @discardableResult
  public func file(named name: [UInt8], in parent: String = "") -> [UInt8] {
    let directory = parent.isEmpty ? path : self.directory(parent)
    let full = Array((directory + "/").utf8) + name
    let descriptor = open(
      full.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(descriptor >= 0, "cannot create \(full)")
    precondition(write(descriptor, "x", 1) == 1, "cannot write \(full)")
    close(descriptor)
    return full
  }
}

/// Where the tests make their directories: /dev/shm, a tmpfs, when it keeps
/// user attributes (Linux 6.6 and later), else /tmp.
///
/// A test that needs what only another filesystem does makes one of its own
/// (``TestFilesystem``). On this machine /tmp is on an ext4 without a
/// journal, whose inode allocator reads the inode table past every inode
/// freed in the last minutes (`recently_deleted` in fs/ext4/ialloc.c): with
/// the suite's trees made and removed there, `__ext4_new_inode` held 28 %
/// of all the CPU samples of a run (`perf record -a`), and on tmpfs the
/// suite took 107 s against 128 s.
public let scratch: String = {
  var template = Array("/dev/shm/skipbackup-probe.XXXXXX".utf8CString)
  let descriptor = mkstemp(&template)
  guard descriptor >= 0 else { return "/tmp" }
  close(descriptor)
  let probe = String(
    decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  defer { unlink(probe) }
  let kept = run(["setfattr", "-n", "user.skipbackup.probe", "-v", "1", Argument(probe)])
  return kept.status == 0 ? "/dev/shm" : "/tmp"
}()

/// Keeps `directory` until the test process ends, and removes it then: for
/// what tests share (a template tree or repository), held by a global,
/// whose deinit never runs.
public func keepUntilExit(_ directory: TemporaryDirectory) {
  kept.withLock { $0.append(directory) }
}

/// Removed by name at exit, not by letting go: a template's owner (a
/// static) holds it too, and its deinit never ran, which left one tree a
/// run behind.
private let kept: Kept = {
  atexit { kept.withLock { directories in for directory in directories { directory.remove() } } }
  return Kept()
}()

private final class Kept: @unchecked Sendable {
  private let lock = NSLock()
  private var directories: [TemporaryDirectory] = []

  func withLock(_ body: (inout [TemporaryDirectory]) -> Void) {
    lock.lock()
    defer { lock.unlock() }
    body(&directories)
  }
}
