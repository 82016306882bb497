import Foundation
import SkipBackupCore
import SystemPackage

// Apple's note: "certain file operations can reset resource values, make sure
// you set an excluded file's resource values each time you save it". An
// atomic save replaces the file with a new inode, which has no attributes.
// These save and copy so that the file is never there without its mark: the
// new file is written, marked and synced before a rename puts it in place.

extension FilePath {
  /// Replaces the file at this path with `contents`, marked with
  /// `mechanism`, atomically: at no instant is the file there unmarked.
  ///
  /// The old file's permissions, owner (as far as allowed) and every
  /// extended attribute, POSIX ACLs included, carry over to the new one; an
  /// attribute that cannot be kept throws an error naming it, and nothing is
  /// replaced. A symbolic link is followed to the file it leads to (a link to
  /// nothing is refused); anything but a regular file is refused. A file
  /// another puts at the path between the save's look at it and its open of
  /// it for the attributes is refused too, and nothing is replaced. Other
  /// hard links to the old file keep the old contents. A killed save leaves
  /// at most a `.skipbackup-save-N`, which the next save there removes.
  ///
  ///     try FilePath("cache/thumbnails.db").writeExcludedFromBackup(bytes)
  public func writeExcludedFromBackup(
    _ contents: some Sequence<UInt8>,
    mechanism: MechanismSet = .resource
  ) throws(SkipBackupError) {
    let replacement = try ReplacementFile(replacing: self)
    let bytes = Array(contents)
    try bytes.withUnsafeBytes { bytes in
      Result { () throws(SkipBackupError) in try replacement.write(bytes) }
    }.get()
    try mechanism.mark(replacement.item)
    try replacement.commit()
  }

  /// Copies the regular file at this path to `destination` with its
  /// permissions and every extended attribute, so its marks come along; the
  /// destination is replaced atomically.
  ///
  /// The source is resolved once: anything but a regular file is refused at
  /// once (a FIFO never blocks it, a device is never opened), and the file
  /// looked at is the one read, whatever its path leads to by then.
  ///
  /// The corresponding C functions are `flistxattr(2)`, `fgetxattr(2)` and
  /// `fsetxattr(2)`, with libattr's `attr_copy_action(3)` for /etc/xattr.conf.
  public func copyKeepingMarks(to destination: FilePath) throws(SkipBackupError) {
    let replacement = try ReplacementFile(replacing: destination, keepingOldMetadata: false)
    try replacement.copy(from: self)
    try replacement.commit()
  }
}

extension Data {
  /// Writes the data to the file at `url` as `write(to:options: .atomic)`
  /// does, marked with `mechanism` before it takes the file's place.
  ///
  ///     try data.writeExcludedFromBackup(to: url)
  public func writeExcludedFromBackup(
    to url: URL, mechanism: MechanismSet = .resource
  ) throws(SkipBackupError) {
    try url.filePath.writeExcludedFromBackup(self, mechanism: mechanism)
  }
}

extension URL {
  /// Copies the file at this URL to `destination` with its extended
  /// attributes, so its marks come along.
  public func copyKeepingMarks(to destination: URL) throws(SkipBackupError) {
    try filePath.copyKeepingMarks(to: destination.filePath)
  }
}
