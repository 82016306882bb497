import SkipBackupSystem

/// iOS 5.0.1's mark, ``Mechanism/legacy``: the extended attribute
/// `com.apple.MobileBackup` holding one byte, 1 (QA1719, listing 3).
///
/// On Linux the attribute is `user.com.apple.MobileBackup`, the name that
/// `rsync -X` gives it when it copies from a Mac. It reads as a mark when it
/// is present and its first byte is not zero.
public enum MobileBackupAttribute {
  /// `user.com.apple.MobileBackup`.
  public static let attributeName = AttributeName(nameBytes)
  /// What a mark writes: one byte, 1.
  public static let value: [UInt8] = [1]

  static let nameBytes: StaticString = "user.com.apple.MobileBackup"

  static func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    value.first.map { $0 != 0 } ?? false
  }
}
