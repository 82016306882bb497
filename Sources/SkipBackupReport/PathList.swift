import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The paths of `--files-from FILE`: one a line, or NUL-separated with `-0`,
/// as bytes, read as they come so that a list of any length streams.
///
/// A line that holds a NUL byte is no path (a C path ends at its first NUL,
/// so acting on it would act on a prefix that the list never named): it
/// comes back as ``Record/nulInLine(_:)`` with its line number.
package struct PathList: ~Copyable {
  package enum Record: Equatable {
    case path(FilePath)
    /// Line `number` (from 1) holds a NUL byte; nothing from it is used.
    case nulInLine(Int)
    /// Record `number` is `length` bytes, as long as `PATH_MAX` or longer:
    /// no system call takes such a path. Its bytes are passed over as they
    /// come, not kept.
    case tooLong(Int, length: Int)
  }

  /// The longest path a system call takes, its NUL included (`PATH_MAX`).
  package static let longestPath = 4096

  /// The list's file, or a duplicate of standard input (closing which
  /// leaves standard input open).
  private let file: Descriptor
  private let separator: UInt8
  private var buffer: [UInt8] = []
  private var start = 0
  private var finished = false
  private var records = 0
  /// Where the search for the next separator goes on: the bytes from
  /// `start` up to here hold none. Each byte is looked at once, where a
  /// search from `start` after each read is quadratic (an 80 MB line takes
  /// 13.9 s so; docs/performance.md).
  private var scanned = 0
  /// The bytes of an overlong record passed over so far, or `nil`.
  private var skipping: Int?

  /// Opens `file`; `-` is standard input.
  package init(file: FilePath, separator: UInt8) throws(Errno) {
    do throws(SkipBackupError) {
      self.file =
        file == "-"
        ? try Descriptor(duplicating: STDIN_FILENO, path: file)
        : try Descriptor.open(file, .readOnly)
    } catch {
      throw error.errno ?? .ioError
    }
    self.separator = separator
  }

  /// The next path, or `nil` at the end. Empty records are passed over.
  package mutating func next() throws(Errno) -> Record? {
    while true {
      if let end = Self.index(of: separator, in: buffer, from: max(start, scanned)) {
        let record = buffer[start..<end]
        start = end + 1
        scanned = start
        records += 1
        if let skipped = skipping {
          skipping = nil
          return .tooLong(records, length: skipped + record.count)
        }
        if record.isEmpty { continue }
        return self.record(record)
      }
      scanned = buffer.count
      if finished {
        guard start < buffer.count || skipping != nil else { return nil }
        let record = buffer[start...]
        start = buffer.count
        records += 1
        if let skipped = skipping {
          skipping = nil
          return .tooLong(records, length: skipped + record.count)
        }
        return self.record(record)
      }
      // No separator yet in a record too long for any path: its bytes go.
      if buffer.count - start >= Self.longestPath {
        skipping = (skipping ?? 0) + buffer.count - start
        start = buffer.count
      }
      buffer.removeFirst(start)
      scanned -= start
      start = 0
      try fill()
    }
  }

  /// The first `byte` in `buffer` from `index` on.
  private static func index(of byte: UInt8, in buffer: [UInt8], from index: Int) -> Int? {
    buffer.withUnsafeBytes { $0.firstIndex(of: byte, from: index) }
  }

  private static let chunk = [UInt8](repeating: 0, count: 64 * 1024)

  /// Reads what comes next onto the end of the buffer.
  private mutating func fill() throws(Errno) {
    let old = buffer.count
    // An array's bytes are copied at once; a repeatElement is added one
    // element at a time (most of a long line's time, in perf).
    buffer.append(contentsOf: Self.chunk)
    let count: Int
    do throws(SkipBackupError) {
      count = try file.read(into: &buffer, from: old)
    } catch {
      buffer.removeLast(64 * 1024)
      throw error.errno ?? .ioError
    }
    buffer.removeLast(64 * 1024 - count)
    if count == 0 { finished = true }
  }

  private func record(_ record: ArraySlice<UInt8>) -> Record {
    if separator != 0 && record.contains(0) { return .nulInLine(records) }
    if record.count >= Self.longestPath { return .tooLong(records, length: record.count) }
    return .path(Self.path(record))
  }

  private static func path(_ record: ArraySlice<UInt8>) -> FilePath {
    let characters = record.map { CChar(bitPattern: $0) } + [0]
    return characters.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
  }
}
