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
}
