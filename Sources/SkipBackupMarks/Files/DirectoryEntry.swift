import SkipBackupSystem

import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The directory that holds a path, open, and one look at the path's last
/// component in it, not following a link: what a save or `export -o`
/// decides on. Everything after the look is done relative to the same
/// descriptor, so that what was judged is what is written: a look and an
/// open by path each resolve the path again, and another user who swaps a
/// link in and out between them (in /tmp, say) has root write the file the
/// link names. Another user's item in a sticky directory others may write
/// is refused at the look (``SharedDirectory``).
package struct DirectoryEntry: ~Copyable {
  /// The path as given, for messages.
  package let path: FilePath
  /// The directory, open for reading.
  package let opened: Descriptor
  /// Its descriptor number, for the calls made relative to it.
  package var directory: CInt { opened.rawValue }
  /// The last component of `path`.
  package let name: FilePath
  /// The directory, as `fstat(2)` gave it.
  package let directoryStatus: stat
  /// What was at `name`, as `fstatat(2)` gave it without following a
  /// link, or `nil` when there was nothing.
  package let item: stat?

  /// Opens the directory that holds `path` and looks at `path`'s last
  /// component there once. A path with no last component (`/`) names no
  /// file.
  package init(_ path: FilePath) throws(SkipBackupError) {
    let parent = path.removingLastComponent().isEmpty ? "." : path.removingLastComponent()
    guard let last = path.lastComponent else {
      throw SkipBackupError(refusing: .namesNoFile, path: path)
    }
    try self.init(
      path, in: try Descriptor.open(parent, [.readOnly, .directory]),
      name: FilePath(root: nil, [last]))
  }

  /// Opens the directory that holds `path` by ``TrustedPath`` (only
  /// through directories root or the caller own, and links only they
  /// can have put there) and looks at `path`'s last component there once.
  package init(trusting path: FilePath) throws(SkipBackupError) {
    let trusted = try TrustedPath(parentOf: path)
    try self.init(
      path, in: try trusted.directory.open(".", [.readOnly, .directory]), name: trusted.name)
  }

  private init(
    _ path: FilePath, in directory: consuming Descriptor, name: FilePath
  ) throws(SkipBackupError) {
    let directoryStatus = try directory.status()
    let item = try Self.look(at: name, in: directory, path: path)
    if let item { try SharedDirectory.refuseForeign(item, in: directoryStatus, path: path) }
    self.path = path
    self.opened = directory
    self.name = name
    self.directoryStatus = directoryStatus
    self.item = item
  }

  /// The type of what was at the name, or `nil` when there was nothing.
  package var type: FileType? { item.map { FileType(rawValue: $0.st_mode & S_IFMT) } }

  /// Whether the directory is sticky and others may write it.
  package var isShared: Bool { SharedDirectory.isShared(directoryStatus) }

  /// Whether only root or this user can have put a link at the name: the
  /// directory is theirs, and neither its group nor others may write it
  /// (/dev; /proc/self/fd, this user's own, mode 0500). A directory
  /// another user owns is not, whatever its mode: its owner may `chmod`
  /// it writable, plant a link and `chmod` it back.
  package var onlyOwnerMayWrite: Bool {
    TrustedPath.onlyOwnerMayWrite(directoryStatus, user: system_geteuid())
  }

  /// What is at the name now, looked at again; another user's item in a
  /// sticky directory others may write is refused, as at the first look.
  package func lookAgain() throws(SkipBackupError) -> stat? {
    let item = try Self.look(at: name, in: opened, path: path)
    if let item { try SharedDirectory.refuseForeign(item, in: directoryStatus, path: path) }
    return item
  }

  /// The file a symbolic link at the name leads to, as the kernel follows
  /// it (an `O_PATH` open relative to the directory, then
  /// `/proc/self/fd/N` says where it led), so that its own protections
  /// apply on the way; a link to nothing, or in a loop, is refused.
  package func linkTarget() throws(SkipBackupError) -> FilePath {
    let target: Descriptor
    do throws(SkipBackupError) {
      target = try opened.open(name, .pathOnly, reporting: path)
    } catch let error where error.isNoSuchFile {
      throw SkipBackupError(refusing: .danglingSymbolicLink, path: path, fileType: .symbolicLink)
    } catch {
      var failure = error
      failure.fileType = .symbolicLink
      throw failure
    }
    return try Descriptor.linkTarget(
      at: FilePath("/proc/self/fd/\(target.rawValue)"), reporting: path)
  }

  private static func look(
    at name: FilePath, in directory: borrowing Descriptor, path: FilePath
  ) throws(SkipBackupError) -> stat? {
    do throws(SkipBackupError) {
      return try directory.status(of: name, reporting: path)
    } catch let error where error.isNoSuchFile {
      return nil
    }
  }
}
