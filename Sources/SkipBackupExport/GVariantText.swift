/// GVariant's text form of an array of strings (`as`), the form `gsettings
/// get` prints and `gsettings set` parses: `['a', 'b']`, or `@as []`.
///
/// From GLib 2.74's gvariant-parser.c and gvariant.c (`g_variant_print`): a
/// string is quoted with `'`, or with `"` when it holds a `'` and no `"`;
/// inside, `\` and the quote are escaped, `\a \b \f \n \r \t \v` stand for
/// those controls, and `\uXXXX` and `\UXXXXXXXX` for any code point. Every
/// string is UTF-8: GSettings cannot carry other bytes.
package enum GVariantText {
  /// `strings` as `gsettings set` takes them: single quotes, every control
  /// character and DEL as `\uXXXX`, so that the text is one line.
  package static func stringArray(_ strings: [[UInt8]]) -> [UInt8] {
    guard !strings.isEmpty else { return Array("@as []".utf8) }
    var text = [UInt8(ascii: "[")]
    for (index, string) in strings.enumerated() {
      if index > 0 { text += Array(", ".utf8) }
      text.append(UInt8(ascii: "'"))
      for byte in string {
        switch byte {
        case UInt8(ascii: "\\"), UInt8(ascii: "'"): text += [UInt8(ascii: "\\"), byte]
        case 0..<0x20, 0x7F: text += Array("\\u".utf8) + hexDigits(UInt32(byte), width: 4)
        default: text.append(byte)
        }
      }
      text.append(UInt8(ascii: "'"))
    }
    text.append(UInt8(ascii: "]"))
    return text
  }

  /// The strings of `text`, an `as` as `gsettings get` prints it; `nil` when
  /// `text` is not one.
  package static func parseStringArray(_ text: [UInt8]) -> [[UInt8]]? {
    var index = 0
    func skipSpace() {
      while index < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[index]) { index += 1 }
    }
    skipSpace()
    let annotation = Array("@as".utf8)
    if text.count >= index + annotation.count,
      Array(text[index..<(index + annotation.count)]) == annotation
    {
      index += annotation.count
      skipSpace()
    }
    guard index < text.count, text[index] == UInt8(ascii: "[") else { return nil }
    index += 1
    var strings: [[UInt8]] = []
    skipSpace()
    if index < text.count, text[index] == UInt8(ascii: "]") {
      index += 1
      skipSpace()
      return index == text.count ? strings : nil
    }
    while true {
      skipSpace()
      guard index < text.count,
        text[index] == UInt8(ascii: "'") || text[index] == UInt8(ascii: "\"")
      else { return nil }
      let quote = text[index]
      index += 1
      var string: [UInt8] = []
      while true {
        guard index < text.count else { return nil }
        let byte = text[index]
        index += 1
        if byte == quote { break }
        guard byte == UInt8(ascii: "\\") else {
          string.append(byte)
          continue
        }
        guard index < text.count else { return nil }
        let escaped = text[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "a"): string.append(0x07)
        case UInt8(ascii: "b"): string.append(0x08)
        case UInt8(ascii: "f"): string.append(0x0C)
        case UInt8(ascii: "n"): string.append(0x0A)
        case UInt8(ascii: "r"): string.append(0x0D)
        case UInt8(ascii: "t"): string.append(0x09)
        case UInt8(ascii: "v"): string.append(0x0B)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
          let width = escaped == UInt8(ascii: "u") ? 4 : 8
          guard index + width <= text.count,
            let value = UInt32(
              String(decoding: text[index..<(index + width)], as: UTF8.self), radix: 16),
            let scalar = Unicode.Scalar(value)
          else { return nil }
          index += width
          string += Array(String(Character(scalar)).utf8)
        default: string.append(escaped)
        }
      }
      strings.append(string)
      skipSpace()
      guard index < text.count else { return nil }
      if text[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard text[index] == UInt8(ascii: "]") else { return nil }
      index += 1
      skipSpace()
      return index == text.count ? strings : nil
    }
  }
}
