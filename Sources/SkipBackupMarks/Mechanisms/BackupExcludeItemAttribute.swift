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
  /// `user.com.apple.metadata:com_apple_backup_excludeItem`.
  public static let attributeName = AttributeName(nameBytes)

  static let nameBytes: StaticString = "user.com.apple.metadata:com_apple_backup_excludeItem"

  /// `bplist00`, the string `com.apple.backupd`, and the trailer: 61 bytes.
  public static let value: [UInt8] = [
    0x62, 0x70, 0x6c, 0x69, 0x73, 0x74, 0x30, 0x30,  // "bplist00"
    0x5f, 0x10, 0x11,  // an ASCII string whose length, 17, follows as an int
    0x63, 0x6f, 0x6d, 0x2e, 0x61, 0x70, 0x70, 0x6c, 0x65,  // "com.apple"
    0x2e, 0x62, 0x61, 0x63, 0x6b, 0x75, 0x70, 0x64,  // ".backupd"
    0x08,  // the offset table: the object starts at byte 8
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // trailer: unused
    0x01, 0x01,  // offset size 1, object reference size 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,  // one object
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // the top object is object 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1c,  // the offset table is at byte 28
  ]
}
