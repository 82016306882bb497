import SkipBackupView

/// /proc/self/mountinfo, whose mount points anyone who can mount (a user
/// namespace, a FUSE mount) names: any bytes parse without a fault, and a
/// mount point of any bytes, escaped as the kernel escapes it
/// (`show_mountinfo` quotes space, tab, newline and backslash as `\ooo`),
/// reads back as those bytes.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  _ = MountTable.mountPoints(in: bytes)
  _ = MountTable.mountPoints(in: bytes, sharingFilesystemWith: 36)
  // A path the kernel shows holds no NUL; it starts with `/`.
  let point = [UInt8(ascii: "/")] + bytes.filter { $0 != 0 }
  var escaped: [UInt8] = []
  for byte in point {
    if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x5C {
      escaped += [0x5C, 0x30 + (byte >> 6), 0x30 + ((byte >> 3) & 7), 0x30 + (byte & 7)]
    } else {
      escaped.append(byte)
    }
  }
  let table =
    Array("22 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n36 22 8:1 /sub ".utf8) + escaped
    + Array(" rw,noatime shared:2 - ext4 /dev/sda1 rw\n".utf8)
  let points = MountTable.mountPoints(in: table)
  precondition(points == [Array("/".utf8), point], "\(point) read back as \(points)")
  let sharing = MountTable.mountPoints(in: table, sharingFilesystemWith: 36)
  precondition(sharing == [Array("/".utf8), point], "\(point) shared as \(sharing)")
  return 0
}
