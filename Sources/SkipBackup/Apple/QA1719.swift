import Foundation
import SkipBackupCore
import SystemPackage

// Technical Q&A QA1719, "How do I prevent files from being backed up to
// iCloud and iTunes?", on Linux. Listings 1 and 2 set the resource value;
// listing 3 the iOS 5.0.1 attribute. As in Apple's sample, a failure is
// printed to standard error and the function returns false.

/// Marks the item at `path` with the `isExcludedFromBackup` resource value
/// (QA1719, listings 1 and 2); returns whether it worked.
@discardableResult
public func addSkipBackupAttributeToItem(atPath path: String) -> Bool {
  addSkipBackupAttributeToItem(path: FilePath(path), mechanism: .resource)
}

/// Marks the file or directory at `url` with the `isExcludedFromBackup`
/// resource value (QA1719, listings 1 and 2); returns whether it worked.
@discardableResult
public func addSkipBackupAttributeToItem(at url: URL) -> Bool {
  addSkipBackupAttributeToItem(at: url, mechanism: .resource)
}

/// Marks the item at `path` with `mechanism`: `.legacy` is QA1719's listing 3
/// (the `com.apple.MobileBackup` attribute of iOS 5.0.1).
@discardableResult
public func addSkipBackupAttributeToItem(
  atPath path: String, mechanism: MechanismSet
) -> Bool {
  addSkipBackupAttributeToItem(path: FilePath(path), mechanism: mechanism)
}

/// Marks the file or directory at `url` with `mechanism`.
@discardableResult
public func addSkipBackupAttributeToItem(
  at url: URL, mechanism: MechanismSet
) -> Bool {
  do {
    return addSkipBackupAttributeToItem(path: try url.filePath, mechanism: mechanism)
  } catch {
    reportSkipBackupFailure(name: url.lastPathComponent, error)
    return false
  }
}

private func addSkipBackupAttributeToItem(
  path: FilePath, mechanism: MechanismSet
) -> Bool {
  do {
    try mechanism.mark(FileItem(path: path))
    return true
  } catch {
    reportSkipBackupFailure(name: path.lastComponent?.description ?? path.description, error)
    return false
  }
}

/// Apple's sample prints "Error excluding NAME from backup ERROR".
private func reportSkipBackupFailure(name: String, _ error: SkipBackupError) {
  FileHandle.standardError.write(Data("Error excluding \(name) from backup \(error)\n".utf8))
}

/// How an app keeps data on the device but out of backups on one iOS version,
/// as QA1719's table has it.
public enum SkipBackupSupport: Hashable, Sendable {
  /// iOS 5.0 and earlier: nothing marks an item; keep the data in
  /// `Library/Caches`, which is not backed up (and may be purged).
  case cachesDirectoryOnly
  /// iOS 5.0.1: the `com.apple.MobileBackup` attribute (`Mechanism.legacy`).
  case mobileBackupAttribute
  /// iOS 5.1 and later: the `isExcludedFromBackup` resource value
  /// (`Mechanism.resource`).
  case excludedFromBackupResourceValue

  /// The mechanism to mark with, or `nil` for iOS 5.0 and earlier.
  public var mechanism: Mechanism? {
    switch self {
    case .cachesDirectoryOnly: nil
    case .mobileBackupAttribute: .legacy
    case .excludedFromBackupResourceValue: .resource
    }
  }

  /// What QA1719 says for `iOSVersion`, such as `"5.0.1"` or `"17.4"`; `nil`
  /// when the text is not a version.
  public init?(iOSVersion: String) {
    let parts = iOSVersion.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
    guard !parts.isEmpty, parts.count <= 3, parts.allSatisfy({ $0 != nil && $0! >= 0 }) else {
      return nil
    }
    let version = parts.map { $0! } + Array(repeating: 0, count: 3 - parts.count)
    if version.lexicographicallyPrecedes([5, 0, 1]) {
      self = .cachesDirectoryOnly
    } else if version.lexicographicallyPrecedes([5, 1, 0]) {
      self = .mobileBackupAttribute
    } else {
      self = .excludedFromBackupResourceValue
    }
  }
}
