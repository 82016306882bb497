import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The command line as bytes. Swift's `CommandLine.arguments` repairs bytes
/// that are not UTF-8, which would change a path; here every such argument
/// is handed to the parser as a placeholder and turned back into its exact
/// bytes where a path is read.
enum RawArguments {
  /// Starts a placeholder: a private-use character no real argument starts with.
  private static let marker = "\u{F8FF}skipbackup-argument-"

  /// The arguments after the program name, as the parser should see them.
  static let parserArguments: [String] = {
    (1..<Int(CommandLine.argc)).map { index in
      let bytes = UnsafeRawBufferPointer(
        start: CommandLine.unsafeArgv[index]!, count: cStringLength(CommandLine.unsafeArgv[index]!))
      // An argument that holds the marker anywhere goes through as a
      // placeholder too, so that every marker the parser sees is one made
      // here: a file named `x=<U+F8FF>skipbackup-argument-3` was taken for
      // argument 3.
      if let text = String(validating: bytes, as: UTF8.self), !text.contains(marker) {
        return text
      }
      // `--files-from=BYTES`: keep the option, replace the value.
      if let equals = optionValueStart(bytes) {
        return String(decoding: bytes[..<equals], as: UTF8.self) + "=" + marker + "\(index)"
      }
      return marker + "\(index)"
    }
  }()

  /// The path an argument names, byte for byte as it was given.
  static func path(_ argument: String) -> FilePath {
    // Text arguments, nearly all of them, go straight through: no search
    // unless the argument holds the marker's first byte.
    let text = argument.utf8
    guard let lead = marker.utf8.first, text.contains(lead),
      let (index, whole) = placeholder(in: text), index > 0, index < Int(CommandLine.argc)
    else { return FilePath(argument) }
    let raw = CommandLine.unsafeArgv[index]!
    let bytes = UnsafeRawBufferPointer(start: raw, count: cStringLength(raw))
    // The parser hands over the value of `--option=BYTES` alone.
    if whole, let equals = optionValueStart(bytes) {
      return FilePath(platformString: raw.advanced(by: equals + 1))
    }
    return FilePath(platformString: raw)
  }

  /// `text` (a message) with each placeholder in it shown as the argument
  /// it stands for, escaped as messages show bytes (`\xff`), where the
  /// parser or a check quoted a value that is not a path (`-m`,
  /// `--format`, `--for`): it said `'skipbackup-argument-3'`.
  static func displayed(_ text: String) -> String {
    let marker = Array(self.marker.utf8)
    let bytes = Array(text.utf8)
    guard bytes.firstRange(of: marker) != nil else { return text }
    var result: [UInt8] = []
    var index = 0
    while let found = bytes[index...].firstRange(of: marker) {
      result += bytes[index..<found.lowerBound]
      let digits = bytes[found.upperBound...].prefix { (0x30...0x39).contains($0) }
      index = found.upperBound + digits.count
      guard let argument = Int(String(decoding: digits, as: UTF8.self)), argument > 0,
        argument < Int(CommandLine.argc)
      else {
        result += Array("?".utf8)
        continue
      }
      let raw = CommandLine.unsafeArgv[argument]!
      let value = UnsafeRawBufferPointer(start: raw, count: cStringLength(raw))
      let shown = optionValueStart(value).map { value[($0 + 1)...] } ?? value[...]
      result += Array(String(escapingForDisplay: shown).utf8)
    }
    return String(decoding: result + bytes[index...], as: UTF8.self)
  }

  /// The exact bytes of an argument, which is not a path and so is not
  /// normalized as ``path(_:)`` does (a command's `src/` keeps its slash).
  static func bytes(_ argument: String) -> [UInt8] {
    let text = argument.utf8
    guard let lead = marker.utf8.first, text.contains(lead),
      let (index, _) = placeholder(in: text), index > 0, index < Int(CommandLine.argc)
    else { return Array(text) }
    let raw = CommandLine.unsafeArgv[index]!
    return Array(UnsafeRawBufferPointer(start: raw, count: cStringLength(raw)))
  }

  /// The argument index a placeholder names, and whether the placeholder is
  /// the whole of `text` (rather than the value after a `--name=`).
  private static func placeholder(in text: String.UTF8View) -> (Int, Bool)? {
    let marker = Array(self.marker.utf8)
    let bytes = Array(text)
    let start: Int
    if bytes.starts(with: marker) {
      start = 0
    } else if let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
      bytes[(equals + 1)...].starts(with: marker)
    {
      start = equals + 1
    } else {
      return nil
    }
    let digits = bytes[(start + marker.count)...]
    guard let index = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
    return (index, start == 0)
  }

  /// Where the `=` of a `--option=value` argument is, when the option is text.
  private static func optionValueStart(_ bytes: UnsafeRawBufferPointer) -> Int? {
    guard bytes.starts(with: "--".utf8), let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
      String(validating: bytes[..<equals], as: UTF8.self) != nil
    else { return nil }
    return equals
  }
}
