import Foundation
import SkipBackupCore
import SystemPackage

// Foundation on Linux accepts `URLResourceValues.isExcludedFromBackup`,
// stores nothing and reports no error. These fill that gap, with the same
// names as the resource value, so that code written for iOS ports with one
// line changed.

extension URL {
  /// Whether the file or directory at this URL carries a "do not back up"
  /// mark of its own, as `resourceValues(forKeys: [.isExcludedFromBackupKey])`
  /// reads on Apple's platforms.
  ///
  /// Any attribute mark counts: the iOS 5.1 resource value, iOS 5.0.1's
  /// `com.apple.MobileBackup`, and `user.xdg.robots.backup=false`. A symbolic
  /// link is followed: Linux keeps no user attributes on links.
  public var isExcludedFromBackup: Bool {
    get throws(SkipBackupError) {
      try filePath.isExcludedFromBackup
    }
  }

  /// Sets the `isExcludedFromBackup` resource value: `true` writes the iOS 5.1
  /// mark, `false` removes every attribute mark.
  ///
  ///     try url.setExcludedFromBackup(true)
  public func setExcludedFromBackup(_ excluded: Bool) throws(SkipBackupError) {
    try filePath.setExcludedFromBackup(excluded)
  }

  /// Sets `values` as `setResourceValues(_:)` does, and also applies
  /// `values.isExcludedFromBackup`, the one key Foundation on Linux ignores.
  ///
  ///     var values = URLResourceValues()
  ///     values.isExcludedFromBackup = true
  ///     try url.setBackupResourceValues(values)  // was: try url.setResourceValues(values)
  ///
  /// `mutating`, as `setResourceValues(_:)` is (it updates the URL's cached
  /// values): ported code already holds the URL in a `var`, and keeps it
  /// there without a "never mutated" warning.
  public mutating func setBackupResourceValues(_ values: URLResourceValues) throws {
    try setResourceValues(values)
    if let excluded = values.isExcludedFromBackup {
      try setExcludedFromBackup(excluded)
    }
  }

  /// The resource values for `keys`, as `resourceValues(forKeys:)` returns
  /// them, with `isExcludedFromBackup` filled in when `keys` holds
  /// `.isExcludedFromBackupKey`: Foundation on Linux leaves it `nil`.
  ///
  ///     let values = try url.backupResourceValues(forKeys: [.isExcludedFromBackupKey])
  ///     values.isExcludedFromBackup  // true or false, never nil
  ///     // was: try url.resourceValues(forKeys: [.isExcludedFromBackupKey])
  ///
  /// As on Apple's platforms, the value is the item's own mark: an item in
  /// an excluded directory reads `false` (`MechanismSet.status(of:)`
  /// tells about the directories above).
  public func backupResourceValues(forKeys keys: Set<URLResourceKey>) throws -> URLResourceValues {
    var values = try resourceValues(forKeys: keys.subtracting([.isExcludedFromBackupKey]))
    if keys.contains(.isExcludedFromBackupKey) {
      values.isExcludedFromBackup = try isExcludedFromBackup
    }
    return values
  }

  /// The URL's path, byte for byte, as the file system sees it.
  internal var filePath: FilePath {
    get throws(SkipBackupError) {
      guard isFileURL,
        let path = withUnsafeFileSystemRepresentation({ $0.map { FilePath(platformString: $0) } })
      else {
        throw SkipBackupError(
          refusing: .notAFileURL(url: absoluteString), path: FilePath(absoluteString))
      }
      return path
    }
  }
}
