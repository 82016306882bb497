import Foundation

// borg 2, which reads the xdg attribute and the nodump flag itself, is not
// in Debian 12: scripts/borg2 builds borgbackup 2.0.0b22 from PyPI into
// .build/borg2-venv of this checkout. scripts/test runs it before the tests,
// so that a fresh clone's CI has it; a focused `swift test` runs it here.

/// Why borg 2 could not be installed: the script's output.
public struct Borg2Unavailable: Error, CustomStringConvertible {
  public var result: ProcessResult
  public var description: String { "scripts/borg2 failed: \(result)" }
}

/// The path of borg 2's `borg`, installed once per test process.
private let borg2Installation: Result<String, Borg2Unavailable> = {
  let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
  let result = run([Argument(checkout + "/scripts/borg2")])
  guard result.status == 0, let path = result.lines.last, path.hasSuffix("/bin/borg") else {
    return .failure(Borg2Unavailable(result: result))
  }
  return .success(path)
}()

/// The `borg` of borg 2.0.0b22, installed by scripts/borg2 when missing.
public func borg2Path() throws(Borg2Unavailable) -> String {
  try borg2Installation.get()
}
