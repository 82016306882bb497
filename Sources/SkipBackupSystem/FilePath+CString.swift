import SystemPackage

extension FilePath {
  /// Calls `body` with the path as a C string.
  ///
  /// swift-system's `withPlatformString` is generic and not specialized in
  /// this module, so its result type is made at run time; for a result such
  /// as `Result<Int, Errno>` that means checking that `Errno` is an `Error`,
  /// which in a static binary searches every conformance record and costs
  /// more than a whole `check` otherwise does. Here its result is `Void`.
  @inlinable @inline(__always)
  package func withCString<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
    var result: R?
    withPlatformString { result = body($0) }
    return result!
  }
}
