import SystemPackage

/// The name of an extended attribute, byte for byte.
///
/// Linux puts every name in a namespace (`user.`, `trusted.`, `security.`,
/// `system.`); code without privileges may only use `user.`. Names are bytes,
/// not text: ``init(bytes:)`` accepts any sequence without a NUL.
public struct AttributeName: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// The bytes and a terminating NUL, ready for the C calls.
  @usableFromInline internal let cString: [CChar]

  /// A name from text, encoded as UTF-8.
  ///
  /// - Precondition: `name` is not empty and has no NUL character.
  public init(_ name: String) {
    guard let made = Self(bytes: name.utf8) else {
      preconditionFailure("an attribute name is not empty and has no NUL: \(name.debugDescription)")
    }
    self = made
  }

  public init(stringLiteral name: String) {
    self.init(name)
  }

  /// A name from its exact bytes; `nil` when they are empty or hold a NUL.
  public init?(bytes: some Sequence<UInt8>) {
    var cString = bytes.map { CChar(bitPattern: $0) }
    guard !cString.isEmpty, !cString.contains(0) else { return nil }
    cString.append(0)
    self.cString = cString
  }

  /// The name's bytes, without a terminator.
  public var bytes: [UInt8] {
    cString.dropLast().map { UInt8(bitPattern: $0) }
  }

  /// The namespaces Linux knows.
  public enum Namespace: String, Sendable, CaseIterable {
    case user, trusted, security, system
  }

  /// The namespace the name is in, or `nil` when it is in none Linux knows.
  public var namespace: Namespace? {
    let bytes = self.bytes
    return Namespace.allCases.first { namespace in
      let prefix = Array((namespace.rawValue + ".").utf8)
      return bytes.count > prefix.count && bytes.starts(with: prefix)
    }
  }

  public var description: String {
    String(escapingForDisplay: bytes)
  }

  /// Calls `body` with the name as a C string. Inlinable, as every
  /// generic the layers above call on a hot path: across a module's edge a
  /// generic that is not is called unspecialized, its types made at run
  /// time (swift_getGenericMetadata is then 17 % of `list`'s instructions,
  /// docs/performance.md).
  @inlinable @inline(__always)
  package func withCString<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
    cString.withUnsafeBufferPointer { body($0.baseAddress!) }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
