/// The freedesktop.org "Common Extended Attributes" mark:
/// `user.xdg.robots.backup` set to `false`. Short name `xdg`.
///
/// Only the exact value `false` is a mark (borg 2 reads it so); `true` says
/// the opposite and is left alone by ``clear(_:)``.
public struct RobotsBackupAttribute: ExtendedAttributeMechanism {
  public init() {}

  public var name: String { "xdg" }
  public var attributeName: AttributeName { Self.attributeName }
  public var markValue: [UInt8] { Array("false".utf8) }

  public func isMark(_ value: UnsafeRawBufferPointer) -> Bool {
    value.elementsEqual("false".utf8)
  }

  /// `user.xdg.robots.backup`.
  public static let attributeName: AttributeName = "user.xdg.robots.backup"
}

extension BackupExclusionMechanism where Self == RobotsBackupAttribute {
  /// The freedesktop `user.xdg.robots.backup` attribute.
  public static var xdg: RobotsBackupAttribute { RobotsBackupAttribute() }
}
