import SkipBackupCore
import SystemPackage

extension FilePath {
  /// Whether the item at this path carries a "do not back up" mark of its
  /// own, as `URLResourceValues.isExcludedFromBackup` reads on Apple's
  /// platforms.
  ///
  /// Any attribute mark counts: the iOS 5.1 resource value, iOS 5.0.1's
  /// `com.apple.MobileBackup`, and `user.xdg.robots.backup=false`. A mark on a
  /// directory above the item is not the item's own (as on Apple's platforms);
  /// `MechanismSet.status(of:followSymbolicLinks:)` tells about those. A
  /// symbolic link is followed: Linux keeps no user attributes on links.
  ///
  ///     let cache: FilePath = "/var/lib/app/cache"
  ///     try cache.setExcludedFromBackup(true)
  ///     try cache.isExcludedFromBackup  // true
  public var isExcludedFromBackup: Bool {
    get throws(SkipBackupError) {
      try MechanismSet.all.isMarked(FileItem(path: self))
    }
  }

  /// Marks the item at this path with the iOS 5.1 resource value, or with
  /// `false` removes every attribute mark it carries.
  ///
  /// Marking an item that is already marked writes nothing.
  public func setExcludedFromBackup(_ excluded: Bool) throws(SkipBackupError) {
    let item = FileItem(path: self)
    if excluded {
      try MechanismSet.resource.mark(item)
    } else {
      try MechanismSet.all.clear(item)
    }
  }
}
