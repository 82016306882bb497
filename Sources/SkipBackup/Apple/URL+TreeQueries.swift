import Foundation
import SkipBackupCore
import SystemPackage

extension MechanismSet {
  /// ``excludedItems(under:oneFileSystem:)`` of the file URL `root`. A URL
  /// that names no file is the iteration's one error.
  public func excludedItems(under root: URL, oneFileSystem: Bool = false) -> ExcludedItems {
    query(Result { () throws(SkipBackupError) in try root.filePath }, oneFileSystem)
  }

  /// ``statuses(under:oneFileSystem:)`` of the file URL `root`. A URL that
  /// names no file is the iteration's one error.
  public func statuses(under root: URL, oneFileSystem: Bool = false) -> ItemStatuses {
    query(Result { () throws(SkipBackupError) in try root.filePath }, oneFileSystem)
  }
}
