import SkipBackupSystem
import CLinux
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
  private var name: FilePath { entry.name }
  /// The new file, open for writing.
  private let file: Descriptor
  /// Its descriptor number, for writes made with it.
  package var descriptor: CInt { file.rawValue }
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
    let name = entry.name

    let created = try Self.create(in: entry.opened, mode: mode, path: path)
    let oldFile = keepsOld ? try Self.openLookedAt(name, in: entry.opened, old!, path: path) : nil
    self.entry = entry
    self.replacesAFile = old != nil
    self.stagedName = created.name
    self.file = created.file
    self.item = FileItem(descriptor: FileDescriptor(rawValue: file.rawValue), displayPath: path)

    if let old, keepsOld {
      // As cp -p does, as far as allowed: root may give the file back to its owner.
      try? file.changeOwner(old.st_uid, group: old.st_gid)
      try? file.changeMode(mode)
      if let oldFile {
        try copyAttributes(
          from: FileItem(descriptor: FileDescriptor(rawValue: oldFile.rawValue), displayPath: path))
      } else {
        // Not readable by this user: its attributes are still listed through
        // the directory, and one that cannot be read fails the save by name.
        try copyAttributes(
          from: FileItem(
            name: name, in: FileDescriptor(rawValue: self.entry.directory), displayPath: path))
      }
    } else if created.name != nil {
      try? file.changeMode(mode & ~currentUmask())
    }
  }

  /// The file the look found at `name`, opened for its attributes, or
  /// `nil` where this user may not read it. One another user put at the
  /// name since the look (another inode) is refused: its attributes and
  /// the looked-at file's permissions would be copied together.
  private static func openLookedAt(
    _ name: FilePath, in directory: borrowing Descriptor, _ looked: stat, path: FilePath
  ) throws(SkipBackupError) -> Descriptor? {
    let opened: Descriptor
    do throws(SkipBackupError) {
      opened = try directory.open(name, [.noFollow, .nonBlocking], reporting: path)
    } catch {
      return nil
    }
    let now = try opened.status()
    guard now.st_dev == looked.st_dev, now.st_ino == looked.st_ino else {
      throw SkipBackupError(refusing: .replacedWhileSaved, path: path)
    }
    return opened
  }

  /// Fills the new file from the regular file at `source`: its bytes, its
  /// permissions and every extended attribute, marks and ACLs among them.
  /// `source` is resolved once, `O_PATH`, and anything but a regular file
  /// is refused before it is opened for reading (so that a FIFO cannot
  /// block the copy, nor a device be opened); the file looked at is then
  /// read through that descriptor, never through its path again.
  package func copy(from source: FilePath) throws(SkipBackupError) {
    let sourceItem = FileItem(path: source)
    let place: Descriptor
    do throws(SkipBackupError) {
      place = try Descriptor.open(source, .pathOnly)
    } catch {
      throw sourceItem.explained(error)
    }
    let status: stat
    do throws(SkipBackupError) {
      status = try place.status()
    } catch {
      throw sourceItem.explained(error)
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw SkipBackupError(
        refusing: .notARegularFile, path: source,
        fileType: FileType(rawValue: status.st_mode & S_IFMT))
    }
    let input: Descriptor
    do throws(SkipBackupError) {
      input = try place.reopen([.nonBlocking, .noControllingTerminal])
    } catch {
      throw sourceItem.explained(error)
    }
    try? file.changeMode(status.st_mode & 0o7777)
    try copyAttributes(
      from: FileItem(descriptor: FileDescriptor(rawValue: input.rawValue), displayPath: source))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let count: Int
      do throws(SkipBackupError) {
        count = try input.read(into: buffer)
      } catch {
        throw sourceItem.explained(error)
      }
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
  /// The copy itself is `flistxattr`, `fgetxattr` and `fsetxattr`, because
  /// libattr's `attr_copy_fd(3)` cannot say which attribute it lost.
  private func copyAttributes(from source: FileItem) throws(SkipBackupError) {
    let from = ExtendedAttributes(of: source)
    do throws(SkipBackupError) {
      try from.copy(to: ExtendedAttributes(of: item)) { attribute throws(SkipBackupError) in
        try copySkipsAttribute(attribute)
      }
    } catch  where error.call == .attrCopyAction {
      throw error
    } catch {
      throw Self.notKept(error)
    }
  }

  /// The refusal that names the attribute a failed read or write would lose.
  private static func notKept(_ error: SkipBackupError) -> SkipBackupError {
    guard case .failed(let call, let errno) = error.cause else { return error }
    var refusal = SkipBackupError(refusing: .attributeNotKept(call, errno), path: error.path)
    refusal.attribute = error.attribute
    return refusal
  }

  /// Appends `bytes` to the new file.
  package func write(_ bytes: UnsafeRawBufferPointer) throws(SkipBackupError) {
    do throws(SkipBackupError) {
      try file.writeAll(bytes)
    } catch {
      throw item.explained(error)
    }
  }

  /// Syncs the new file and puts it in place: renamed over the file that
  /// was there at the look, or, where there was none, linked to the name,
  /// which fails rather than replace what appeared there since; then
  /// syncs the directory, so that the name survives a crash.
  package func commit() throws(SkipBackupError) {
    do throws(SkipBackupError) {
      try file.synchronize()
    } catch {
      throw item.explained(error)
    }
    if replacesAFile {
      try rename()
    } else {
      try link()
    }
    committed = true
    // The file is in place; a directory that cannot be synced (some FUSE
    // filesystems refuse fsync of a directory) loses nothing it holds.
    try? entry.opened.synchronize()
  }

  /// Gives the new file the name that was free at the look. What took the
  /// name since is judged as the look would have judged it: another user's
  /// item in a sticky directory is refused, anything but a regular file
  /// too (a link is never followed), and a regular file is replaced.
  private func link() throws(SkipBackupError) {
    do throws(SkipBackupError) {
      if let stagedName {
        try entry.opened.link(stagedName, as: name, in: entry.opened)
        try? entry.opened.removeEntry(stagedName)
        self.stagedName = nil
      } else {
        try UnnamedFile.link(file, in: entry.opened, as: name)
      }
    } catch  where error.errno == .fileExists {
      if let now = try entry.lookAgain(), now.st_mode & S_IFMT != S_IFREG {
        throw SkipBackupError(
          refusing: .notARegularFile, path: item.displayPath,
          fileType: FileType(rawValue: now.st_mode & S_IFMT))
      }
      try rename()
    } catch
      where stagedName != nil
      && (error.errno == .notPermitted || error.errno == .notSupported)
    {
      // A filesystem without hard links (vfat, exfat) has no symbolic links
      // either, nor owners to tell apart: the rename is all there is.
      try rename()
    } catch {
      var failure = error
      failure.path = item.displayPath
      throw failure
    }
  }

  /// Renames the new file over whatever is at the name: rename(2) replaces
  /// the name itself, never what a link there leads to.
  private func rename() throws(SkipBackupError) {
    // A dead save's leftover is reaped by name only while it is unlocked, so
    // the name is ours; should a racing reaper still have taken it, link again.
    for _ in 0..<3 {
      if stagedName == nil {
        stagedName = try Self.link(file, in: entry.opened, path: item.displayPath)
      }
      do throws(SkipBackupError) {
        try entry.opened.rename(stagedName!, to: name)
        stagedName = nil
        return
      } catch  where error.isNoSuchFile {
        stagedName = nil
      } catch {
        var failure = error
        failure.path = item.displayPath
        throw failure
      }
    }
    throw SkipBackupError(.renameat, .noSuchFileOrDirectory, path: item.displayPath)
  }

  deinit {
    if !committed, let stagedName { try? entry.opened.removeEntry(stagedName) }
  }

  // MARK: - Names that survive no kill

  /// The new file and the hidden name it has, if any.
  private struct Created: ~Copyable {
    let file: Descriptor
    let name: FilePath?
  }

  /// The new file, locked: unnamed where `O_TMPFILE` works, otherwise under
  /// the first free hidden name.
  private static func create(
    in directory: borrowing Descriptor, mode: mode_t, path: FilePath
  ) throws(SkipBackupError) -> Created {
    if let file = try? UnnamedFile.open(in: directory, mode: mode, path: path) {
      // No one else can reach it yet, so the lock is granted at once. A
      // filesystem without locks (NFS without lockd: ENOLCK) still saves:
      // the lock only tells a reaper that the name is in use.
      _ = try? file.lockExclusively()
      return Created(file: file, name: nil)
    }
    // No O_TMPFILE here: a hidden name in the same directory, so the rename stays atomic.
    var slot = 0
    for _ in 0..<2 * maximumSlots where slot < maximumSlots {
      let candidate = slotName(slot)
      let file: Descriptor
      do throws(SkipBackupError) {
        file = try directory.open(
          candidate, [.create, .exclusive, .writeOnly], mode: 0o600, reporting: path)
      } catch  where error.errno == .fileExists {
        if !reap(candidate, in: directory) { slot += 1 }
        continue
      }
      // A reaper may have locked and removed the name between the two
      // calls; then the file is no longer there under it, and another is made.
      _ = try? file.lockExclusively()
      if names(candidate, in: directory, file) {
        reapLeftovers(in: directory, after: slot)
        return Created(file: file, name: candidate)
      }
    }
    throw SkipBackupError(.openat, .fileExists, path: path)
  }

  /// Gives the unnamed `file` the first free hidden name in `directory`.
  private static func link(
    _ file: borrowing Descriptor, in directory: borrowing Descriptor, path: FilePath
  ) throws(SkipBackupError) -> FilePath {
    var slot = 0
    for _ in 0..<2 * maximumSlots where slot < maximumSlots {
      let candidate = slotName(slot)
      do throws(SkipBackupError) {
        try UnnamedFile.link(file, in: directory, as: candidate)
        reapLeftovers(in: directory, after: slot)
        return candidate
      } catch  where error.errno == .fileExists {
        if !reap(candidate, in: directory) { slot += 1 }
      } catch {
        var failure = error
        failure.path = path
        throw failure
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
  private static func reap(_ name: FilePath, in directory: borrowing Descriptor) -> Bool {
    let file: Descriptor
    do throws(SkipBackupError) {
      file = try directory.open(name, [.noFollow, .nonBlocking])
    } catch {
      // Gone is free; another user's, or not a file, is not ours to judge.
      return error.isNoSuchFile
    }
    guard let status = try? file.status(), status.st_mode & S_IFMT == S_IFREG,
      (try? file.lockExclusively(waiting: false)) == true,
      names(name, in: directory, file)
    else { return false }
    // Locked by us, so no save owns it: its owner died.
    try? directory.removeEntry(name)
    return true
  }

  /// Reaps the dead saves' files in the slots after `slot`, up to a few free ones.
  private static func reapLeftovers(in directory: borrowing Descriptor, after slot: Int) {
    var free = 0
    var next = slot + 1
    while free < 4 && next < maximumSlots {
      if (try? directory.status(of: slotName(next))) != nil {
        _ = reap(slotName(next), in: directory)
      } else {
        free += 1
      }
      next += 1
    }
  }

  /// Whether `name` in `directory` is the file open as `file`.
  private static func names(
    _ name: FilePath, in directory: borrowing Descriptor, _ file: borrowing Descriptor
  ) -> Bool {
    guard let named = try? directory.status(of: name), let open = try? file.status() else {
      return false
    }
    return named.st_dev == open.st_dev && named.st_ino == open.st_ino
  }
}

/// The process's umask, which reading changes: set back at once.
private func currentUmask() -> mode_t {
  let mask = system_umask(0)
  _ = system_umask(mask)
  return mask
}
