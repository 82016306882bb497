/// Builds one JSON object on one line, key by key, with byte-exact paths:
/// a path that is not valid UTF-8 gets a lossy string and, beside it, its
/// exact bytes in Base64.
struct JSONLine {
  private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
  private var first = true

  mutating func key(_ name: String) {
    if !first { bytes += Array(", ".utf8) }
    first = false
    appendString(name.utf8)
    bytes += Array(": ".utf8)
  }

  mutating func bool(_ name: String, _ value: Bool) {
    key(name)
    bytes += Array((value ? "true" : "false").utf8)
  }

  mutating func null(_ name: String) {
    key(name)
    bytes += Array("null".utf8)
  }

  mutating func strings(_ name: String, _ values: [String]) {
    key(name)
    bytes.append(UInt8(ascii: "["))
    for (index, value) in values.enumerated() {
      if index > 0 { bytes += Array(", ".utf8) }
      appendString(value.utf8)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  /// `"name": "..."`, and `"name_base64": "..."` when the bytes are not UTF-8.
  mutating func path(_ name: String, _ path: some Collection<UInt8>) {
    key(name)
    if let text = String(validating: path, as: UTF8.self) {
      appendString(text.utf8)
    } else {
      appendString(String(decoding: path, as: UTF8.self).utf8)
      key(name + "_base64")
      appendString(Base64.encode(path).utf8)
    }
  }

  mutating func finish() -> [UInt8] {
    bytes += Array("}\n".utf8)
    return bytes
  }

  private mutating func appendString(_ text: some Collection<UInt8>) {
    bytes.append(UInt8(ascii: "\""))
    for byte in text {
      switch byte {
      case UInt8(ascii: "\""): bytes += Array("\\\"".utf8)
      case UInt8(ascii: "\\"): bytes += Array("\\\\".utf8)
      case UInt8(ascii: "\n"): bytes += Array("\\n".utf8)
      case UInt8(ascii: "\r"): bytes += Array("\\r".utf8)
      case UInt8(ascii: "\t"): bytes += Array("\\t".utf8)
      case 0..<0x20, 0x7F:
        let hex = Array("0123456789abcdef".utf8)
        bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}

/// RFC 4648 Base64, with padding.
enum Base64 {
  static func encode(_ bytes: some Collection<UInt8>) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    let bytes = Array(bytes)
    var result: [UInt8] = []
    var index = 0
    while index < bytes.count {
      let chunk = bytes[index..<min(index + 3, bytes.count)]
      var value = 0
      for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
      for position in 0..<4 {
        if position <= chunk.count {
          result.append(alphabet[(value >> (18 - 6 * position)) & 0x3F])
        } else {
          result.append(UInt8(ascii: "="))
        }
      }
      index += 3
    }
    return String(decoding: result, as: UTF8.self)
  }
}
