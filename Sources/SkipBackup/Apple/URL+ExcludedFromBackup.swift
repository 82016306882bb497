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
  public func setBackupResourceValues(_ values: URLResourceValues) throws {
    var url = self
    try url.setResourceValues(values)
    if let excluded = values.isExcludedFromBackup {
      try setExcludedFromBackup(excluded)
    }
  }

  /// The URL's path, byte for byte, as the file system sees it.
  internal var filePath: FilePath {
    get throws(SkipBackupError) {
      guard isFileURL,
        let path = withUnsafeFileSystemRepresentation({ $0.map { FilePath(platformString: $0) } })
      else { throw SkipBackupError(refusing: .notAFileURL, path: FilePath(absoluteString)) }
      return path
    }
  }
}
