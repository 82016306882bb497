import SystemPackage

/// The paths of `--files-from FILE`: one a line, or NUL-separated with `-0`,
/// as bytes, read as they come so that a list of any length streams.
///
/// A line that holds a NUL byte is no path (a C path ends at its first NUL,
/// so acting on it would act on a prefix that the list never named): it
/// comes back as ``Record/nulInLine(_:)`` with its line number.
struct PathList: ~Copyable {
  enum Record: Equatable {
    case path(FilePath)
    /// Line `number` (from 1) holds a NUL byte; nothing from it is used.
    case nulInLine(Int)
  }

  private let descriptor: FileDescriptor
  private let closes: Bool
  private let separator: UInt8
  private var buffer: [UInt8] = []
  private var start = 0
  private var finished = false
  private var records = 0

  /// Opens `file`; `-` is standard input.
  init(file: FilePath, separator: UInt8) throws(Errno) {
    if file == "-" {
      descriptor = .standardInput
      closes = false
    } else {
      descriptor = try Self.open(file)
      closes = true
    }
    self.separator = separator
  }

  private static func open(_ file: FilePath) throws(Errno) -> FileDescriptor {
    do {
      return try FileDescriptor.open(file, .readOnly, options: .closeOnExec)
    } catch let error as Errno {
      throw error
    } catch {
      throw .ioError
    }
  }

  deinit {
    if closes { try? descriptor.close() }
  }

  /// The next path, or `nil` at the end. Empty records are passed over.
  mutating func next() throws(Errno) -> Record? {
    while true {
      if let end = buffer[start...].firstIndex(of: separator) {
        let record = buffer[start..<end]
        start = end + 1
        records += 1
        if record.isEmpty { continue }
        return self.record(record)
      }
      if finished {
        guard start < buffer.count else { return nil }
        let record = buffer[start...]
        start = buffer.count
        records += 1
        return self.record(record)
      }
      buffer.removeFirst(start)
      start = 0
      let old = buffer.count
      buffer += repeatElement(0, count: 64 * 1024)
      let count: Int
      do {
        count = try buffer.withUnsafeMutableBytes { bytes in
          try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[old...]))
        }
      } catch let error as Errno {
        buffer.removeLast(64 * 1024)
        throw error
      } catch {
        buffer.removeLast(64 * 1024)
        throw .ioError
      }
      buffer.removeLast(64 * 1024 - count)
      if count == 0 { finished = true }
    }
  }

  private func record(_ record: ArraySlice<UInt8>) -> Record {
    if separator != 0 && record.contains(0) { return .nulInLine(records) }
    return .path(Self.path(record))
  }

  private static func path(_ record: ArraySlice<UInt8>) -> FilePath {
    let characters = record.map { CChar(bitPattern: $0) } + [0]
    return characters.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
  }
}
