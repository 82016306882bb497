// Inputs generated from the bytes that break path code (non-UTF-8 bytes,
// newlines, quotes, backslashes, glob characters, whitespace, dots and
// slashes), with a fixed seed so that a failure repeats, and Python as the
// oracle nobody here wrote.

import Foundation
import Testing

/// SplitMix64: the same inputs on every run.
public struct ByteStringGenerator {
  public var state: UInt64

  public init(state: UInt64) { self.state = state }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// Pieces that path, rule and JSON code must treat right.
  private static let pieces: [[UInt8]] =
    [
      "a", "b", "name", ".", "..", "/", "//", "é", "日本", " ", "\t", "\n", "\r", "\"", "\\",
      "*", "?", "[", "]", "#", "!", "-", "$", "$HOME", "pf:", "re:", "\u{7F}", "\u{1}",
    ].map { Array($0.utf8) } + [[0xFF], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xE9]]

  /// A byte string of 0 to `length` pieces, or now and then random bytes.
  public mutating func bytes(length: Int = 8, slash: Bool = true) -> [UInt8] {
    var result: [UInt8] = []
    for _ in 0..<below(length + 1) {
      if below(8) == 0 {
        result.append(UInt8(1 + below(255)))
      } else {
        result += Self.pieces[below(Self.pieces.count)]
      }
    }
    return slash ? result : result.filter { $0 != UInt8(ascii: "/") }
  }

  /// A name a directory listing can hold: no slash, not empty, `.` or `..`.
  public mutating func name() -> [UInt8] {
    while true {
      let name = bytes(length: 4, slash: false)
      if !name.isEmpty && name != [0x2E] && name != [0x2E, 0x2E] { return name }
    }
  }

  /// A path below a walk's root: one to three names joined by `/`.
  public mutating func relativePath() -> [UInt8] {
    Array((0...below(3)).map { _ in name() }.joined(separator: [UInt8(ascii: "/")]))
  }
}

/// Runs a Python script on `records`, one Base64 line each, and returns
/// its output lines: the script reads `sys.stdin` the same way.
public func python(_ script: String, _ records: [[UInt8]]) -> [String] {
  let input = records.map { Data($0).base64EncodedString() }.joined(separator: "\n") + "\n"
  let result = run(
    [python3, Argument("-c"), Argument(script)], input: Array(input.utf8))
  #expect(result.status == 0, "\(result)")
  return result.lines
}

public func base64Decoded(_ line: Substring) -> [UInt8]? {
  Data(base64Encoded: String(line)).map(Array.init)
}
