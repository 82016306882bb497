import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The sweep's globs (a rules file's sentinels and `keep` patterns)
/// against the C library's `fnmatch(3)` with `FNM_PATHNAME`, which Glob
/// says it reads patterns as, but for the bracket forms it says it leaves
/// out: the input is a pattern, a NUL, and a text.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let split = bytes.firstIndex(of: 0) else { return 0 }
  let pattern = Array(bytes[..<split])
  let text = Array(bytes[(split + 1)...].prefix { $0 != 0 })
  // POSIX's `[:class:]`, `[=e=]` and `[.c.]` are not Glob's (it says so).
  // glibc's `*` looks for the byte after it only before the next `/` of
  // the text, a quoted `/` too, so `*\/` never matches there; in Glob `\/`
  // is a `/` wherever it is.
  for form in ["[:", "[=", "[.", "\\/"] where pattern.contains(Array(form.utf8)) { return 0 }
  let matched = Glob(pattern).matches(text)
  let expected = (pattern + [0]).withUnsafeBufferPointer { pattern in
    (text + [0]).withUnsafeBufferPointer { text in
      pattern.withMemoryRebound(to: CChar.self) { pattern in
        text.withMemoryRebound(to: CChar.self) { text in
          fnmatch(pattern.baseAddress!, text.baseAddress!, FNM_PATHNAME) == 0
        }
      }
    }
  }
  precondition(
    matched == expected,
    "Glob \(pattern) on \(text): \(matched), fnmatch(FNM_PATHNAME): \(expected)")
  return 0
}
