import SkipBackupSweep

/// A sweep's rules file (`--rules FILE`, `~/.config/skipbackup/sweep.rules`):
/// any bytes either parse or fail with one line's error, and a rule that
/// parses can be asked about any path.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let text = Array(UnsafeBufferPointer(start: data, count: size))
  let environment = SweepRules.Environment(
    home: Array("/nonexistent/home".utf8), xdgCacheHome: Array("/nonexistent/cache".utf8))
  guard
    let rules = try? SweepRules(
      builtIn: false, fileText: text, fileName: "fuzz.rules", environment: environment)
  else { return 0 }
  let paths = text.split(separator: UInt8(ascii: "\n")).map { Array($0) }
  for keep in rules.keeps {
    for path in paths.prefix(8) {
      _ = keep.covers(path)
      _ = keep.keepsBelow(path)
    }
  }
  for rule in rules.rules {
    precondition(!rule.name.isEmpty, "a rule without a name: \(rule.definition)")
    switch rule.kind {
    case .name(let name), .sentinel(let name, _):
      precondition(!name.contains(UInt8(ascii: "/")), "a directory name with a slash")
    case .path, .gitignore: break
    }
  }
  return 0
}
