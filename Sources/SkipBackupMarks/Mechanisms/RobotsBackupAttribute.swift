import SkipBackupSystem

/// The freedesktop.org "Common Extended Attributes" mark, ``Mechanism/xdg``:
/// `user.xdg.robots.backup` set to `false`.
///
/// Only the exact value `false` is a mark (borg 2 reads it so); `true` says
/// the opposite and is left alone by ``Mechanism/clear(_:)``.
public enum RobotsBackupAttribute {
  /// The attribute's Linux name (Mechanism.swift's table).
  public static let attributeName = Mechanism.xdg.attributeName!
  /// The bytes a mark writes.
  public static let value = Mechanism.xdg.markValue!
}
