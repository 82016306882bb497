/// GVariant's text form of an array of strings (`as`), the form `gsettings
/// get` prints and `gsettings set` parses: `['a', 'b']`, or `@as []`.
///
/// From GLib 2.74's gvariant-parser.c and gvariant.c (`g_variant_print`): a
/// string is quoted with `'`, or with `"` when it holds a `'`;
/// inside, `\` and the quote are escaped, `\a \b \f \n \r \t \v` stand for
/// those controls, and `\uXXXX` and `\UXXXXXXXX` for any code point. Every
/// string is UTF-8: GSettings cannot carry other bytes.
package enum GVariantText {
  /// `strings` as `gsettings get` prints them, which `gsettings set` takes
  /// back: GLib's `g_variant_print`, character for character (a string with
  /// a `'` in double quotes; what `g_unichar_isprint` calls unprintable,
  /// controls, format characters, private use and unassigned code points,
  /// escaped), so that the text is one line.
  package static func stringArray(_ strings: [[UInt8]]) -> [UInt8] {
    guard !strings.isEmpty else { return Array("@as []".utf8) }
    var text = [UInt8(ascii: "[")]
    for (index, string) in strings.enumerated() {
      if index > 0 { text += Array(", ".utf8) }
      let quote = string.contains(UInt8(ascii: "'")) ? UInt8(ascii: "\"") : UInt8(ascii: "'")
      text.append(quote)
      for scalar in String(decoding: string, as: UTF8.self).unicodeScalars {
        if scalar.value == UInt32(quote) || scalar == "\\" { text.append(UInt8(ascii: "\\")) }
        if isPrintable(scalar) {
          text += Array(String(scalar).utf8)
          continue
        }
        text.append(UInt8(ascii: "\\"))
        switch scalar.value {
        case 0x07: text.append(UInt8(ascii: "a"))
        case 0x08: text.append(UInt8(ascii: "b"))
        case 0x0C: text.append(UInt8(ascii: "f"))
        case 0x0A: text.append(UInt8(ascii: "n"))
        case 0x0D: text.append(UInt8(ascii: "r"))
        case 0x09: text.append(UInt8(ascii: "t"))
        case 0x0B: text.append(UInt8(ascii: "v"))
        case 0..<0x10000: text += [UInt8(ascii: "u")] + hexDigits(scalar.value, width: 4)
        default: text += [UInt8(ascii: "U")] + hexDigits(scalar.value, width: 8)
        }
      }
      text.append(quote)
    }
    text.append(UInt8(ascii: "]"))
    return text
  }

  /// GLib's `g_unichar_isprint`: every general category but control,
  /// format, unassigned, private use and surrogate.
  static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .unassigned, .privateUse, .surrogate: false
    default: true
    }
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
