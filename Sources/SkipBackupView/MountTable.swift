import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The mount points of this process's namespace, from /proc/self/mountinfo:
/// an overlay shows its lower directory without what is mounted below it,
/// so `run` looks at each one under a ROOT.
package enum MountTable {
  package static func mountPoints() throws(SkipBackupError) -> [[UInt8]] {
    mountPoints(in: try read())
  }

  /// The mount points `text`, a mountinfo file, names.
  package static func mountPoints(in text: [UInt8]) -> [[UInt8]] {
    mounts(in: text).map(\.place.point)
  }

  /// One mount of the table, as `run`'s watch compares the table before
  /// its walk with the table after it (``ChangeWatch``): the kernel reports
  /// no mount or unmount to an inode's or a filesystem's fanotify mark.
  package struct Mount: Hashable {
    /// The mount's ID (field 1): a filesystem unmounted and mounted again
    /// at the same place is another mount.
    package let id: [UInt8]
    /// What is mounted (major:minor, field 3, and the root within that
    /// filesystem, field 4) and where (field 5, unescaped).
    package let place: Place

    /// A mount without its ID: a copy of the namespace (unshare) gives
    /// each copied mount an ID of its own.
    package struct Place: Hashable {
      package let device: [UInt8]
      package let root: [UInt8]
      package let point: [UInt8]
    }
  }

  /// Every mount of this process's namespace.
  package static func mounts() throws(SkipBackupError) -> [Mount] {
    mounts(in: try read())
  }

  /// Every mount `text`, a mountinfo file, names.
  package static func mounts(in text: [UInt8]) -> [Mount] {
    // Line: ID PARENT MAJOR:MINOR ROOT MOUNTPOINT ...; the root and the
    // mount point escape space, tab, newline and backslash as \ooo.
    text.split(separator: UInt8(ascii: "\n")).compactMap { line in
      let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5)
      guard fields.count > 4 else { return nil }
      return Mount(
        id: Array(fields[0]),
        place: Mount.Place(
          device: Array(fields[2]), root: unescape(fields[3]), point: unescape(fields[4])))
    }
  }

  /// The mount points of the filesystem that the mount `mountID` is of:
  /// each mount of the same type from the same source (fields 9 and 10,
  /// after the " - " separator), `mountID`'s own among them.
  static func mountPoints(sharingFilesystemWith mountID: UInt64) throws(SkipBackupError)
    -> [[UInt8]]
  {
    mountPoints(in: try read(), sharingFilesystemWith: mountID)
  }

  /// ``mountPoints(sharingFilesystemWith:)`` in `text`, a mountinfo file.
  package static func mountPoints(in text: [UInt8], sharingFilesystemWith mountID: UInt64)
    -> [[UInt8]]
  {
    let lines = text.split(separator: UInt8(ascii: "\n")).map {
      $0.split(separator: UInt8(ascii: " "))
    }
    func filesystem(_ fields: [ArraySlice<UInt8>]) -> [ArraySlice<UInt8>]? {
      guard let separator = fields.firstIndex(where: { $0.elementsEqual("-".utf8) }),
        separator + 2 < fields.endIndex, fields.count > 4
      else { return nil }
      return [fields[separator + 1], fields[separator + 2]]
    }
    let identifier = Array(String(mountID).utf8)
    guard let own = lines.first(where: { $0.first.map(Array.init) == identifier }),
      let kind = filesystem(own)
    else { return [] }
    return lines.filter { filesystem($0) == kind }.map { unescape($0[4]) }
  }

  /// /proc/self/mountinfo, whole.
  static func read() throws(SkipBackupError) -> [UInt8] {
    let path: FilePath = "/proc/self/mountinfo"
    // Tens of thousands of mounts (a container host) fit in 16 MiB.
    do {
      return try readWholeFile(path, limit: 16 << 20)
    } catch {
      throw SkipBackupError(.read, error, path: path)
    }
  }

  private static func unescape(_ field: ArraySlice<UInt8>) -> [UInt8] {
    var result: [UInt8] = []
    var index = field.startIndex
    while index < field.endIndex {
      if field[index] == UInt8(ascii: "\\"), index + 3 < field.endIndex,
        let value = UInt8(
          String(decoding: field[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
      {
        result.append(value)
        index += 4
      } else {
        result.append(field[index])
        index += 1
      }
    }
    return result
  }
}
