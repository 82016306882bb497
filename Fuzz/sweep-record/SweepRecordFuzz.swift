import SkipBackupCore
import SkipBackupSweep

/// The sweep's record, from bytes anyone who can write an item chose: the
/// value of `user.skipbackup.sweep`, and the rest of a name after
/// `user.skipbackup.sweep.`. A record that parses is written back in the
/// form the sweep writes and must read back the same.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let record = SweepRecord(value: bytes) { readsBack(record) }
  let name = Array("user.skipbackup.sweep.".utf8) + bytes
  if let record = name.withUnsafeBytes({ SweepRecord(attributeName: $0) }) { readsBack(record) }
  return 0
}

private func readsBack(_ record: SweepRecord) {
  precondition(!record.mechanisms.isEmpty && !record.rule.isEmpty, "an empty record parsed")
  let (name, value) = record.attribute
  let again =
    value.isEmpty
    ? name.bytes.withUnsafeBytes { SweepRecord(attributeName: $0) }
    : SweepRecord(value: value)
  precondition(
    again == record,
    "\(record) was written as \(name) \(value), read as \(String(describing: again))")
}
