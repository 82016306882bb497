import SkipBackupSystem
import CLinux
import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A new file that takes the place of the file at a path in one rename:
/// written, marked and synced while no one can see it, so that there is no
/// instant at which the path holds the file without its mark.
///
/// Apple's note on saving (seed 001): an atomic save replaces the file with
/// a new inode, which has none of the old one's attributes. Here the new
/// inode gets them before it is visible: every extended attribute of the old
/// file, POSIX ACLs included (`system.posix_acl_*`, which libattr's default
/// copy leaves out; only what /etc/xattr.conf marks "skip" is passed over),
/// its permissions, its owner as far as allowed, and then the mark. An
/// attribute that cannot be read or written ends the save with an error
/// naming it, before anything is replaced.
///
/// The directory is opened once and the name looked at once
/// (``DirectoryEntry``); the file is made and put in place relative to
/// that descriptor. A name that was free at the look is taken with
/// `link(2)`, which fails rather than replace what appeared there since.
///
/// Kills: where the filesystem has `O_TMPFILE`, the file has no name until
/// the instant before the rename; elsewhere it has one from the start. That
/// name is `.skipbackup-save-N` (N the first free number), and the file is
/// held under an exclusive `flock(2)` for as long as the save runs. The
/// kernel drops the lock when the process dies, so a name whose file can be
/// locked is a dead save's leftover, and the next save in that directory
/// removes it; a locked one is a save in progress and is left alone.
package final class ReplacementFile {
  /// The file being written; its mark is set through this item.
  package let item: FileItem
  /// The directory the file goes into and the look at its name there: the
  /// new file is made, named and renamed relative to this one descriptor.
  private let entry: DirectoryEntry
  private var directory: CInt { entry.directory }
  private var name: FilePath { entry.name }
  /// The new file, open for writing.
  package let descriptor: CInt
  /// The hidden name the new file has, once it has one.
  private var stagedName: FilePath?
  /// Whether a file was at the name at the look, to be replaced; if not,
  /// the new file takes the name only while it is still free.
  private let replacesAFile: Bool
  private var committed = false

  /// Prepares to replace the file at `path`. A symbolic link is followed to
  /// its target, which must exist; what is replaced must be a regular file.
  /// With `keepingOldMetadata`, an existing file lends the new one its
  /// permissions, owner and attributes; a new file gets `permissions`, less
  /// the umask.
  package convenience init(
    replacing path: FilePath, keepingOldMetadata: Bool = true, permissions: mode_t = 0o666
  ) throws(SkipBackupError) {
    var entry = try DirectoryEntry(path)
    if entry.type == .symbolicLink {
      // The link was looked at once and not refused: in a sticky directory
      // only its owner, the directory's or root can take it away now.
      entry = try DirectoryEntry(try entry.linkTarget())
    }
    try self.init(
      entry, keepingOldMetadata: keepingOldMetadata, permissions: permissions, reportedAs: path)
  }

  /// Prepares to replace what `entry` looked at: a regular file or
  /// nothing. Messages name `path`.
  package init(
    _ entry: consuming DirectoryEntry, keepingOldMetadata: Bool = true,
    permissions: mode_t = 0o666, reportedAs path: FilePath
  ) throws(SkipBackupError) {
    if let type = entry.type, type != .regular {
      throw SkipBackupError(refusing: .notARegularFile, path: path, fileType: type)
    }
    let old = entry.item
    let keepsOld = old != nil && keepingOldMetadata
    let mode = keepsOld ? old!.st_mode & 0o7777 : permissions
    let directory = entry.directory
    let name = entry.name

    let created = try Self.create(in: directory, mode: mode, path: path)
    self.entry = entry
    self.replacesAFile = old != nil
    self.descriptor = created.descriptor
    self.stagedName = created.name
    self.item = FileItem(descriptor: FileDescriptor(rawValue: descriptor), displayPath: path)

    if let old, keepsOld {
      // As cp -p does, as far as allowed: root may give the file back to its owner.
      _ = system_fchown(descriptor, old.st_uid, old.st_gid)
      _ = system_fchmod(descriptor, mode)
      let opened = name.withCString { name in
        valueOrErrno {
          system_openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        }
      }
      if case .success(let oldDescriptor) = opened {
        defer { _ = system_close(oldDescriptor) }
        try copyAttributes(
          from: FileItem(descriptor: FileDescriptor(rawValue: oldDescriptor), displayPath: path))
      } else {
        // Not readable by this user: its attributes are still listed through
        // the directory, and one that cannot be read fails the save by name.
        try copyAttributes(
          from: FileItem(name: name, in: FileDescriptor(rawValue: directory), displayPath: path))
      }
    } else if created.name != nil {
      _ = system_fchmod(descriptor, mode & ~currentUmask())
    }
  }

  /// Fills the new file from the regular file at `source`: its bytes, its
  /// permissions and every extended attribute, marks and ACLs among them.
  /// Anything but a regular file is refused before it is opened for reading,
  /// so that a FIFO cannot block the copy.
  package func copy(from source: FilePath) throws(SkipBackupError) {
    let sourceItem = FileItem(path: source)
    let type = FileType(rawValue: try sourceItem.status().st_mode & S_IFMT)
    guard type == .regular else {
      throw SkipBackupError(refusing: .notARegularFile, path: source, fileType: type)
    }
    // O_NONBLOCK: should a FIFO be swapped in after the check, opening it does not wait.
    let input = try source.withCString { source in
      valueOrErrno {
        system_openat(CLINUX_AT_FDCWD, source, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0)
      }
    }.get(.openat, sourceItem)
    defer { _ = system_close(input) }
    var status = stat()
    _ = try valueOrErrno { system_fstat(input, &status) }.get(.fstat, sourceItem)
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw SkipBackupError(
        refusing: .notARegularFile, path: source,
        fileType: FileType(rawValue: status.st_mode & S_IFMT))
    }
    _ = system_fchmod(descriptor, status.st_mode & 0o7777)
    try copyAttributes(
      from: FileItem(descriptor: FileDescriptor(rawValue: input), displayPath: source))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let count = try valueOrErrno { system_read(input, buffer.baseAddress, buffer.count) }
        .get(.read, sourceItem)
      if count == 0 { return }
      try write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }
  }

  /// Copies every extended attribute of `source` to the new file, ACLs
  /// included; only those /etc/xattr.conf marks "skip" are passed over.
  /// One that cannot be read or written throws an error that names it; an
  /// /etc/xattr.conf that is there but cannot be read or parsed throws one
  /// that names it, and nothing is replaced: which attributes to skip is
  /// then unknown (libattr would copy them all).
  ///
  /// The corresponding C function is libattr's `attr_copy_action(3)`, for
  /// /etc/xattr.conf; the copy itself is `flistxattr`, `fgetxattr` and
  /// `fsetxattr`, because `attr_copy_fd(3)` cannot say which attribute it lost.
  private func copyAttributes(from source: FileItem) throws(SkipBackupError) {
    let from = ExtendedAttributes(of: source)
    do {
      try from.copy(to: ExtendedAttributes(of: item)) { attribute throws(SkipBackupError) in
        try attribute.withCString { name in valueOrErrno { system_attr_copy_action(name) } }
          .get(.attrCopyAction, Self.attributeConfiguration) == ATTR_ACTION_SKIP
      }
    } catch  where error.call == .attrCopyAction {
      throw error
    } catch {
      throw Self.notKept(error)
    }
  }

  /// Where libattr reads which attributes a copy passes over.
  private static let attributeConfiguration: FilePath = "/etc/xattr.conf"

  /// The refusal that names the attribute a failed read or write would lose.
  private static func notKept(_ error: SkipBackupError) -> SkipBackupError {
    guard case .failed(let call, let errno) = error.cause else { return error }
    var refusal = SkipBackupError(refusing: .attributeNotKept(call, errno), path: error.path)
    refusal.attribute = error.attribute
    return refusal
  }

  /// Appends `bytes` to the new file.
  package func write(_ bytes: UnsafeRawBufferPointer) throws(SkipBackupError) {
    _ = try OutputDescriptor.writeAll(bytes, to: descriptor).get(.write, item)
  }

  /// Syncs the new file and puts it in place: renamed over the file that
  /// was there at the look, or, where there was none, linked to the name,
  /// which fails rather than replace what appeared there since; then
  /// syncs the directory, so that the name survives a crash.
  package func commit() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsync(descriptor) }.get(.fsync, item)
    if replacesAFile {
      try rename()
    } else {
      try link()
    }
    committed = true
    _ = system_fsync(directory)
  }

  /// Gives the new file the name that was free at the look. What took the
  /// name since is judged as the look would have judged it: another user's
  /// item in a sticky directory is refused, anything but a regular file
  /// too (a link is never followed), and a regular file is replaced.
  private func link() throws(SkipBackupError) {
    let directory = directory
    let linked: Result<Void, Errno>
    if let stagedName {
      linked = stagedName.withCString { staged in
        name.withCString { name in
          valueOrErrno { system_linkat(directory, staged, directory, name, 0) }.map { _ in () }
        }
      }
    } else {
      linked = UnnamedFile.link(descriptor, in: directory, as: name)
    }
    switch linked {
    case .success:
      if let stagedName {
        _ = stagedName.withCString { system_unlinkat(directory, $0, 0) }
        self.stagedName = nil
      }
    case .failure(.fileExists):
      if let now = try entry.lookAgain(), now.st_mode & S_IFMT != S_IFREG {
        throw SkipBackupError(
          refusing: .notARegularFile, path: item.displayPath,
          fileType: FileType(rawValue: now.st_mode & S_IFMT))
      }
      try rename()
    // A filesystem without hard links (vfat, exfat) has no symbolic links
    // either, nor owners to tell apart: the rename is all there is.
    case .failure(.notPermitted) where stagedName != nil,
      .failure(.notSupported) where stagedName != nil:
      try rename()
    case .failure(let errno):
      throw SkipBackupError(.linkat, errno, path: item.displayPath)
    }
  }

  /// Renames the new file over whatever is at the name: rename(2) replaces
  /// the name itself, never what a link there leads to.
  private func rename() throws(SkipBackupError) {
    // A dead save's leftover is reaped by name only while it is unlocked, so
    // the name is ours; should a racing reaper still have taken it, link again.
    for _ in 0..<3 {
      if stagedName == nil {
        stagedName = try Self.link(descriptor, in: directory, path: item.displayPath)
      }
      let directory = directory
      let renamed = stagedName!.withCString { staged in
        name.withCString { name in
          valueOrErrno { system_renameat(directory, staged, directory, name) }
        }
      }
      switch renamed {
      case .success:
        stagedName = nil
        return
      case .failure(.noSuchFileOrDirectory) where stagedName != nil:
        stagedName = nil
      case .failure(let errno):
        throw SkipBackupError(.renameat, errno, path: item.displayPath)
      }
    }
    throw SkipBackupError(.renameat, .noSuchFileOrDirectory, path: item.displayPath)
  }

  deinit {
    let directory = directory
    if !committed, let stagedName {
      _ = stagedName.withCString { system_unlinkat(directory, $0, 0) }
    }
    _ = system_close(descriptor)
  }

  // MARK: - Names that survive no kill

  /// The new file, locked: unnamed where `O_TMPFILE` works, otherwise under
  /// the first free hidden name.
  private static func create(
    in directory: CInt, mode: mode_t, path: FilePath
  ) throws(SkipBackupError) -> (descriptor: CInt, name: FilePath?) {
    if case .success(let descriptor?) = UnnamedFile.open(in: directory, mode: mode) {
      // No one else can reach it yet, so the lock is granted at once.
      _ = system_flock(descriptor, LOCK_EX)
      return (descriptor, nil)
    }
    // No O_TMPFILE here: a hidden name in the same directory, so the rename stays atomic.
    var slot = 0
    for _ in 0..<2 * maximumSlots where slot < maximumSlots {
      let candidate = slotName(slot)
      let opened = candidate.withCString { candidate in
        valueOrErrno {
          system_openat(directory, candidate, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        }
      }
      switch opened {
      case .success(let descriptor):
        // A reaper may have locked and removed the name between the two
        // calls; then the file is no longer there under it, and another is made.
        _ = system_flock(descriptor, LOCK_EX)
        if names(candidate, in: directory, descriptor) {
          reapLeftovers(in: directory, after: slot)
          return (descriptor, candidate)
        }
        _ = system_close(descriptor)
      case .failure(.fileExists):
        if !reap(candidate, in: directory) { slot += 1 }
      case .failure(let errno):
        throw SkipBackupError(.openat, errno, path: path)
      }
    }
    throw SkipBackupError(.openat, .fileExists, path: path)
  }

  /// Gives the unnamed file `descriptor` the first free hidden name in `directory`.
  private static func link(
    _ descriptor: CInt, in directory: CInt, path: FilePath
  ) throws(SkipBackupError) -> FilePath {
    var slot = 0
    for _ in 0..<2 * maximumSlots where slot < maximumSlots {
      let candidate = slotName(slot)
      switch UnnamedFile.link(descriptor, in: directory, as: candidate) {
      case .success:
        reapLeftovers(in: directory, after: slot)
        return candidate
      case .failure(.fileExists):
        if !reap(candidate, in: directory) { slot += 1 }
      case .failure(let errno):
        throw SkipBackupError(.linkat, errno, path: path)
      }
    }
    throw SkipBackupError(.linkat, .fileExists, path: path)
  }

  /// How many saves may run in one directory at once.
  private static let maximumSlots = 1024

  /// `.skipbackup-save-N`: hidden, beside the file it will replace, and
  /// short, so that it fits where the file's own name only just does.
  private static func slotName(_ slot: Int) -> FilePath {
    FilePath(".skipbackup-save-\(slot)")
  }

  /// Removes the hidden file `name` if it is a dead save's: one whose lock
  /// can be taken. Returns whether the name is free now.
  private static func reap(_ name: FilePath, in directory: CInt) -> Bool {
    let opened = name.withCString { name in
      valueOrErrno {
        system_openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
      }
    }
    switch opened {
    case .failure(.noSuchFileOrDirectory): return true
    // Not ours to judge (another user's, or not a file): left alone.
    case .failure: return false
    case .success(let descriptor):
      defer { _ = system_close(descriptor) }
      var status = stat()
      guard system_fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
        valueOrErrno({ system_flock(descriptor, LOCK_EX | LOCK_NB) }).isSuccess,
        names(name, in: directory, descriptor)
      else { return false }
      // Locked by us, so no save owns it: its owner died.
      _ = name.withCString { system_unlinkat(directory, $0, 0) }
      return true
    }
  }

  /// Reaps the dead saves' files in the slots after `slot`, up to a few free ones.
  private static func reapLeftovers(in directory: CInt, after slot: Int) {
    var free = 0
    var next = slot + 1
    while free < 4 && next < maximumSlots {
      var status = stat()
      let exists = slotName(next).withCString { name in
        system_fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0
      }
      if exists {
        _ = reap(slotName(next), in: directory)
      } else {
        free += 1
      }
      next += 1
    }
  }

  /// Whether `name` in `directory` is the file open as `descriptor`.
  private static func names(_ name: FilePath, in directory: CInt, _ descriptor: CInt) -> Bool {
    var named = stat()
    var open = stat()
    let found = name.withCString { name in
      system_fstatat(directory, name, &named, AT_SYMLINK_NOFOLLOW) == 0
    }
    return found && system_fstat(descriptor, &open) == 0 && named.st_dev == open.st_dev
      && named.st_ino == open.st_ino
  }
}

private func currentUmask() -> mode_t {
  let mask = system_umask(0)
  _ = system_umask(mask)
  return mask
}
