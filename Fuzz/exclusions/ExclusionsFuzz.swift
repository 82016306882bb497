import SkipBackupExport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Each backup tool's exclusion syntax on a name anyone can give a file.
/// The input becomes a relative path as a walk meets one (no NUL, no empty,
/// `.` or `..` component). In process: each tool's rule is made without a
/// fault, and tar's, which GNU tar hands to the C library's `fnmatch(3)`
/// (`--anchored --wildcards`, a `*` matching `/`, `FNM_LEADING_DIR` for
/// what is below), matches `./` and the path and none of its decoys.
/// rsync's wildmatch, restic's Go `filepath.Match` and borg's Python regular
/// expressions are not in this process: with `SKIPBACKUP_FUZZ_NAMES=DIR`
/// each path is written to DIR, and Fuzz/exclusions/check-tools runs the
/// real tools on them.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let slash = UInt8(ascii: "/")
  let components = UnsafeBufferPointer(start: data, count: size).filter { $0 != 0 }
    .split(separator: slash).filter {
      !$0.elementsEqual([0x2E]) && !$0.elementsEqual([0x2E, 0x2E])
    }
    .filter { $0.count <= 255 }
  guard !components.isEmpty else { return 0 }
  let path = Array(components.joined(separator: [slash]))
  if let directory = getenv("SKIPBACKUP_FUZZ_NAMES") { save(path, in: directory) }

  let root: [UInt8] = Array("/fuzz/root".utf8)
  _ = ResticExclusions().rule(
    root: ExportRoot(path: root, followsSymbolicLink: false), relative: path)
  _ = BorgExclusions().rule(
    root: ExportRoot(path: root, followsSymbolicLink: false), relative: path)
  _ = RsyncExclusions().rule(
    root: ExportRoot(path: root, followsSymbolicLink: true), relative: path)
  guard
    case .success(let rule) = TarExclusions().rule(
      root: ExportRoot(path: root, followsSymbolicLink: true), relative: path)
  else {
    precondition(path.contains(UInt8(ascii: "\n")), "tar refused \(path)")
    return 0
  }
  let name = Array("./".utf8) + path
  precondition(tarMatches(rule, name), "tar's rule \(rule) misses \(name)")
  for decoy in decoys(of: path) where decoy != path {
    let decoyName = Array("./".utf8) + decoy
    // Below the item is the item's (FNM_LEADING_DIR): no decoy.
    if decoyName.starts(with: name + [slash]) { continue }
    precondition(!tarMatches(rule, decoyName), "tar's rule \(rule) for \(path) matches \(decoy)")
  }
  return 0
}

/// Names one byte away from `path`: one more, one less, one changed.
private func decoys(of path: [UInt8]) -> [[UInt8]] {
  var decoys = [path + [UInt8(ascii: "x")], path + [UInt8(ascii: " ")], Array(path.dropLast())]
  for index in path.indices.suffix(16) where path[index] != UInt8(ascii: "/") {
    var changed = path
    changed[index] = path[index] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
    decoys.append(changed)
  }
  return decoys.filter { !$0.isEmpty && !$0.contains(0) }
}

/// GNU tar's test of an exclusion pattern on a member's name, with the
/// options `--anchored --wildcards` leaves (exclude.c, `exclude_fnmatch`).
private func tarMatches(_ pattern: [UInt8], _ name: [UInt8]) -> Bool {
  (pattern + [0]).withUnsafeBufferPointer { pattern in
    (name + [0]).withUnsafeBufferPointer { name in
      pattern.withMemoryRebound(to: CChar.self) { pattern in
        name.withMemoryRebound(to: CChar.self) { name in
          fnmatch(pattern.baseAddress!, name.baseAddress!, leadingDirectory) == 0
        }
      }
    }
  }
}

/// `FNM_LEADING_DIR` of <fnmatch.h>, a GNU extension Swift's Glibc module
/// leaves out.
private let leadingDirectory: CInt = 1 << 3

/// Writes `path` to a file of `directory` named by its bytes' hash, for
/// check-tools.
private func save(_ path: [UInt8], in directory: UnsafePointer<CChar>) {
  var hash: UInt64 = 0xcbf2_9ce4_8422_2325
  for byte in path { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
  let file = String(cString: directory) + "/" + String(hash, radix: 16)
  let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else { fatalError("\(file): \(String(cString: strerror(errno)))") }
  defer { close(descriptor) }
  let written = path.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
  precondition(written == path.count, "\(file): a short write")
}
