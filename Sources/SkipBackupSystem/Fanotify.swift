// The records an fanotify group's read(2) returns, decoded here, in the
// system layer, as typed events: struct fanotify_event_metadata and its
// information records (linux/fanotify.h), checked against the lengths the
// read gave so that no caller loads bytes past them.

import CFanotify

/// One event of an fanotify group that reports by handle
/// (``FanotifyInitFlags/reportDirectoryAndName``): what happened, and
/// where, as the directory's identity and the entry's name. Such a group
/// opens no file for an event (its `fd` is `FAN_NOFD`), so an event owns
/// no descriptor.
package struct FanotifyEvent: Hashable, Sendable {
  /// What happened (`mask`), ``FanotifyEvents/onDirectory`` when the item
  /// is a directory.
  package var events: FanotifyEvents
  /// The process that caused it (`pid`).
  package var processID: Int32
  /// Its `FAN_EVENT_INFO_TYPE_DFID_NAME` and `FAN_EVENT_INFO_TYPE_DFID`
  /// records, in order: usually one.
  package var entries: [FanotifyEntry]

  package init(events: FanotifyEvents, processID: Int32, entries: [FanotifyEntry]) {
    self.events = events
    self.processID = processID
    self.entries = entries
  }
}

/// Where an event happened: a directory, by its filesystem and handle, and
/// the name of its entry ("." for the directory itself, empty in a record
/// with no name).
package struct FanotifyEntry: Hashable, Sendable {
  /// The filesystem's identity, `__kernel_fsid_t`'s 8 bytes as statfs(2)'s
  /// `f_fsid` gives them.
  package var filesystem: [UInt8]
  /// The directory's handle as `name_to_handle_at(2)` with
  /// `AT_HANDLE_FID` encodes it: `handle_type`'s 4 bytes, then
  /// `f_handle`'s.
  package var handle: [UInt8]
  /// The entry's name, without its NUL.
  package var name: [UInt8]

  package init(filesystem: [UInt8], handle: [UInt8], name: [UInt8]) {
    self.filesystem = filesystem
    self.handle = handle
    self.name = name
  }
}

/// What one record of an fanotify read is.
package enum FanotifyRecord: Hashable, Sendable {
  case event(FanotifyEvent)
  /// The queue overflowed (`FAN_Q_OVERFLOW`): events were lost, so
  /// whatever they would have said is unknown.
  case overflow
  /// Bytes that are not a record of the version this layer reads (a
  /// length past the read or shorter than a header, another
  /// `FANOTIFY_METADATA_VERSION`): the rest of the read cannot be trusted,
  /// and iteration ends after it.
  case malformed(offset: Int)
}

/// The records of one read(2) of an fanotify group, in order. It reads
/// `bytes` while it is iterated, so they must stay valid until then (the
/// buffer the read filled).
package struct FanotifyRecords: Sequence, IteratorProtocol {
  private let bytes: UnsafeRawBufferPointer
  private var offset = 0
  private var ended = false

  /// The records in `bytes`, what one read returned.
  package init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  /// struct fanotify_event_metadata: event_len (u32), vers (u8), reserved
  /// (u8), metadata_len (u16), mask (u64), fd (s32), pid (s32).
  package static let metadataLength = 24
  /// struct fanotify_event_info_header (info_type, pad, len), then
  /// `__kernel_fsid_t` and struct file_handle's handle_bytes and
  /// handle_type: what precedes a handle's bytes.
  private static let handleRecordHeader = 4 + 8 + 8

  package mutating func next() -> FanotifyRecord? {
    guard !ended, offset < bytes.count else { return nil }
    let start = offset
    guard start + Self.metadataLength <= bytes.count else { return malformed(at: start) }
    let length = Int(bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
    let version = bytes[start + 4]
    let metadata = Int(bytes.loadUnaligned(fromByteOffset: start + 6, as: UInt16.self))
    guard length >= Self.metadataLength, start + length <= bytes.count,
      version == CFANOTIFY_FANOTIFY_METADATA_VERSION, metadata >= Self.metadataLength,
      metadata <= length
    else { return malformed(at: start) }
    offset = start + length
    let events = FanotifyEvents(
      rawValue: bytes.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self))
    if events.contains(.overflow) { return .overflow }
    let processID = bytes.loadUnaligned(fromByteOffset: start + 20, as: Int32.self)
    var entries: [FanotifyEntry] = []
    var record = start + metadata
    let end = start + length
    while record + 4 <= end {
      let type = bytes[record]
      let recordLength = Int(bytes.loadUnaligned(fromByteOffset: record + 2, as: UInt16.self))
      guard recordLength >= 4, record + recordLength <= end else { return malformed(at: record) }
      if type == CFANOTIFY_FAN_EVENT_INFO_TYPE_DFID_NAME || type == Self.directoryRecord {
        guard let entry = entry(record, length: recordLength, named: type != Self.directoryRecord)
        else { return malformed(at: record) }
        entries.append(entry)
      }
      record += recordLength
    }
    return .event(FanotifyEvent(events: events, processID: processID, entries: entries))
  }

  /// `FAN_EVENT_INFO_TYPE_DFID`: a directory's handle with no name.
  private static let directoryRecord: UInt8 = 3

  /// The directory and name of the information record at `record`.
  private func entry(_ record: Int, length: Int, named: Bool) -> FanotifyEntry? {
    guard length >= Self.handleRecordHeader else { return nil }
    let handleBytes = Int(bytes.loadUnaligned(fromByteOffset: record + 12, as: UInt32.self))
    let handleEnd = record + Self.handleRecordHeader + handleBytes
    guard handleEnd <= record + length else { return nil }
    var name: [UInt8] = []
    if named {
      let rest = bytes[handleEnd..<(record + length)]
      guard let nul = rest.firstIndex(of: 0) else { return nil }
      name = Array(bytes[handleEnd..<nul])
    }
    return FanotifyEntry(
      filesystem: Array(bytes[(record + 4)..<(record + 12)]),
      handle: Array(bytes[(record + 16)..<handleEnd]), name: name)
  }

  private mutating func malformed(at position: Int) -> FanotifyRecord {
    ended = true
    return .malformed(offset: position)
  }
}
