import SkipBackupCore

/// A name as a terminal shows it (`String(escapingForDisplay:)`, what
/// messages and `Output` on a terminal print): whatever bytes a name
/// holds, the text holds no control character, C0, DEL or C1, that a
/// terminal would act on, and a name of printable UTF-8 is shown as it is.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let shown = String(escapingForDisplay: bytes)
  for scalar in shown.unicodeScalars {
    precondition(
      !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)),
      "a control character U+\(String(scalar.value, radix: 16)) reaches the terminal")
  }
  let printable = String(validating: bytes, as: UTF8.self).map {
    $0.unicodeScalars.allSatisfy { !($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
  }
  if printable == true {
    precondition(Array(shown.utf8) == bytes, "printable UTF-8 is changed")
  }
  return 0
}
