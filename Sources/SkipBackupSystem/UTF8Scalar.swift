/// Well-formed UTF-8, one scalar at a time, for code that must treat bytes
/// that are not UTF-8 one by one (messages escape them; export writers spell
/// them out).
package enum UTF8Scalar {
  /// The scalar at `index` and its length in bytes, or `nil` when the byte at
  /// `index` starts no well-formed sequence: overlong forms, surrogates and
  /// values past U+10FFFF are not UTF-8.
  package static func decode(_ bytes: [UInt8], at index: Int) -> (
    scalar: Unicode.Scalar, length: Int
  )? {
    let lead = bytes[index]
    let length: Int
    var value: UInt32
    switch lead {
    case 0x00...0x7F: return (Unicode.Scalar(lead), 1)
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
    guard value >= smallest, let scalar = Unicode.Scalar(value) else { return nil }
    return (scalar, length)
  }
}
