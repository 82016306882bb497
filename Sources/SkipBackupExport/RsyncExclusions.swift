/// rsync's `--exclude-from` with `--from0`: one rule a NUL-terminated
/// record, anchored at the transfer's root by a leading `/`.
///
/// The file is read by rsync's `parse_filter_file`: with `--from0` only a NUL
/// ends a rule, so spaces, newlines and carriage returns are part of the
/// name, and no leading character is special because every rule starts with
/// `/`. A rule holding `*`, `?` or `[` is a wildcard rule, matched by
/// `wildmatch`, where a backslash makes the next character literal; any other
/// rule is compared byte for byte, backslashes included. So only rules with a
/// wildcard character get backslashes. rsync drops a rule of 4,096 bytes or
/// more with a warning ("discarding over-long filter"; measured with rsync
/// 3.5.0), so such a rule is refused here.
package struct RsyncExclusions {
  package init() {}

  package var terminator: UInt8 { 0 }

  /// The longest rule rsync keeps: `MAXPATHLEN` (4096) less one, measured.
  package static let longestRule = 4095

  /// `rsync ... "$ROOT/" DEST`: the trailing slash follows a symbolic link.
  package func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot {
    ExportRoot(path: root, followsSymbolicLink: true)
  }

  package func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible> {
    let wildcards = Set(Array("*?[".utf8))
    var rule = [UInt8(ascii: "/")]
    if relative.contains(where: wildcards.contains) {
      for byte in relative {
        if wildcards.contains(byte) || byte == UInt8(ascii: "\\") {
          rule.append(UInt8(ascii: "\\"))
        }
        rule.append(byte)
      }
    } else {
      rule += relative
    }
    return Inexpressible.limit(rule, to: Self.longestRule) {
      "rsync cannot exclude it: its rule takes \($0) bytes, and rsync drops "
        + "filter rules longer than \(Self.longestRule) bytes"
    }
  }
}
