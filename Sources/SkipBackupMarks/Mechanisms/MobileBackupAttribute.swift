import SkipBackupSystem

/// iOS 5.0.1's mark, ``Mechanism/legacy``: the extended attribute
/// `com.apple.MobileBackup` holding one byte, 1 (QA1719, listing 3).
///
/// On Linux the attribute is `user.com.apple.MobileBackup`, the name that
/// `rsync -X` gives it when it copies from a Mac. It reads as a mark when it
/// is present and its first byte is not zero.
public enum MobileBackupAttribute {
  /// The attribute's Linux name (Mechanism.swift's table).
  public static let attributeName = Mechanism.legacy.attributeName!
  /// The bytes a mark writes.
  public static let value = Mechanism.legacy.markValue!
}
