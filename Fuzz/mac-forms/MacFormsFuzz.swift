import SkipBackupCore

/// The names and values a Mac's marks arrive in, through `rsync -X`,
/// netatalk or Samba (MacServerForms.swift): an attribute name from a
/// listing is each mechanism's, a Samba stream's, or neither, and only
/// the exact name; a value counts by the table's rule (the legacy
/// attribute by its first byte, so that Samba's and netatalk's trailing
/// NUL changes nothing).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let mechanism = Mechanism.attributeMechanism(named: bytes)
  if let mechanism {
    precondition(mechanism.attributeName?.bytes.elementsEqual(bytes) == true, "\(mechanism)")
  }
  if let stream = SambaStream.named(bytes) {
    precondition(mechanism == nil, "a stream's name is a mechanism's too")
    let name = UnsafeRawBufferPointer(
      start: stream.name.utf8Start, count: stream.name.utf8CodeUnitCount)
    precondition(name.elementsEqual(bytes), "\(stream) is not the name read")
  }
  for mechanism in Mechanism.attributeMechanisms {
    let counts = mechanism.isMark(bytes)
    // The trailing NUL byte Samba's streams and netatalk's `ea = samba` add.
    let padded = Array(bytes) + [0]
    let paddedCounts = padded.withUnsafeBytes { mechanism.isMark($0) }
    if mechanism.presenceIsMark {
      precondition(counts && paddedCounts, "\(mechanism): a present attribute is not a mark")
    }
    if mechanism == .legacy {
      precondition(counts == (bytes.first.map { $0 != 0 } ?? false), "the legacy rule")
      precondition(
        bytes.isEmpty || paddedCounts == counts, "a trailing NUL changed the legacy rule")
    }
  }
  return 0
}
