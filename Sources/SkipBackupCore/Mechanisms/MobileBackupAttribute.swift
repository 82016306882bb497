/// iOS 5.0.1's mark: the extended attribute `com.apple.MobileBackup` holding
/// one byte, 1 (QA1719, listing 3). Short name `legacy`.
///
/// On Linux the attribute is `user.com.apple.MobileBackup`, the name that
/// `rsync -X` gives it when it copies from a Mac. It reads as a mark when it
/// is present and its first byte is not zero.
public struct MobileBackupAttribute: ExtendedAttributeMechanism {
  public init() {}

  public var name: String { "legacy" }
  public var attributeName: AttributeName { Self.attributeName }
  public var markValue: [UInt8] { [1] }

  public func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    value.first.map { $0 != 0 } ?? false
  }

  /// `user.com.apple.MobileBackup`.
  public static let attributeName: AttributeName = "user.com.apple.MobileBackup"
}

extension BackupExclusionMechanism where Self == MobileBackupAttribute {
  /// iOS 5.0.1's `com.apple.MobileBackup` attribute.
  public static var legacy: MobileBackupAttribute { MobileBackupAttribute() }
}
