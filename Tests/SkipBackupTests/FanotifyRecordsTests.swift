import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The decoding of an fanotify read into typed events, against bytes laid
/// out as linux/fanotify.h lays them (struct fanotify_event_metadata, then
/// struct fanotify_event_info_fid with its handle and name, padded to 4
/// bytes as fs/notify/fanotify/fanotify_user.c pads them), and against
/// what the kernel itself writes for a file made in a watched directory.
@Suite(.onTestThreads) struct FanotifyRecordsTests {
  static let filesystem: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
  static let handle: [UInt8] = [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x11, 0x22]

  /// An information record: its type, and the filesystem, handle (type 1)
  /// and name after its header.
  static func record(type: UInt8 = 2, name: [UInt8]?, handle: [UInt8] = handle) -> [UInt8] {
    var bytes: [UInt8] = [type, 0, 0, 0] + filesystem
    bytes += withUnsafeBytes(of: UInt32(handle.count).littleEndian, Array.init)
    bytes += withUnsafeBytes(of: Int32(1).littleEndian, Array.init)
    bytes += handle
    if let name { bytes += name + [0] }
    while bytes.count % 4 != 0 { bytes.append(0) }
    let length = UInt16(bytes.count)
    bytes[2] = UInt8(length & 0xFF)
    bytes[3] = UInt8(length >> 8)
    return bytes
  }

  /// An event: its metadata (version 3, fd -1) and `records`.
  static func event(_ mask: FanotifyEvents, pid: Int32 = 42, version: UInt8 = 3, _ records: [UInt8])
    -> [UInt8]
  {
    var bytes = withUnsafeBytes(of: UInt32(24 + records.count).littleEndian, Array.init)
    bytes += [version, 0] + withUnsafeBytes(of: UInt16(24).littleEndian, Array.init)
    bytes += withUnsafeBytes(of: mask.rawValue.littleEndian, Array.init)
    bytes += withUnsafeBytes(of: Int32(-1).littleEndian, Array.init)
    bytes += withUnsafeBytes(of: pid.littleEndian, Array.init)
    return bytes + records
  }

  static func decode(_ bytes: [UInt8]) -> [FanotifyRecord] {
    bytes.withUnsafeBytes { Array(FanotifyRecords($0)) }
  }

  static func entry(_ name: String) -> FanotifyEntry {
    FanotifyEntry(
      filesystem: filesystem, handle: [1, 0, 0, 0] + handle, name: Array(name.utf8))
  }

  @Test func eventsInOneReadAreEachDecoded() {
    let bytes =
      Self.event([.created, .onDirectory], Self.record(name: Array("made".utf8)))
      + Self.event(.deleted, pid: 7, Self.record(name: Array("gone".utf8)))
      + Self.event(.attributes, Self.record(name: [UInt8(ascii: ".")]))
    #expect(
      Self.decode(bytes) == [
        .event(
          FanotifyEvent(
            events: [.created, .onDirectory], processID: 42, entries: [Self.entry("made")])),
        .event(FanotifyEvent(events: .deleted, processID: 7, entries: [Self.entry("gone")])),
        .event(FanotifyEvent(events: .attributes, processID: 42, entries: [Self.entry(".")])),
      ])
  }

  /// A record of a type the layer does not read is passed over; a handle
  /// with no name (`FAN_EVENT_INFO_TYPE_DFID`) is an entry named "".
  @Test func recordsOfOtherTypesArePassedOver() {
    let bytes = Self.event(
      .movedTo,
      Self.record(type: 4, name: nil) + Self.record(type: 3, name: nil)
        + Self.record(name: Array("x".utf8)))
    let unnamed = FanotifyEntry(
      filesystem: Self.filesystem, handle: [1, 0, 0, 0] + Self.handle, name: [])
    #expect(
      Self.decode(bytes) == [
        .event(FanotifyEvent(events: .movedTo, processID: 42, entries: [unnamed, Self.entry("x")]))
      ])
  }

  @Test func anOverflowIsItsOwnRecord() {
    let bytes = Self.event(.overflow, []) + Self.event(.created, Self.record(name: [0x61]))
    #expect(Self.decode(bytes).first == .overflow)
    #expect(Self.decode(bytes).count == 2)
  }

  /// Bytes the kernel would not write end the decoding at the first of
  /// them, with no load past the read: a length past its end, one
  /// shorter than the metadata, another version, a name without its NUL,
  /// a handle longer than its record, a read cut inside the metadata.
  @Test func malformedBytesEndTheRecords() {
    let good = Self.event(.created, Self.record(name: Array("a".utf8)))
    var pastTheEnd = good
    pastTheEnd[0] += 4
    var tooShort = good
    tooShort[0] = 8
    var noNul = Self.event(
      .created, Self.record(name: nil, handle: Self.handle + [0x62, 0x63, 0x64, 0x65]))
    noNul[24 + 12] = 4  // handle_bytes: the last 4 bytes are then a name, with no NUL
    var longHandle = good
    longHandle[24 + 12] = 200
    let cases: [(String, [UInt8], Int)] = [
      ("length past the read", good + pastTheEnd, good.count),
      ("length below the metadata", tooShort, 0),
      ("version", good + Self.event(.created, version: 2, []), good.count),
      ("name without NUL", noNul, 24),
      ("handle past its record", longHandle, 24),
      ("cut metadata", good + Array(good.prefix(10)), good.count),
    ]
    for (what, bytes, offset) in cases {
      let records = Self.decode(bytes)
      #expect(records.last == .malformed(offset: offset), "\(what)")
      #expect(
        records.dropLast().allSatisfy { if case .event = $0 { true } else { false } }, "\(what)")
    }
    #expect(Self.decode([]).isEmpty)
  }

  /// What the kernel writes: a file made in a directory watched by an
  /// inode mark is one event, `FAN_CREATE`, naming the directory by the
  /// filesystem's identity statfs(2) gives and the file by its name.
  @Test func theKernelsRecordsDecode() throws {
    let tree = try TemporaryDirectory()
    let directory = try Descriptor.open(FilePath(tree.path), [.directory, .readOnly])
    let group = try Descriptor.fanotifyGroup(
      [.reportDirectoryAndName, .nonBlocking], eventFlags: .readOnly, for: FilePath(tree.path))
    try group.mark([.add, .onlyDirectory], [.created, .onChildren], on: directory)
    // One open(2), where Foundation's createFile makes a temporary file
    // and renames it.
    #expect(Glibc.close(open(tree.path + "/made-here", O_CREAT | O_WRONLY, 0o644)) == 0)
    var buffer = [UInt8](repeating: 0, count: 4096)
    let records = try buffer.withUnsafeMutableBytes { bytes in
      let count = try group.readEvents(into: bytes)
      return Array(FanotifyRecords(UnsafeRawBufferPointer(rebasing: bytes[..<count])))
    }
    guard case .event(let event)? = records.first, records.count == 1 else {
      Issue.record("records: \(records)")
      return
    }
    #expect(event.events == .created)
    #expect(event.processID == getpid())
    #expect(event.entries.map(\.name) == [Array("made-here".utf8)])
    let identity = try FilesystemFlag.identity(of: directory.rawValue).get()
    #expect(event.entries.first?.filesystem == identity.identity)
    // Nothing more is queued: a read says so with 0, not an error.
    let more = try buffer.withUnsafeMutableBytes { try group.readEvents(into: $0) }
    #expect(more == 0)
  }
}
