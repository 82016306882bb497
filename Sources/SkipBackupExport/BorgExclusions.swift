/// borg 1.2's `--exclude-from`, for `borg create ... "$ROOT"`: one pattern a
/// line, `pf:` and the item's path where that path survives borg's reading,
/// else a `re:` regular expression written in ASCII.
///
/// From borg 1.2's source (`load_exclude_file`, `clean_lines`, `patterns.py`)
/// and measured with borg 1.2.4: the file is read as text in the locale's
/// encoding with universal newlines (`\n`, `\r` and `\r\n` end a line), each
/// line is stripped of whitespace at both ends and skipped when it starts with
/// `#`. borg names an item `os.path.normpath(os.path.join(ROOT, ...))`, ROOT
/// normalized too (so with ROOT `.` the names have no `./`), decoded with
/// `surrogateescape`, and matches patterns against that name without its
/// leading slashes. A `pf:` pattern is that name
/// exactly (after `normpath`); excluded directories are not entered, so the
/// pattern covers what is under them.
///
/// A path is written after `pf:` when it is valid UTF-8 without `\n` or
/// `\r`, has no whitespace at either end and `normpath` leaves it as it is.
/// Any other path is written as `re:^...\Z`, every character but letters,
/// digits, `_` and `/` escaped (`\x20`, `\n`, `\u00e9`), a byte that is not
/// UTF-8 as the surrogate `surrogateescape` makes of it (`\udcff`): the line
/// is pure ASCII, so neither the locale nor stripping can change it. Those
/// escapes assume borg decodes file names as UTF-8 (a UTF-8 locale, or the
/// C locale, which Python 3.7 and later turn into UTF-8).
package struct BorgExclusions {
  package init() {}

  package var terminator: UInt8 { UInt8(ascii: "\n") }

  /// `borg create ... "$ROOT"` reads `os.path.normpath(ROOT)`, a symbolic
  /// link as a link.
  package func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot {
    ExportRoot(path: LexicalPath.pythonNormalized(root), followsSymbolicLink: false)
  }

  package func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible> {
    var name = LexicalPath.pythonNormalized(LexicalPath.pythonJoined(root.path, relative))[...]
    while name.first == UInt8(ascii: "/") { name.removeFirst() }
    let path = Array(name)
    if Self.survivesAsFullPath(path) { return .success(Array("pf:".utf8) + path) }
    return .success(Array("re:^".utf8) + Self.regularExpression(path) + Array("\\Z".utf8))
  }

  /// Whether `pf:` and `path` on a line reach borg's matcher as `path`.
  package static func survivesAsFullPath(_ path: [UInt8]) -> Bool {
    guard UTF8Scanner.isValid(path), !path.isEmpty,
      !path.contains(UInt8(ascii: "\n")), !path.contains(UInt8(ascii: "\r")),
      LexicalPath.pythonNormalized(path) == path
    else { return false }
    let first = UTF8Scanner.scalar(in: path, at: 0)!.value
    let trailingSpace = UTF8Scanner.startOfTrailingRun(in: path, where: isPythonSpace)
    return !isPythonSpace(first) && trailingSpace == path.count
  }

  /// `path` as a Python regular expression of ASCII characters.
  package static func regularExpression(_ path: [UInt8]) -> [UInt8] {
    var expression: [UInt8] = []
    var index = 0
    while index < path.count {
      let value: UInt32
      if let (scalar, length) = UTF8Scanner.scalar(in: path, at: index) {
        value = scalar
        index += length
      } else {
        value = 0xDC00 + UInt32(path[index])  // what surrogateescape decodes the byte to
        index += 1
      }
      switch value {
      case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x5F, 0x2F:
        expression.append(UInt8(value))
      case 0x0A: expression += Array("\\n".utf8)
      case 0x0D: expression += Array("\\r".utf8)
      case 0x09: expression += Array("\\t".utf8)
      case 0x21...0x7E:
        expression += [UInt8(ascii: "\\"), UInt8(value)]
      case 0...0xFF: expression += Array("\\x".utf8) + hexDigits(value, width: 2)
      case 0...0xFFFF: expression += Array("\\u".utf8) + hexDigits(value, width: 4)
      default: expression += Array("\\U".utf8) + hexDigits(value, width: 8)
      }
    }
    return expression
  }

  /// Python's `str.isspace`, which `str.strip` uses.
  package static func isPythonSpace(_ value: UInt32) -> Bool {
    switch value {
    case 0x09...0x0D, 0x1C...0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F,
      0x205F, 0x3000:
      true
    default: false
    }
  }
}
