import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A directory under /tmp for one test, removed when the test is done.
/// Readable by everyone, so that tests can also run the tool as nobody.
public final class TemporaryDirectory: @unchecked Sendable {
  public let path: String

  public init(prefix: String = "skipbackup-test") throws {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    guard mkdtemp(&template) != nil else { throw POSIXError(.init(rawValue: errno)!) }
    path = String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    chmod(path, 0o755)
  }

  deinit {
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

/// Keeps `directory` until the test process ends, and removes it then: for
/// what tests share (a template tree or repository), held by a global,
/// whose deinit never runs.
public func keepUntilExit(_ directory: TemporaryDirectory) {
  kept.withLock { $0.append(directory) }
}

private let kept: Kept = {
  atexit { kept.withLock { $0.removeAll() } }
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
