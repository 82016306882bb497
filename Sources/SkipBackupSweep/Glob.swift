/// A shell pattern on bytes, as `fnmatch(3)` reads it with `FNM_PATHNAME`:
/// `*` and `?` and `[...]` (`[!...]` or `[^...]` negated, ranges such as
/// `[a-z]`) match within one path component, never a `/`; `\` quotes the
/// next byte. A pattern without those is matched byte for byte. POSIX's
/// `[:class:]`, `[=e=]` and `[.c.]` inside a bracket are not read: their
/// bytes are members of the bracket as written. `\/` is a `/` after a `*`
/// too, where glibc's `fnmatch` never matches it. A bracket left open is an
/// ordinary `[`, as in glibc, unless its bytes reach a range with no end
/// (`[a-` at the pattern's end, or `[a-\`): glibc's fnmatch_loop.c then
/// fails the match at that point ("cend == '\0'"), and so does Glob.
package struct Glob: Hashable, Sendable {
  package let pattern: [UInt8]
  /// Whether the pattern holds no wildcard, so that it matches only itself.
  package let isLiteral: Bool

  package init(_ pattern: [UInt8]) {
    self.pattern = pattern
    isLiteral = !pattern.contains { Self.specials.contains($0) }
  }

  private static let specials: [UInt8] = Array("*?[\\".utf8)

  /// Whether `text` matches the whole pattern.
  package func matches(_ text: UnsafeRawBufferPointer) -> Bool {
    if isLiteral { return text.elementsEqual(pattern) }
    let slash = UInt8(ascii: "/")
    var p = 0
    var t = 0
    var starPattern = -1
    var starText = 0
    while t < text.count {
      if p < pattern.count {
        let byte = pattern[p]
        switch byte {
        case UInt8(ascii: "*"):
          starPattern = p
          starText = t
          p += 1
          continue
        case UInt8(ascii: "?") where text[t] != slash:
          p += 1
          t += 1
          continue
        case UInt8(ascii: "["):
          switch matchClass(at: p, text[t]) {
          case .closed(let matched, let next):
            if matched && text[t] != slash {
              p = next
              t += 1
              continue
            }
          case .open where text[t] == byte:
            p += 1
            t += 1
            continue
          case .open, .rangeWithoutEnd:
            break
          }
        case UInt8(ascii: "\\"):
          // A `\` at the end quotes nothing: fnmatch(3) then matches nothing
          // ("Trailing \ loses", glibc's fnmatch_loop.c).
          if p + 1 < pattern.count, pattern[p + 1] == text[t] {
            p += 2
            t += 1
            continue
          }
        default:
          if byte == text[t] && byte != UInt8(ascii: "?") {
            p += 1
            t += 1
            continue
          }
        }
      }
      // A mismatch: let the last `*` take one more byte, never a `/`.
      guard starPattern >= 0, text[starText] != slash else { return false }
      starText += 1
      t = starText
      p = starPattern + 1
    }
    while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.count
  }

  package func matches(_ text: [UInt8]) -> Bool {
    text.withUnsafeBytes { matches($0) }
  }

  /// What the bracket at `start` makes of one byte of the text.
  private enum Bracket {
    /// Closed by a `]`: whether the byte is in it, and where the pattern
    /// goes on.
    case closed(Bool, next: Int)
    /// Not closed: the `[` is an ordinary byte.
    case open
    /// Not closed, and a range with no end byte was reached before any
    /// member matched: no match here.
    case rangeWithoutEnd
  }

  /// The bracket expression at `start`, read for `byte` in the order
  /// glibc's fnmatch_loop.c reads it: a member that matches before the
  /// pattern ends leaves the rest unread, so an open bracket is then an
  /// ordinary `[`; a range reached whose end is the pattern's end fails.
  private func matchClass(at start: Int, _ byte: UInt8) -> Bracket {
    var i = start + 1
    var negated = false
    if i < pattern.count && (pattern[i] == UInt8(ascii: "!") || pattern[i] == UInt8(ascii: "^")) {
      negated = true
      i += 1
    }
    let backslash = UInt8(ascii: "\\")
    var matched = false
    var first = true
    while i < pattern.count {
      var low = pattern[i]
      if low == UInt8(ascii: "]") && !first { return .closed(matched != negated, next: i + 1) }
      first = false
      if low == backslash && i + 1 < pattern.count {
        i += 1
        low = pattern[i]
      }
      guard i + 2 < pattern.count, pattern[i + 1] == UInt8(ascii: "-"),
        pattern[i + 2] != UInt8(ascii: "]")
      else {
        if i + 2 == pattern.count && pattern[i + 1] == UInt8(ascii: "-") && !matched
          && low != byte
        {
          // `low-` ends the pattern: a range without its end.
          return .rangeWithoutEnd
        }
        if low == byte { matched = true }
        i += 1
        continue
      }
      var high = pattern[i + 2]
      var end = i + 3
      if high == backslash {
        // The range's end may be quoted (`[a-\]]`); a `\` that ends the
        // pattern quotes nothing, so the range has no end.
        guard end < pattern.count else {
          if matched { return .open }
          return .rangeWithoutEnd
        }
        high = pattern[end]
        end += 1
      }
      if low <= byte && byte <= high { matched = true }
      i = end
    }
    return .open
  }
}
