import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// The marks as the peers (getfattr, setfattr, Python's os.getxattr) write
// and read them, for the tests of the tool and of its engines alike.

/// A mark as the peers write and read it, under its Linux name.
public enum PeerMark: String, CaseIterable, Sendable {
  case legacy, resource, xdg

  public var attribute: String {
    switch self {
    case .legacy: Names.legacy
    case .resource: Names.resource
    case .xdg: Names.xdg
    }
  }

  /// The exact bytes the tool writes (formats.md).
  public var valueHex: String {
    switch self {
    case .legacy: "01"
    case .resource: Names.resourceValueHex
    case .xdg: hex(Array("false".utf8))
    }
  }

  public var value: [UInt8] { bytes(fromHex: valueHex) }
}

public func bytes(fromHex text: String) -> [UInt8] {
  let digits = Array(text.utf8)
  return stride(from: 0, to: digits.count, by: 2).map {
    UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
  }
}

/// The marks on `path` (not following a link) as getfattr and Python's
/// os.getxattr both read them. Every attribute that is there must hold
/// exactly the bytes the tool writes; each peer is checked on its own.
public func peerMarks(
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

public func peerMarks(
  _ path: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Set<PeerMark> {
  peerMarks(Array(path.utf8), sourceLocation: sourceLocation)
}

/// Sets `mark` on `path` with setfattr, with the tool's exact bytes.
public func setfattr(_ path: [UInt8], _ mark: PeerMark) {
  setfattr(path, mark.attribute, hex: mark.valueHex)
}

public func setfattr(_ path: String, _ mark: PeerMark) {
  setfattr(Array(path.utf8), mark)
}

/// A path for messages: UTF-8 as it is, other bytes as `\xff`.
public func display(_ path: [UInt8]) -> String {
  String(decoding: path, as: UTF8.self).debugDescription
}

/// Waits long enough that a change made now gets a later ctime than one
/// made before, whatever the clock granularity of the filesystem.
public func letTheClockTick() {
  usleep(30_000)
}

/// ``peerMarks(_:sourceLocation:)`` of many paths at once, with one getfattr
/// and one Python process rather than six a path: the same checks, for
/// trees of hundreds of items.
public func peerMarks(
  of paths: [[UInt8]], sourceLocation: SourceLocation = #_sourceLocation
) -> [Set<PeerMark>] {
  let fromGetfattr = getfattrDumps(paths)
  let script = """
    import os, sys, base64
    names = sys.argv[1:]
    for line in sys.stdin:
        path = base64.b64decode(line)
        values = []
        for name in names:
            try:
                values.append(os.getxattr(path, name, follow_symlinks=False).hex())
            except OSError:
                values.append("-")
        print(" ".join(values))
    """
  let input = paths.map { Data($0).base64EncodedString() }.joined(separator: "\n") + "\n"
  let python = run(
    [python3, "-c", Argument(script)] + PeerMark.allCases.map { Argument($0.attribute) },
    input: Array(input.utf8))
  #expect(python.status == 0, "\(python)", sourceLocation: sourceLocation)
  return zip(paths, python.lines).map { path, line in
    var found: Set<PeerMark> = []
    let values = line.split(separator: " ").map(String.init)
    for (mark, value) in zip(PeerMark.allCases, values) {
      let fromPython = value == "-" ? nil : "0x" + value
      #expect(
        fromGetfattr[path]?[mark.attribute] == fromPython,
        "getfattr and Python disagree on \(mark) of \(display(path))",
        sourceLocation: sourceLocation)
      guard let fromPython else { continue }
      #expect(
        fromPython == "0x" + mark.valueHex,
        "\(mark) of \(display(path)) is \(fromPython), not \(mark.valueHex)",
        sourceLocation: sourceLocation)
      found.insert(mark)
    }
    return found
  }
}

/// Every `user.` attribute of each path, as one `getfattr -d` reads them:
/// by path, the hex value (`0x...`) by name.
private func getfattrDumps(_ paths: [[UInt8]]) -> [[UInt8]: [String: String]] {
  let result = run(
    ["getfattr", "-h", "--absolute-names", "-e", "hex", "-d", "-m", "^user\\.", "--"]
      + paths.map { Argument(bytes: $0) })
  var dumps: [[UInt8]: [String: String]] = [:]
  var current: [UInt8]?
  for line in result.standardOutput.split(separator: 10) {
    let header = Array("# file: ".utf8)
    if line.starts(with: header) {
      current = unescapeGetfattr(Array(line.dropFirst(header.count)))
    } else if let current, let equals = line.firstIndex(of: UInt8(ascii: "=")) {
      let name = String(decoding: line[..<equals], as: UTF8.self)
      dumps[current, default: [:]][name] = String(decoding: line[(equals + 1)...], as: UTF8.self)
    }
  }
  return dumps
}

/// The items of `paths` that no other item contains: a directory is kept,
/// whatever is below it is dropped.
public func topmost(_ paths: some Collection<[UInt8]>) -> Set<[UInt8]> {
  let all = Set(paths)
  return all.filter { path in
    !all.contains { other in other != path && path.starts(with: other + [UInt8(ascii: "/")]) }
  }
}

/// The paths below `root` (and `root` itself) that `getfattr -R` finds
/// marked: the legacy attribute with a first byte that is not zero, the
/// resource attribute whatever its value, or xdg exactly `false`
/// (formats.md's reading rules). Symbolic links are not followed (`-P`).
public func getfattrMarkedPaths(_ root: String) -> [[UInt8]] {
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
    let filePrefix = Array("# file: ".utf8)
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
    case Names.xdg where value == Array("false".utf8): isMarked = true
    default: break
    }
  }
  finish()
  return marked
}

/// getfattr writes control characters and backslashes in a file name as
/// `\ooo` (octal); other bytes are written as they are.
public func unescapeGetfattr(_ escaped: [UInt8]) -> [UInt8] {
  unescape(escaped, after: Array("\\".utf8), digits: 3, radix: 8)
}

/// `escaped` with each `PREFIX` followed by `digits` digits of `radix`
/// (getfattr's `\ooo`, findmnt's `\xHH`) turned back into that byte; other
/// bytes as they are.
public func unescape(_ escaped: [UInt8], after prefix: [UInt8], digits: Int, radix: Int)
  -> [UInt8]
{
  var result: [UInt8] = []
  var index = 0
  while index < escaped.count {
    let end = index + prefix.count + digits
    if end <= escaped.count, Array(escaped[index..<(index + prefix.count)]) == prefix,
      let value = UInt8(
        String(decoding: escaped[(index + prefix.count)..<end], as: UTF8.self), radix: radix)
    {
      result.append(value)
      index = end
    } else {
      result.append(escaped[index])
      index += 1
    }
  }
  return result
}
