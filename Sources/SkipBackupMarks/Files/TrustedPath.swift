import SkipBackupSystem

import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The directory that holds a path's last component, opened the way a
/// write that root may make must be: one component at a time, each from
/// the directory before by descriptor (`openat2` with
/// ``ResolveFlags/noLinks``), through directories that only root or the
/// caller own. This is systemd's rule against unsafe path transitions
/// (`chase()` with `CHASE_SAFE`, systemd/src/basic/chase.c): a directory
/// another user owns is one whose entries that user can rename, replace
/// with links, or `chmod` back to writable at any time, so whatever is
/// found below it is the other user's choice, however its mode looks
/// now. A symbolic link on the way is followed only where neither group
/// nor others may write the directory that holds it and root or the
/// caller owns it (/dev/fd, /proc/self): only they can have put it there.
package struct TrustedPath: ~Copyable {
  /// The directory that holds the last component, open (`O_PATH`).
  package let directory: Descriptor
  /// The last component.
  package let name: FilePath

  /// How many symbolic links the walk follows, as the kernel's `ELOOP`
  /// limit (`MAXSYMLINKS`, 40).
  private static let mostLinks = 40

  /// Opens the directory that holds `path`'s last component; a relative
  /// `path` from the working directory, which is then on the way too.
  package init(parentOf path: FilePath) throws(SkipBackupError) {
    guard let last = path.lastComponent, last.kind == .regular else {
      throw SkipBackupError(refusing: .namesNoFile, path: path)
    }
    let user = system_geteuid()
    var directory = try Descriptor.open(
      path.isAbsolute ? "/" : ".", [.pathOnly, .directory], resolve: .noLinks)
    try Self.refuseAnothersDirectory(directory, user: user, shown: directory.path)
    // The components left to walk, nearest first; a link's target's are
    // put in front of the rest.
    var rest = Array(path.removingLastComponent().components.reversed())
    var shown = path.isAbsolute ? FilePath("/") : FilePath(".")
    var links = 0
    while let component = rest.popLast() {
      let name = FilePath(root: nil, [component])
      let next = shown.appending(component)
      do {
        let opened = try directory.open(name, [.pathOnly, .directory], resolve: .noLinks)
        try Self.refuseAnothersDirectory(opened, user: user, shown: next)
        directory = opened
        shown = next
      } catch let error where error.errno == .tooManySymbolicLinkLevels {
        // A link: followed only where only root or this user can have put it.
        guard Self.onlyOwnerMayWrite(try directory.status(), user: user) else {
          throw SkipBackupError(
            refusing: .symbolicLinkOnTheWay, path: next, fileType: .symbolicLink)
        }
        links += 1
        guard links <= Self.mostLinks else {
          throw SkipBackupError(.openat2, .tooManySymbolicLinkLevels, path: next)
        }
        let target = try directory.linkTarget(of: name)
        rest.append(contentsOf: target.components.reversed())
        if target.isAbsolute {
          directory = try Descriptor.open("/", [.pathOnly, .directory], resolve: .noLinks)
          shown = "/"
        }
      }
    }
    self.directory = directory
    self.name = FilePath(root: nil, [last])
  }

  /// Whether a symbolic link in `directory` was put there by root or
  /// `user`: the directory is theirs, and neither group nor others may
  /// write it.
  package static func onlyOwnerMayWrite(_ directory: stat, user: uid_t) -> Bool {
    (directory.st_uid == 0 || directory.st_uid == user)
      && directory.st_mode & (S_IWGRP | S_IWOTH) == 0
  }

  private static func refuseAnothersDirectory(
    _ directory: borrowing Descriptor, user: uid_t, shown: FilePath
  ) throws(SkipBackupError) {
    let owner = try directory.status().st_uid
    guard owner != 0, owner != user else { return }
    throw SkipBackupError(refusing: .directoryOfAnotherOnTheWay, path: shown)
  }
}
