import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The end-to-end tests of the skipbackup tool, the built binary run in
/// temporary trees: `swift test --filter CLITests`. Each topic is a suite
/// nested here, in its own file.
@Suite(.onTestThreads) struct CLITests {}

// Helpers for the end-to-end tests of the skipbackup tool: trees with
// symbolic links, FIFOs and odd names, what the peers (getfattr, setfattr,
// Python) see, and small byte utilities.

extension String {
  var bytes: [UInt8] { Array(utf8) }
}

/// Runs a Python script with `arguments` as its sys.argv[1:].
func python(_ script: String, _ arguments: [Argument], input: [UInt8] = []) -> ProcessResult {
  run([python3, "-c", Argument(script)] + arguments, input: input)
}

/// Runs a shell command line; `$SKIPBACKUP` is the tool.
func shell(_ command: String, directory: String? = nil) -> ProcessResult {
  run(
    ["env", Argument("SKIPBACKUP=\(skipbackupPath)"), "sh", "-c", Argument(command)],
    directory: directory)
}

extension TemporaryDirectory {
  /// Creates a symbolic link `name` whose target is `target`; returns its path.
  @discardableResult
  func symlink(_ name: String, to target: String) -> String {
    let full = path + "/" + name
    precondition(Glibc.symlink(target, full) == 0, "cannot create link \(full)")
    return full
  }

  /// Creates a FIFO `name`; returns its path.
  @discardableResult
  func fifo(_ name: String) -> String {
    let full = path + "/" + name
    precondition(mkfifo(full, 0o644) == 0, "cannot create FIFO \(full)")
    return full
  }

  /// Creates a Unix domain socket `name` (bound, then left); returns its path.
  @discardableResult
  func socket(_ name: String) -> String {
    let full = path + "/" + name
    let result = python(
      "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", [Argument(full)])
    precondition(result.status == 0, "cannot create socket \(full): \(result)")
    return full
  }

  /// A path inside the directory, as bytes: `path/` then `name`.
  func bytes(_ name: [UInt8]) -> [UInt8] {
    Array((path + "/").utf8) + name
  }
}

/// The lines of a JSON Lines output, each parsed as an object.
func jsonObjects(
  _ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation
) -> [[String: Any]] {
  result.standardOutput.split(separator: UInt8(ascii: "\n")).compactMap { line in
    let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
    #expect(
      object != nil, "not a JSON object: \(String(decoding: line, as: UTF8.self))",
      sourceLocation: sourceLocation)
    return object
  }
}

/// The exact path bytes of a status JSON object: `path_base64` when the
/// path is not UTF-8, `path` otherwise.
func pathBytes(of object: [String: Any]) -> [UInt8]? {
  if let encoded = object["path_base64"] as? String {
    return Data(base64Encoded: encoded).map(Array.init)
  }
  return (object["path"] as? String)?.bytes
}

/// The modification and change times of `path`, in nanoseconds, not
/// following a link.
func times(_ path: String) -> (modification: Int, change: Int) {
  var status = stat()
  lstat(path, &status)
  return (
    status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec,
    status.st_ctim.tv_sec * 1_000_000_000 + status.st_ctim.tv_nsec
  )
}

/// The reason text of a `skipbackup: PATH: reason` line on standard error,
/// for the line that names `path`.
func diagnostic(_ result: ProcessResult, naming path: String) -> String? {
  let prefix = "skipbackup: \(path): "
  return result.errors.split(separator: "\n").first { $0.hasPrefix(prefix) }.map {
    String($0.dropFirst(prefix.count))
  }
}
