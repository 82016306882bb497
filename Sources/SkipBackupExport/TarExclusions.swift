/// GNU tar's `--exclude-from` after `--anchored --wildcards`, for
/// `tar --create -C "$ROOT" .`: one pattern a line, `./` and the path.
///
/// Measured with GNU tar 1.34: `--exclude-from` reads lines even after
/// `--null` (a NUL ends the pattern's text, the rest of the line is lost),
/// drops whitespace at the end of each line, and does not unquote backslash
/// escapes the way it unquotes `-T` lists. Every line starts with `./`, so no
/// leading character of a name matters. So a newline
/// in a path cannot be written at all, and trailing whitespace is written as
/// a bracket expression (`[ ]`), which the line reader leaves alone. With
/// `--wildcards`, a backslash makes the next character literal both in
/// `fnmatch` and in patterns without wildcards (gnulib's `unescape_pattern`),
/// so `\`, `*`, `?` and `[` are escaped.
package struct TarExclusions {
  package init() {}

  package var terminator: UInt8 { UInt8(ascii: "\n") }

  /// `tar -C "$ROOT"` changes into ROOT, following a symbolic link.
  package func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot {
    ExportRoot(path: root, followsSymbolicLink: true)
  }

  /// What `isspace` says in the C locale: the line reader strips these.
  package static let whitespace = Set(Array(" \t\u{0B}\u{0C}\r".utf8))

  package func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible> {
    guard !relative.contains(UInt8(ascii: "\n")) else {
      return .failure(
        Inexpressible(
          reason: "tar cannot exclude it: its path holds a newline, and tar reads "
            + "--exclude-from one line a pattern (it ignores --null there)"))
    }
    var trailing = relative.endIndex
    while trailing > relative.startIndex && Self.whitespace.contains(relative[trailing - 1]) {
      trailing -= 1
    }
    let special = Set(Array("\\*?[".utf8))
    var rule = Array("./".utf8)
    for byte in relative[..<trailing] {
      if special.contains(byte) { rule.append(UInt8(ascii: "\\")) }
      rule.append(byte)
    }
    for byte in relative[trailing...] {
      rule += [UInt8(ascii: "["), byte, UInt8(ascii: "]")]
    }
    return .success(rule)
  }
}
