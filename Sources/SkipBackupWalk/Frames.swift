import SkipBackupMarks
import SkipBackupSystem
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One open directory of a walk, and what of its listing is still unread.
struct Frame {
  let descriptor: CInt
  /// The length of the directory's path in the walker's path buffer.
  let pathLength: Int
  /// The depth of the directory's entries.
  let depth: Int
  /// What the entries of this directory see as their marked ancestor.
  let markedAncestorLength: Int?
  /// The directory's own read buffer, while it holds unread records (with
  /// `wholeListings`, until the directory is closed).
  var buffer: UnsafeMutableRawPointer?
  var bufferSize = 0
  var records = DirentRecords()
  /// With `wholeListings`: whether the whole listing has been read.
  var isListed = false

  /// The next record already read, if any.
  @inline(__always)
  mutating func nextBufferedRecord() -> DirectoryEntry? {
    guard let buffer else { return nil }
    return records.next(in: buffer)
  }
}

/// The open directories of one walker, deepest last. Each frame reads into a
/// buffer of its own, taken from a free list, so going down into a directory
/// never disturbs the unread records of the one above it, and a frame that
/// reaches the end of its listing gives its buffer back.
///
/// Frames and buffers are raw memory: a frame is reached by pointer on every
/// entry, without the uniqueness checks and copies of an array of structs.
/// The stack owns them all; its `deinit` closes every descriptor still open
/// and frees every buffer.
struct FrameStack: ~Copyable {
  private var frames: UnsafeMutablePointer<Frame>
  private var capacity = 16
  private var count = 0
  private var spareBuffers: [(buffer: UnsafeMutableRawPointer, size: Int)] = []

  /// 32 KiB a read, as the expert C floor (xscan.c) reads: a directory of a few
  /// hundred entries in one `getdents64` (and one more that says the end).
  static let bufferSize = 32 * 1024

  init() {
    frames = .allocate(capacity: capacity)
  }

  deinit {
    for index in 0..<count {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      _ = system_close(frames[index].descriptor)
      frames[index].buffer?.deallocate()
    }
    frames.deinitialize(count: count)
    frames.deallocate()
    for spare in spareBuffers { spare.buffer.deallocate() }
  }

  /// The deepest open directory, or `nil` when the walk is done.
  var top: UnsafeMutablePointer<Frame>? {
    count > 0 ? frames + (count - 1) : nil
  }

  mutating func push(
    descriptor: CInt, pathLength: Int, depth: Int, markedAncestorLength: Int?
  ) {
    if count == capacity {
      let grown = UnsafeMutablePointer<Frame>.allocate(capacity: capacity * 2)
      grown.moveInitialize(from: frames, count: count)
      frames.deallocate()
      frames = grown
      capacity *= 2
    }
    (frames + count).initialize(
      to: Frame(
        descriptor: descriptor, pathLength: pathLength, depth: depth,
        markedAncestorLength: markedAncestorLength))
    count += 1
  }

  /// Closes the deepest directory.
  mutating func pop() {
    count -= 1
    let frame = (frames + count).move()
    // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's raw
    // calls)
    _ = system_close(frame.descriptor)
    if let buffer = frame.buffer { spareBuffers.append((buffer, frame.bufferSize)) }
  }

  /// A buffer from the free list, or a new one of `bufferSize` bytes.
  private mutating func takeBuffer(for frame: UnsafeMutablePointer<Frame>) {
    guard frame.pointee.buffer == nil else { return }
    let spare = spareBuffers.popLast()
    frame.pointee.buffer =
      spare?.buffer ?? .allocate(byteCount: Self.bufferSize, alignment: 8)
    frame.pointee.bufferSize = spare?.size ?? Self.bufferSize
  }

  /// Reads the next records of `frame` into its buffer: `true` when there
  /// are some, `false` at the end of the directory, when the buffer goes
  /// back to the free list.
  ///
  /// The corresponding C function is `getdents64(2)`.
  mutating func read(into frame: UnsafeMutablePointer<Frame>) -> Result<Bool, Errno> {
    takeBuffer(for: frame)
    let buffer = frame.pointee.buffer!
    let result = valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_getdents64(frame.pointee.descriptor, buffer, frame.pointee.bufferSize)
    }
    if case .success(let length) = result, length > 0 {
      frame.pointee.records = DirentRecords(offset: 0, end: length)
      return .success(true)
    }
    spareBuffers.append((buffer, frame.pointee.bufferSize))
    frame.pointee.buffer = nil
    return result.map { _ in false }
  }

  /// Reads every record of `frame` into its buffer, grown as needed; the
  /// buffer stays the frame's until it is closed, so the listing is valid
  /// while its entries are visited.
  ///
  /// The corresponding C function is `getdents64(2)`.
  mutating func readWhole(
    into frame: UnsafeMutablePointer<Frame>
  ) -> Result<DirectoryListing, Errno> {
    takeBuffer(for: frame)
    var count = 0
    while true {
      // Room for at least one record of the longest name.
      if frame.pointee.bufferSize - count < 512 {
        let size = frame.pointee.bufferSize * 2
        let grown = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        grown.copyMemory(from: frame.pointee.buffer!, byteCount: count)
        frame.pointee.buffer!.deallocate()
        frame.pointee.buffer = grown
        frame.pointee.bufferSize = size
      }
      let buffer = frame.pointee.buffer!
      let result = valueOrErrno {
        // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
        // raw calls)
        system_getdents64(
          frame.pointee.descriptor, buffer + count, frame.pointee.bufferSize - count)
      }
      switch result {
      case .success(0):
        frame.pointee.records = DirentRecords(offset: 0, end: count)
        return .success(
          DirectoryListing(records: UnsafeRawBufferPointer(start: buffer, count: count)))
      case .success(let length):
        count += length
      case .failure(let errno):
        return .failure(errno)
      }
    }
  }
}

/// A growable, NUL-terminated byte buffer for the current path.
struct PathBuffer: ~Copyable {
  private var storage: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private(set) var count = 0

  init() {
    capacity = 4096
    storage = .allocate(capacity: capacity)
    storage[0] = 0
  }

  deinit { storage.deallocate() }

  var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

  var filePath: FilePath {
    FilePath(platformString: UnsafeRawPointer(storage).assumingMemoryBound(to: CChar.self))
  }

  /// A path handed over by another walker.
  mutating func set(bytes: [UInt8]) {
    count = 0
    bytes.withUnsafeBytes { append($0.baseAddress!, $0.count) }
  }

  /// The root as given, without trailing slashes (but `/` stays `/`).
  mutating func set(_ root: FilePath) {
    count = 0
    root.withCString { pointer in
      var length = cStringLength(pointer)
      while length > 1 && pointer[length - 1] == 0x2F { length -= 1 }
      append(UnsafeRawPointer(pointer), length)
    }
  }

  @inline(__always)
  mutating func appendComponent(_ name: UnsafePointer<CChar>, length: Int) {
    if count == 0 || storage[count - 1] != 0x2F {
      var slash: UInt8 = 0x2F
      append(&slash, 1)
    }
    append(UnsafeRawPointer(name), length)
  }

  @inline(__always)
  mutating func truncate(to length: Int) {
    count = length
    storage[count] = 0
  }

  private mutating func append(_ bytes: UnsafeRawPointer, _ length: Int) {
    if count + length + 1 > capacity {
      var newCapacity = capacity * 2
      while count + length + 1 > newCapacity { newCapacity *= 2 }
      let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
      grown.update(from: storage, count: count)
      storage.deallocate()
      storage = grown
      capacity = newCapacity
    }
    (storage + count).update(from: bytes.assumingMemoryBound(to: UInt8.self), count: length)
    count += length
    storage[count] = 0
  }
}
