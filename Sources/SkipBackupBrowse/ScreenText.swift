import CNcurses
import SkipBackupCore

/// Text the browser puts on the screen: bytes safe for the terminal and the
/// columns they take.
///
/// A name is escaped as `ls -b` escapes it (GNU ls's `escape` quoting
/// style): `\n`, `\t` and the other C escapes, any other control byte, DEL,
/// a C1 control (U+0080 to U+009F, which some terminals read as ESC [) and
/// every byte that is not UTF-8 as three octal digits, and the backslash
/// doubled. Where the locale is not UTF-8, every byte past ASCII is
/// escaped too, as ls does in the C locale. So no byte of a name reaches
/// the terminal as a control: a name holding ESC [ 2 J shows as `\033[2J`.
package struct ScreenText {
  package var bytes: [UInt8] = []
  package var columns = 0

  package init() {}

  package init(_ text: String) {
    append(text)
  }

  /// Plain ASCII text of the browser's own.
  package mutating func append(_ text: String) {
    for scalar in text.unicodeScalars {
      appendScalar(scalar, Array(String(scalar).utf8))
    }
  }

  /// A name or path from the filesystem, escaped.
  ///
  /// `escaped`: the text is a message whose names are escaped already
  /// (`String(escapingForDisplay:)`), so its backslashes are its own and stay
  /// single; what is still escaped here is only what the terminal cannot show.
  package mutating func append(name: some Collection<UInt8>, utf8: Bool, escaped: Bool = false) {
    let bytes = Array(name)
    var index = 0
    while index < bytes.count {
      if utf8, bytes[index] >= 0x80, let (scalar, length) = UTF8Scalar.decode(bytes, at: index),
        !(0x80...0x9F).contains(scalar.value), cncurses_scalar_width(scalar.value) >= 0
      {
        appendScalar(scalar, Array(bytes[index..<index + length]))
        index += length
        continue
      }
      let byte = bytes[index]
      index += 1
      switch byte {
      case 0x07: appendEscape("\\a")
      case 0x08: appendEscape("\\b")
      case 0x09: appendEscape("\\t")
      case 0x0A: appendEscape("\\n")
      case 0x0B: appendEscape("\\v")
      case 0x0C: appendEscape("\\f")
      case 0x0D: appendEscape("\\r")
      case 0x5C: appendEscape(escaped ? "\\" : "\\\\")
      case 0x20..<0x7F:
        self.bytes.append(byte)
        columns += 1
      default:
        appendEscape(
          "\\" + String(byte >> 6) + String((byte >> 3) & 7) + String(byte & 7))
      }
    }
  }

  private mutating func appendEscape(_ escape: String) {
    bytes += escape.utf8
    columns += escape.utf8.count
  }

  private mutating func appendScalar(_ scalar: Unicode.Scalar, _ encoded: [UInt8]) {
    let width = scalar.isASCII ? 1 : Int(cncurses_scalar_width(scalar.value))
    bytes += encoded
    columns += max(width, 0)
  }

  /// The text cut to at most `width` columns, never inside a character or
  /// an escape: a name that does not fit ends in `~`, as ncdu shows it.
  package func fitted(to width: Int) -> ScreenText {
    guard columns > width else { return self }
    guard width > 0 else { return ScreenText() }
    var result = ScreenText()
    var index = 0
    var kept = 0
    var keptColumns = 0
    // Walk the characters, keeping those that fit before the `~`.
    while index < bytes.count {
      let (length, cellWidth) = Self.unit(bytes, at: index)
      if keptColumns + cellWidth > width - 1 { break }
      keptColumns += cellWidth
      index += length
      kept = index
    }
    result.bytes = Array(bytes[..<kept]) + [UInt8(ascii: "~")]
    result.columns = keptColumns + 1
    return result
  }

  /// The length and columns of the character or escape at `index` of text
  /// this type made.
  private static func unit(_ bytes: [UInt8], at index: Int) -> (Int, Int) {
    if bytes[index] == 0x5C, index + 1 < bytes.count {
      // An escape: `\\`, `\n` or `\ooo`.
      let next = bytes[index + 1]
      if next >= 0x30 && next <= 0x37 { return (4, 4) }
      return (2, 2)
    }
    if bytes[index] < 0x80 { return (1, 1) }
    guard let (scalar, length) = UTF8Scalar.decode(bytes, at: index) else { return (1, 1) }
    return (length, max(Int(cncurses_scalar_width(scalar.value)), 0))
  }

  /// Padded with spaces to `width` columns, text on the right.
  package func rightAligned(_ width: Int) -> ScreenText {
    var result = ScreenText(String(repeating: " ", count: max(0, width - columns)))
    result.bytes += bytes
    result.columns += columns
    return result
  }

  package static func + (lhs: ScreenText, rhs: ScreenText) -> ScreenText {
    var result = lhs
    result.bytes += rhs.bytes
    result.columns += rhs.columns
    return result
  }
}
