import Foundation

// The peers nobody here wrote, that tests check the bytes against:
// getfattr and setfattr (Debian's attr) and Python's os.getxattr.

public enum Names {
  public static let legacy = "user.com.apple.MobileBackup"
  public static let resource = "user.com.apple.metadata:com_apple_backup_excludeItem"
  public static let xdg = "user.xdg.robots.backup"
  /// The 61 bytes of formats.md, as Python's plistlib writes them.
  public static let resourceValueHex =
    "62706c6973743030" + "5f1011" + "636f6d2e6170706c652e6261636b757064" + "08"
    + "000000000000" + "01" + "01" + "0000000000000001" + "0000000000000000" + "000000000000001c"
}

/// The value of attribute `name` on `path` (not following a link), as
/// `getfattr --only-values` prints it; `nil` when there is none.
public func getfattr(_ path: [UInt8], _ name: String) -> [UInt8]? {
  let result = run(["getfattr", "-h", "--only-values", "-n", Argument(name), Argument(bytes: path)])
  return result.status == 0 ? result.standardOutput : nil
}

public func getfattr(_ path: String, _ name: String) -> [UInt8]? {
  getfattr(Array(path.utf8), name)
}

/// The value as `getfattr -e hex` shows it: `0x...`.
public func getfattrHex(_ path: String, _ name: String) -> String? {
  let result = run(["getfattr", "-h", "-e", "hex", "-n", Argument(name), Argument(path)])
  guard result.status == 0 else { return nil }
  return result.lines.first { $0.hasPrefix(name + "=") }.map {
    String($0.dropFirst(name.count + 1))
  }
}

/// Every `user.` attribute on `path` with its value in hex, as getfattr dumps them.
public func getfattrDump(_ path: String) -> [String] {
  let result = run(["getfattr", "-h", "-d", "-m", "-", "-e", "hex", Argument(path)])
  return result.lines.filter { !$0.hasPrefix("#") && !$0.isEmpty }
}

/// Sets attribute `name` on `path` to the bytes of `hex` (without `0x`).
public func setfattr(_ path: [UInt8], _ name: String, hex: String) {
  let result = run([
    "setfattr", "-h", "-n", Argument(name), "-v", Argument("0x" + hex), Argument(bytes: path),
  ])
  precondition(result.status == 0, "setfattr failed: \(result)")
}

public func setfattr(_ path: String, _ name: String, hex: String) {
  setfattr(Array(path.utf8), name, hex: hex)
}

/// The value of `name` on `path` as Python's `os.getxattr` reads it.
public func pythonGetxattr(_ path: [UInt8], _ name: String) -> [UInt8]? {
  let script = """
    import os, sys
    try:
        value = os.getxattr(os.fsencode(sys.argv[1]), sys.argv[2], follow_symlinks=False)
    except OSError:
        sys.exit(1)
    sys.stdout.buffer.write(value)
    """
  let result = run([python3, "-c", Argument(script), Argument(bytes: path), Argument(name)])
  return result.status == 0 ? result.standardOutput : nil
}

public func pythonGetxattr(_ path: String, _ name: String) -> [UInt8]? {
  pythonGetxattr(Array(path.utf8), name)
}

public func hex(_ bytes: [UInt8]) -> String {
  bytes.map { String(format: "%02x", $0) }.joined()
}

/// What must not change when a mark is made or read: the contents, the
/// modification time and every other attribute.
public struct Fingerprint: Equatable, CustomStringConvertible {
  public var contents: Data?
  public var modification: Timestamp
  public var attributes: [String]

  public struct Timestamp: Equatable {
    var seconds: Int
    var nanoseconds: Int
  }

  public init(_ path: String, ignoring ignored: [String] = []) {
    contents = FileManager.default.contents(atPath: path)
    var status = stat()
    lstat(path, &status)
    modification = Timestamp(
      seconds: status.st_mtim.tv_sec, nanoseconds: status.st_mtim.tv_nsec)
    attributes = getfattrDump(path).filter { line in !ignored.contains { line.hasPrefix($0 + "=") }
    }
  }

  public var description: String { "mtime \(modification) attributes \(attributes)" }
}

/// The inode change time of `path`, in nanoseconds.
public func changeTime(_ path: String) -> Int {
  var status = stat()
  lstat(path, &status)
  return status.st_ctim.tv_sec * 1_000_000_000 + status.st_ctim.tv_nsec
}
