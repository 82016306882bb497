/// Builds one JSON object on one line, key by key, with byte-exact paths:
/// a path that is not valid UTF-8 gets a lossy string and, beside it, its
/// exact bytes in Base64.
package struct JSONLine {
  package private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
  private var first = true

  package init() {}

  package mutating func key(_ name: String) {
    if !first { bytes.append(contentsOf: ", ".utf8) }
    first = false
    appendString(name.utf8)
    bytes.append(contentsOf: ": ".utf8)
  }

  package mutating func bool(_ name: String, _ value: Bool) {
    key(name)
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
  }

  package mutating func null(_ name: String) {
    key(name)
    bytes.append(contentsOf: "null".utf8)
  }

  package mutating func strings(_ name: String, _ values: [String]) {
    key(name)
    bytes.append(UInt8(ascii: "["))
    for (index, value) in values.enumerated() {
      if index > 0 { bytes.append(contentsOf: ", ".utf8) }
      appendString(value.utf8)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  /// `"name": "..."`, and `"name_base64": "..."` (or `base64Key`) when the
  /// bytes are not UTF-8.
  package mutating func path(
    _ name: String, _ path: some Collection<UInt8>, base64Key: String? = nil
  ) {
    key(name)
    if path.allSatisfy({ $0 < 0x80 }) || String(validating: path, as: UTF8.self) != nil {
      appendString(path)
    } else {
      appendString(String(decoding: path, as: UTF8.self).utf8)
      key(base64Key ?? name + "_base64")
      appendString(Base64.encode(path).utf8)
    }
  }

  /// What status and explain say of an item first: `path`, `excluded`,
  /// `marks` and `inherited_from` (`null` when nothing above marks it).
  package mutating func exclusion(
    path: some Collection<UInt8>, excluded: Bool, marks: [String], inheritedFrom: [UInt8]?
  ) {
    self.path("path", path)
    bool("excluded", excluded)
    strings("marks", marks)
    if let inheritedFrom {
      self.path("inherited_from", inheritedFrom)
    } else {
      null("inherited_from")
    }
  }

  package mutating func string(_ name: String, _ value: String) {
    key(name)
    appendString(value.utf8)
  }

  package mutating func number(_ name: String, _ value: Int64) {
    key(name)
    bytes.append(contentsOf: String(value).utf8)
  }

  /// A value already written as JSON: an object or a list built on its own.
  package mutating func raw(_ json: [UInt8]) {
    bytes.append(contentsOf: json)
  }

  /// The object, closed, for use inside another one.
  package mutating func closed() -> [UInt8] {
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }

  package mutating func finish() -> [UInt8] {
    bytes.append(contentsOf: "}\n".utf8)
    return bytes
  }

  /// Starts a new object in the same storage, to spare an allocation per line.
  package mutating func reset() {
    bytes.removeAll(keepingCapacity: true)
    bytes.append(UInt8(ascii: "{"))
    first = true
  }

  private mutating func appendString(_ text: some Collection<UInt8>) {
    bytes.append(UInt8(ascii: "\""))
    let copied: Void? = text.withContiguousStorageIfAvailable { appendEscaped($0) }
    if copied == nil { Array(text).withUnsafeBufferPointer { appendEscaped($0) } }
    bytes.append(UInt8(ascii: "\""))
  }

  /// Appends `text` escaped for a JSON string: runs of plain bytes at once,
  /// quotes, backslashes and control characters escaped one by one.
  private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
    var start = 0
    for index in text.indices {
      let byte = text[index]
      guard byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
      else { continue }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
      start = index + 1
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
      case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
      case UInt8(ascii: "\n"): bytes.append(contentsOf: "\\n".utf8)
      case UInt8(ascii: "\r"): bytes.append(contentsOf: "\\r".utf8)
      case UInt8(ascii: "\t"): bytes.append(contentsOf: "\\t".utf8)
      default:
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: "\\u00".utf8)
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0xF)])
      }
    }
    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
  }
}

/// RFC 4648 Base64, with padding.
package enum Base64 {
  package static func encode(_ bytes: some Collection<UInt8>) -> String {
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
