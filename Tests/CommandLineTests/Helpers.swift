import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The end-to-end tests of the skipbackup tool, the built binary run in
/// temporary trees: `swift test --filter CLITests`. Each topic is a suite
/// nested here, in its own file.
@Suite struct CLITests {}

// Helpers for the end-to-end tests of the skipbackup tool: trees with
// symbolic links, FIFOs and odd names, what the peers (getfattr, setfattr,
// Python) see, and small byte utilities.

/// A mark as the peers write and read it, under its Linux name.
enum PeerMark: String, CaseIterable {
  case legacy, resource, xdg

  var attribute: String {
    switch self {
    case .legacy: Names.legacy
    case .resource: Names.resource
    case .xdg: Names.xdg
    }
  }

  /// The exact bytes the tool writes (formats.md).
  var valueHex: String {
    switch self {
    case .legacy: "01"
    case .resource: Names.resourceValueHex
    case .xdg: hex(Array("false".utf8))
    }
  }

  var value: [UInt8] { bytes(fromHex: valueHex) }
}

func bytes(fromHex text: String) -> [UInt8] {
  let digits = Array(text.utf8)
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
  }
}

extension String {
  var bytes: [UInt8] { Array(utf8) }
}

/// The marks on `path` (not following a link) as getfattr and Python's
/// os.getxattr both read them. Every attribute that is there must hold
/// exactly the bytes the tool writes; each peer is checked on its own.
func peerMarks(
  _ path: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) -> Set<PeerMark> {
  var found: Set<PeerMark> = []
  for mark in PeerMark.allCases {
    let fromGetfattr = getfattr(path, mark.attribute)
    let fromPython = pythonGetxattr(path, mark.attribute)
    #expect(
      fromGetfattr == fromPython,
      "getfattr and Python disagree on \(mark) of \(display(path))",
      sourceLocation: sourceLocation)
    if let fromGetfattr {
      #expect(
        fromGetfattr == mark.value,
        "\(mark) of \(display(path)) is \(hex(fromGetfattr)), not \(mark.valueHex)",
        sourceLocation: sourceLocation)
      found.insert(mark)
    }
  }
  return found
}

func peerMarks(
  _ path: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Set<PeerMark> {
  peerMarks(path.bytes, sourceLocation: sourceLocation)
}

/// Sets `mark` on `path` with setfattr, with the tool's exact bytes.
func setfattr(_ path: [UInt8], _ mark: PeerMark) {
  setfattr(path, mark.attribute, hex: mark.valueHex)
}

func setfattr(_ path: String, _ mark: PeerMark) {
  setfattr(path.bytes, mark)
}

/// A path for messages: UTF-8 as it is, other bytes as `\xff`.
func display(_ path: [UInt8]) -> String {
  String(decoding: path, as: UTF8.self).debugDescription
}

/// Runs a Python script with `arguments` as its sys.argv[1:].
func python(_ script: String, _ arguments: [Argument], input: [UInt8] = []) -> ProcessResult {
  run([Argument("python3"), "-c", Argument(script)] + arguments, input: input)
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

/// The items of `paths` that no other item contains: a directory is kept,
/// whatever is below it is dropped.
func topmost(_ paths: some Collection<[UInt8]>) -> Set<[UInt8]> {
  let all = Set(paths)
  return all.filter { path in
    !all.contains { other in other != path && path.starts(with: other + [UInt8(ascii: "/")]) }
  }
}

/// The paths below `root` (and `root` itself) that `getfattr -R` finds
/// marked: the legacy attribute with a first byte that is not zero, the
/// resource attribute whatever its value, or xdg exactly `false`
/// (formats.md's reading rules). Symbolic links are not followed (`-P`).
func getfattrMarkedPaths(_ root: String) -> [[UInt8]] {
  let result = run([
    "getfattr", "-R", "-P", "-h", "--absolute-names", "-d", "-m", "^user\\.", "-e", "hex",
    Argument(root),
  ])
  precondition(result.status == 0, "getfattr -R failed: \(result)")
  var marked: [[UInt8]] = []
  var current: [UInt8]?
  var isMarked = false
  func finish() {
    if let current, isMarked { marked.append(current) }
    current = nil
    isMarked = false
  }
  for line in result.standardOutput.split(separator: UInt8(ascii: "\n")) {
    let line = Array(line)
    let filePrefix = "# file: ".bytes
    if line.starts(with: filePrefix) {
      finish()
      current = unescapeGetfattr(Array(line.dropFirst(filePrefix.count)))
      continue
    }
    guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
    let name = String(decoding: line[..<equals], as: UTF8.self)
    var valueHex = String(decoding: line[(equals + 1)...], as: UTF8.self)
    if valueHex.hasPrefix("0x") { valueHex.removeFirst(2) }
    let value = bytes(fromHex: valueHex)
    switch name {
    case Names.legacy where value.first.map({ $0 != 0 }) ?? false: isMarked = true
    case Names.resource: isMarked = true
    case Names.xdg where value == "false".bytes: isMarked = true
    default: break
    }
  }
  finish()
  return marked
}

/// getfattr writes control characters and backslashes in a file name as
/// `\ooo` (octal); other bytes are written as they are.
private func unescapeGetfattr(_ escaped: [UInt8]) -> [UInt8] {
  var result: [UInt8] = []
  var index = 0
  while index < escaped.count {
    if escaped[index] == UInt8(ascii: "\\"), index + 3 < escaped.count,
      let value = UInt8(
        String(decoding: escaped[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
    {
      result.append(value)
      index += 4
    } else {
      result.append(escaped[index])
      index += 1
    }
  }
  return result
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

/// Waits long enough that a change made now gets a later ctime than one
/// made before, whatever the clock granularity of the filesystem.
func letTheClockTick() {
  usleep(30_000)
}

/// The reason text of a `skipbackup: PATH: reason` line on standard error,
/// for the line that names `path`.
func diagnostic(_ result: ProcessResult, naming path: String) -> String? {
  let prefix = "skipbackup: \(path): "
  return result.errors.split(separator: "\n").first { $0.hasPrefix(prefix) }.map {
    String($0.dropFirst(prefix.count))
  }
}
