import SkipBackupCore

/// The tree an export walks: the one the backup tool will read.
package struct ExportRoot {
  /// The path the walk starts from, as the tool names it.
  package var path: [UInt8]
  /// Whether the tool follows ROOT when it is a symbolic link (a trailing
  /// slash or a `chdir` does; a plain path argument does not).
  package var followsSymbolicLink: Bool

  package init(path: [UInt8], followsSymbolicLink: Bool) {
    self.path = path
    self.followsSymbolicLink = followsSymbolicLink
  }
}

/// Why a tool's exclusion file cannot name an item: a backup with the file
/// would include it.
package struct Inexpressible: Error {
  package var reason: String

  /// `rule` when it takes at most `longest` bytes, else the failure
  /// `reason(count)` gives for a rule of `count` bytes.
  package static func limit(
    _ rule: [UInt8], to longest: Int, _ reason: (Int) -> String
  ) -> Result<[UInt8], Inexpressible> {
    rule.count <= longest ? .success(rule) : .failure(Inexpressible(reason: reason(rule.count)))
  }
}

/// A failure that stops the export before anything is written.
package struct ExportFailure: Error {
  package var message: String
}

/// UTF-8 as Python's `surrogateescape` and Go's `utf8.DecodeRune` read it: a
/// well-formed sequence is one scalar; any other byte stands alone.
package enum UTF8Scanner {
  /// The scalar at `index` and its length, or `nil` when the byte at `index`
  /// starts no well-formed sequence (overlong forms, surrogates and values
  /// past U+10FFFF are not well-formed).
  package static func scalar(in bytes: [UInt8], at index: Int) -> (value: UInt32, length: Int)? {
    UTF8Scalar.decode(bytes, at: index).map { ($0.scalar.value, $0.length) }
  }

  /// Whether all of `bytes` is well-formed UTF-8.
  package static func isValid(_ bytes: [UInt8]) -> Bool {
    var index = 0
    while index < bytes.count {
      guard let (_, length) = scalar(in: bytes, at: index) else { return false }
      index += length
    }
    return true
  }

  /// Where the run of trailing scalars for which `isMember` holds starts.
  package static func startOfTrailingRun(in bytes: [UInt8], where isMember: (UInt32) -> Bool) -> Int
  {
    var scalars: [(start: Int, value: UInt32?)] = []
    var index = 0
    while index < bytes.count {
      if let (value, length) = scalar(in: bytes, at: index) {
        scalars.append((index, value))
        index += length
      } else {
        scalars.append((index, nil))
        index += 1
      }
    }
    var start = bytes.count
    for scalar in scalars.reversed() {
      guard let value = scalar.value, isMember(value) else { break }
      start = scalar.start
    }
    return start
  }
}

/// `value` as `width` lowercase hexadecimal digits.
package func hexDigits(_ value: UInt32, width: Int) -> [UInt8] {
  let digits = Array("0123456789abcdef".utf8)
  return (0..<width).reversed().map { digits[Int((value >> (4 * UInt32($0))) & 0xF)] }
}
