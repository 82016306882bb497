/// restic's `--exclude-file`, for `restic backup "$ROOT"`: one pattern a
/// line, the item's absolute path with each component escaped.
///
/// From restic 0.14's source (`readExcludePatternsFromFiles`,
/// `internal/filter`): each line is trimmed of Unicode whitespace at both
/// ends, skipped when it starts with `#`, and has `$NAME` and `${NAME}`
/// replaced by environment variables, `$$` by `$`. restic compares patterns
/// with the absolute path it backs up (`filepath.Abs` of ROOT, lexically
/// cleaned, with `$PWD` as the working directory when it names `.`),
/// component by component; a component with `\`, `[`, `]`, `*` or `?` goes
/// through Go's `filepath.Match`, where a backslash makes the next character
/// literal, and any other is compared byte for byte. A leading `!` would
/// negate a pattern; every line starts with `/`, so none does.
///
/// Lines are split at newlines, so a newline in a name is written as the one
/// character class that matches it and nothing else: every rune except the
/// ranges U+0001-U+0009 and U+000B-U+10FFFF (a name never holds U+0000).
/// Whitespace at the end of a line becomes a one-character class such as
/// `[ ]`. restic reads lines of up to 64 KiB (Go's `bufio.Scanner`).
package struct ResticExclusions {
  package init() {}

  package var terminator: UInt8 { UInt8(ascii: "\n") }

  /// The longest line `bufio.Scanner` returns, without its newline.
  package static let longestLine = 64 * 1024 - 1

  /// `[^\x01-\t\v-\u{10FFFF}]`: a newline and nothing else.
  package static let newline: [UInt8] =
    Array("[^".utf8) + [0x01, UInt8(ascii: "-"), 0x09, 0x0B, UInt8(ascii: "-")]
    + Array("\u{10FFFF}".utf8) + [UInt8(ascii: "]")]

  /// `restic backup "$ROOT"` reads ROOT itself, a symbolic link as a link,
  /// at its absolute, lexically cleaned path.
  package func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot {
    guard let absolute = LexicalPath.goAbsolute(root) else {
      throw ExportFailure(message: "cannot tell the working directory, which restic needs")
    }
    return ExportRoot(path: absolute, followsSymbolicLink: false)
  }

  package func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible> {
    var path = root.path
    if path.last != UInt8(ascii: "/") { path.append(UInt8(ascii: "/")) }
    path += relative
    // Whitespace that TrimSpace would take off the end of the line.
    let trailing = UTF8Scanner.startOfTrailingRun(in: path) {
      Self.isGoSpace($0) && $0 != 0x0A
    }
    var rule: [UInt8] = []
    for byte in path[..<trailing] {
      switch byte {
      case UInt8(ascii: "\\"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "*"),
        UInt8(ascii: "?"):
        rule += [UInt8(ascii: "\\"), byte]
      case UInt8(ascii: "$"): rule += Array("$$".utf8)
      case UInt8(ascii: "\n"): rule += Self.newline
      default: rule.append(byte)
      }
    }
    var index = trailing
    while index < path.count {
      let length = UTF8Scanner.scalar(in: path, at: index)!.length
      rule += [UInt8(ascii: "[")] + path[index..<(index + length)] + [UInt8(ascii: "]")]
      index += length
    }
    return Inexpressible.limit(rule, to: Self.longestLine) {
      "restic cannot exclude it: its pattern takes \($0) bytes, and restic "
        + "reads lines of at most \(Self.longestLine) bytes from an exclude file"
    }
  }

  /// Go's `unicode.IsSpace`.
  package static func isGoSpace(_ value: UInt32) -> Bool {
    switch value {
    case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
      0x3000:
      true
    default: false
    }
  }
}
