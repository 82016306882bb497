import SkipBackupSystem

/// The `isExcludedFromBackup` resource value of iOS 5.1 and later and macOS,
/// ``Mechanism/resource``, as it is kept on disk: the attribute
/// `com.apple.metadata:com_apple_backup_excludeItem`.
///
/// On Linux the attribute is `user.com.apple.metadata:com_apple_backup_excludeItem`.
/// Its value is the 61-byte binary property list of the string
/// `com.apple.backupd`, as a Mac writes it (and `tmutil addexclusion` for a
/// sticky exclusion). It reads as a mark whenever it is present, as borg does.
public enum BackupExcludeItemAttribute {
  /// The attribute's Linux name (Mechanism.swift's table).
  public static let attributeName = Mechanism.resource.attributeName!
  /// The bytes a mark writes.
  public static let value = Mechanism.resource.markValue!
}
