import SkipBackupMarks
import SkipBackupSystem
import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One entry of a directory as `getdents64(2)` gives it: a name and a type,
/// read without a call per entry.
package struct DirectoryEntry {
  /// The name, NUL-terminated, in the reader's buffer: valid until the next read.
  package let name: UnsafePointer<CChar>
  /// The name's length in bytes.
  package let nameLength: Int
  /// The `d_type` byte: `DT_REG`, `DT_DIR`, `DT_LNK`... or `DT_UNKNOWN`.
  package let type: UInt8
  /// The `d_ino` field: the inode number, as the filesystem lists it.
  package let inode: UInt64

  /// Whether the entry is `.` or `..`.
  var isDotOrDotDot: Bool {
    name[0] == 0x2E && (nameLength == 1 || (nameLength == 2 && name[1] == 0x2E))
  }
}

/// The entries of `struct linux_dirent64` records in a byte buffer.
///
/// A record is `d_ino` (8 bytes), `d_off` (8), `d_reclen` (2), `d_type` (1)
/// and the NUL-terminated name, padded to `d_reclen` bytes.
struct DirentRecords {
  var offset = 0
  var end = 0

  mutating func next(in buffer: UnsafeRawPointer) -> DirectoryEntry? {
    guard offset < end else { return nil }
    let record = buffer + offset
    let length = Int(record.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
    offset += length
    let name = (record + 19).assumingMemoryBound(to: CChar.self)
    return DirectoryEntry(
      name: name, nameLength: cStringLength(name),
      type: record.load(fromByteOffset: 18, as: UInt8.self),
      inode: record.loadUnaligned(as: UInt64.self))
  }
}

/// A directory's whole listing, as the walk read it with
/// ``TreeWalkOptions/wholeListings``: valid during the visits of its entries.
package struct DirectoryListing {
  let records: UnsafeRawBufferPointer

  /// Calls `body` with each entry but `.` and `..`.
  package func forEach(_ body: (DirectoryEntry) -> Void) {
    guard let base = records.baseAddress else { return }
    var iterator = DirentRecords(offset: 0, end: records.count)
    while let entry = iterator.next(in: base) {
      if !entry.isDotOrDotDot { body(entry) }
    }
  }

  /// Whether an entry is called `name`.
  ///
  /// Not generic, and one `memcmp` per entry of the same length: the
  /// generic form, called across the module boundary unspecialized, is
  /// 1.8 % of a repeat sweep's samples (perf, mkhome.py's 800 projects;
  /// docs/performance.md).
  package func contains(_ name: [UInt8]) -> Bool {
    guard let base = records.baseAddress else { return false }
    var iterator = DirentRecords(offset: 0, end: records.count)
    let count = name.count
    return name.withUnsafeBytes { name in
      while let entry = iterator.next(in: base) {
        if entry.nameLength == count, bytesEqual(entry.name, name.baseAddress!, count: count) {
          return true
        }
      }
      return false
    }
  }

  /// Whether an entry's name satisfies `matches`.
  package func contains(where matches: (UnsafeRawBufferPointer) -> Bool) -> Bool {
    guard let base = records.baseAddress else { return false }
    var iterator = DirentRecords(offset: 0, end: records.count)
    while let entry = iterator.next(in: base) {
      if !entry.isDotOrDotDot
        && matches(UnsafeRawBufferPointer(start: entry.name, count: entry.nameLength))
      {
        return true
      }
    }
    return false
  }
}

/// The names in the directory open as `descriptor`, but `.` and `..`, read
/// from its current position to the end: for the few small directories a
/// command reads whole outside a walk (run's snapshot directory).
///
/// The corresponding C function is `getdents64(2)`.
package func directoryNames(_ descriptor: CInt) -> Result<[[UInt8]], Errno> {
  let size = 32 << 10
  let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
  defer { buffer.deallocate() }
  var names: [[UInt8]] = []
  while true {
    // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's raw
    // calls)
    switch valueOrErrno({ system_getdents64(descriptor, buffer, size) }) {
    case .success(0):
      return .success(names)
    case .success(let length):
      var records = DirentRecords(offset: 0, end: length)
      while let entry = records.next(in: buffer) {
        if entry.isDotOrDotDot { continue }
        names.append(
          Array(UnsafeRawBufferPointer(start: entry.name, count: entry.nameLength)))
      }
    case .failure(let errno):
      return .failure(errno)
    }
  }
}
