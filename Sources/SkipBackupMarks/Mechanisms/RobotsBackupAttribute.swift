import SkipBackupSystem

/// The freedesktop.org "Common Extended Attributes" mark, ``Mechanism/xdg``:
/// `user.xdg.robots.backup` set to `false`.
///
/// Only the exact value `false` is a mark (borg 2 reads it so); `true` says
/// the opposite and is left alone by ``Mechanism/clear(_:)``.
public enum RobotsBackupAttribute {
  /// `user.xdg.robots.backup`.
  public static let attributeName = AttributeName(nameBytes)
  /// What a mark writes: `false`.
  public static let value = Array("false".utf8)

  static let nameBytes: StaticString = "user.xdg.robots.backup"

  static func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    value.elementsEqual("false".utf8)
  }
}
