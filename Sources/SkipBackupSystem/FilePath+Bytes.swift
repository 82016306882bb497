import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FilePath {
  /// The path with exactly these bytes.
  package init(bytes: [UInt8]) {
    let characters = bytes.map { CChar(bitPattern: $0) } + [0]
    self = characters.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
  }

  /// The path's bytes, without a terminator.
  package var bytes: [UInt8] {
    withPlatformString { pointer in
      Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
  }

  /// This path with `relative` (bytes, no leading slash) below it.
  package func appending(bytes relative: [UInt8]) -> FilePath {
    guard !relative.isEmpty else { return self }
    var whole = self.bytes
    if whole.last != UInt8(ascii: "/") { whole.append(UInt8(ascii: "/")) }
    return FilePath(bytes: whole + relative)
  }
}
