/// How one backup tool reads an exclusion file: which path it walks for a
/// ROOT argument, how it names the items below, and how a rule is written so
/// that it matches one item (and what is under it) and nothing else.
protocol ExclusionSyntax {
  /// What ends each rule in the file.
  var terminator: UInt8 { get }

  /// The tree the tool reads when it is given `root` (the ROOT argument's
  /// bytes) in the documented command line.
  func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot

  /// The rule that excludes the item at `relative` below `root`: its path
  /// from the walk's root, components joined by `/`, never empty.
  func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible>
}

/// The tree an export walks: the one the backup tool will read.
struct ExportRoot {
  /// The path the walk starts from, as the tool names it.
  var path: [UInt8]
  /// Whether the tool follows ROOT when it is a symbolic link (a trailing
  /// slash or a `chdir` does; a plain path argument does not).
  var followsSymbolicLink: Bool
}

/// Why a tool's exclusion file cannot name an item: a backup with the file
/// would include it.
struct Inexpressible: Error {
  var reason: String
}

/// A failure that stops the export before anything is written.
struct ExportFailure: Error {
  var message: String
}

/// UTF-8 as Python's `surrogateescape` and Go's `utf8.DecodeRune` read it: a
/// well-formed sequence is one scalar; any other byte stands alone.
enum UTF8Scanner {
  /// The scalar at `index` and its length, or `nil` when the byte at `index`
  /// starts no well-formed sequence (overlong forms, surrogates and values
  /// past U+10FFFF are not well-formed).
  static func scalar(in bytes: [UInt8], at index: Int) -> (value: UInt32, length: Int)? {
    let lead = bytes[index]
    let length: Int
    var value: UInt32
    switch lead {
    case 0x00...0x7F: return (UInt32(lead), 1)
    case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
    case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
    case 0xF0...0xF4: (length, value) = (4, UInt32(lead & 0x07))
    default: return nil
    }
    guard index + length <= bytes.count else { return nil }
    for byte in bytes[(index + 1)..<(index + length)] {
      guard byte & 0xC0 == 0x80 else { return nil }
      value = value << 6 | UInt32(byte & 0x3F)
    }
    let smallest: UInt32 = length == 3 ? 0x800 : length == 4 ? 0x1_0000 : 0x80
    guard value >= smallest, value <= 0x10_FFFF, !(0xD800...0xDFFF).contains(value) else {
      return nil
    }
    return (value, length)
  }

  /// Whether all of `bytes` is well-formed UTF-8.
  static func isValid(_ bytes: [UInt8]) -> Bool {
    var index = 0
    while index < bytes.count {
      guard let (_, length) = scalar(in: bytes, at: index) else { return false }
      index += length
    }
    return true
  }

  /// Where the run of trailing scalars for which `isMember` holds starts.
  static func startOfTrailingRun(in bytes: [UInt8], where isMember: (UInt32) -> Bool) -> Int {
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
func hexDigits(_ value: UInt32, width: Int) -> [UInt8] {
  let digits = Array("0123456789abcdef".utf8)
  return (0..<width).reversed().map { digits[Int((value >> (4 * UInt32($0))) & 0xF)] }
}
