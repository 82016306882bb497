// The one place where errno becomes a Swift error, and where every error's
// message is written.

import SystemPackage

/// A call on a file that failed, or an item SkipBackup refuses by itself:
/// the item's path, what went wrong, and a sentence that says so.
///
/// Every throwing API of SkipBackup throws this type. Its ``description``
/// names the path first, as command-line tools do:
///
///     /proc/self/comm: the filesystem here keeps no user extended attributes
///     (lsetxattr user.com.apple.MobileBackup: Operation not supported)
///
/// It is a plain value: making one does no I/O. A caller that can explain an
/// `EPERM` by the item's type looks the type up and sets ``fileType``.
public struct SkipBackupError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong: a call the kernel refused, or a refusal of SkipBackup's own.
  package var cause: Cause
  /// The item, as the caller named it.
  public var path: FilePath
  /// The extended attribute involved, if any.
  public var attribute: AttributeName?
  /// What the item is, where that explains the error: Linux refuses user
  /// attributes on symbolic links, devices, FIFOs and sockets with `EPERM`.
  public var fileType: FileType?
  /// What a look at the item after the failure found, where that tells
  /// why the kernel refused: set by the caller that looked, as
  /// ``fileType`` is, so that `EPERM` is never blamed on an immutable flag
  /// nobody checked, nor `EACCES` on the item when a directory on the way
  /// denied it.
  package var finding: Finding?

  /// What the item turned out to be, after an `EPERM` or `EACCES`.
  package enum Finding: Hashable, Sendable {
    /// Its inode flags say immutable (`chattr +i`).
    case immutable
    /// Its inode flags say append-only (`chattr +a`).
    case appendOnly
    /// Its inode flags were read: neither immutable nor append-only.
    case neitherImmutableNorAppendOnly
    /// A directory with the sticky bit (as /tmp) that someone else owns.
    case stickyDirectoryOfAnother
    /// It is on a kernel pseudo-filesystem, which refuses user attributes
    /// (`EPERM` on /proc's process directories).
    case pseudoFilesystem(PseudoFilesystem)
    /// The item cannot even be looked up: a directory on the way to it
    /// denies search (`x`) permission.
    case searchDenied
    /// The filesystem it is on, by `statfs(2)`'s `f_type`, where that
    /// explains `EOPNOTSUPP`, `ENOTTY` or `EROFS`: what it lacks is the
    /// filesystem's, not the item's.
    case filesystem(type: UInt)
  }

  /// The filesystems a home, or what a backup reads, lives on, by the
  /// `f_type` `statfs(2)` gives (<linux/magic.h>): the ones a message names
  /// by name (another, such as /proc, keeps the message that names none).
  /// docs/format.md's table of filesystems says what each keeps.
  package enum Filesystem: UInt, Hashable, Sendable, CaseIterable {
    /// ext2 and ext3 too, which share its magic number.
    case ext4 = 0xEF53
    case xfs = 0x5846_5342
    case btrfs = 0x9123_683E
    case bcachefs = 0xCA45_1A4E
    case f2fs = 0xF2F5_2010
    case zfs = 0x2FC1_2FC1
    case tmpfs = 0x0102_1994
    case ramfs = 0x8584_58F6
    case overlay = 0x794C_7630
    case fuse = 0x6573_5546
    case nfs = 0x6969
    case cifs = 0xFF53_4D42
    case smb2 = 0xFE53_4D42
    case vfat = 0x4D44
    case exfat = 0x2011_BAB0
    case ntfs3 = 0x7366_746E
    case squashfs = 0x7371_7368
    case erofs = 0xE0F5_E1E2
    case iso9660 = 0x9660

    /// Its name as /proc/filesystems and mount(8) show it, which is the
    /// case's name, but for FUSE, whose programs each name their own
    /// (`fuse.bindfs`, `fuse.sshfs`).
    package var name: String { self == .fuse ? "a FUSE filesystem" : String(describing: self) }

    /// The filesystem a finding names, when it is one of these.
    init?(_ finding: Finding?) {
      guard case .filesystem(let type)? = finding else { return nil }
      self.init(rawValue: type)
    }

    /// Whether the filesystem itself has no way to write (an image), rather
    /// than a mount that was made read-only.
    package var isReadOnlyImage: Bool { self == .squashfs || self == .erofs || self == .iso9660 }

    /// Why it keeps no user attributes, where that is known and not plain.
    package var missingUserAttributesHint: String {
      switch self {
      case .ramfs: " (ramfs has none; tmpfs keeps them)"
      case .tmpfs: " (tmpfs keeps them from Linux 6.6)"
      case .fuse:
        ": its program does not pass them on (bindfs does, but not with --xattr-none; "
          + "sshfs does not)"
      case .nfs: ": NFS passes them on only from NFS 4.2, to a server that keeps them"
      case .vfat, .exfat, .iso9660: " (it has none)"
      default: " (mounted without user_xattr?)"
      }
    }
  }

  /// The kernel's pseudo-filesystems, by the `f_type` `statfs(2)` gives.
  package enum PseudoFilesystem: UInt, Hashable, Sendable, CaseIterable {
    case proc = 0x9FA0
    case sysfs = 0x6265_6572
    case cgroup = 0x0027_E0EB
    case cgroup2 = 0x6367_7270
    case debugfs = 0x6462_6720
    case tracefs = 0x7472_6163
    case securityfs = 0x7363_6673
    case bpf = 0xCAFE_4A11

    /// Its name as /proc/filesystems and mount(8) show it, which is the
    /// case's name.
    package var name: String { String(describing: self) }
  }

  package enum Cause: Hashable, Sendable {
    /// The C call failed with the error number.
    case failed(SystemCall, Errno)
    /// SkipBackup refused before any call could fail.
    case refused(Refusal)
  }

  /// A condition SkipBackup refuses by itself, rather than the kernel.
  package enum Refusal: Hashable, Sendable {
    /// A symbolic link given where its target is not followed (the tool
    /// without `-L`): Linux keeps no user attributes on links.
    case symbolicLinkNotFollowed
    /// A `CACHEDIR.TAG` that is not a cache directory tag: never overwritten.
    case foreignCacheDirectoryTag
    /// A valid `CACHEDIR.TAG` that another tool wrote (its contents differ
    /// from skipbackup's): clear leaves it to that tool.
    case cacheDirectoryTagOfAnotherTool
    /// An item that is not a directory cannot carry a `CACHEDIR.TAG`.
    case cacheDirectoryTagNeedsDirectory
    /// Only regular files and directories carry inode flags; others are
    /// not even opened (opening a device can act on it).
    case inodeFlagsNeedFileOrDirectory
    /// A URL that names no file; `url` is the URL as given
    /// (`https://example.com/x`), which a `FilePath` would change (`//`
    /// becomes `/`), so the message shows it instead of the path.
    case notAFileURL(url: String)
    /// A path with no last component (`/`), which no saved file can replace.
    case namesNoFile
    /// A save or copy that would lose the attribute ``attribute`` of the
    /// old file (or the source): `call` failed with `errno` reading it, or
    /// writing it on the new file. Nothing is replaced.
    case attributeNotKept(SystemCall, Errno)
    /// A copy from, or a save over, anything but a regular file.
    case notARegularFile
    /// A save over a file that another took the place of between the look
    /// at its name and the open of it for its attributes: its permissions
    /// and another file's attributes would be copied together. Nothing is
    /// replaced.
    case replacedWhileSaved
    /// `run --snapshot` of a ROOT on a filesystem it cannot snapshot.
    case notOnASnapshottingFilesystem
    /// `run --snapshot` of a ROOT whose btrfs subvolume's root directory is
    /// not reachable here (a bind mount of a directory inside a subvolume):
    /// the snapshot is taken of that root.
    case subvolumeRootUnreachable
    /// `run --snapshot` by an ordinary user on a btrfs filesystem mounted
    /// without `user_subvol_rm_allowed`: the snapshot could be made but
    /// never deleted.
    case snapshotDeletionNotAllowed
    /// `run --snapshot` of a ROOT that was renamed or replaced while its
    /// snapshot was taken: the snapshot does not hold it at its path.
    case movedWhileSnapshotted
    /// A directory on the way to a ROOT, or to a subvolume nested in one,
    /// that is a symbolic link now, or another directory, where the path
    /// was resolved before: whoever owns the directory above it may swap
    /// it at any time.
    case changedOnTheWay
    /// Root resolving a ROOT (or a subvolume nested in one) steps from a
    /// directory another user owns into one root or a third user owns:
    /// the user who owns the first can rename or swap what it holds, and
    /// so choose which of the others' directories the path reaches
    /// (systemd's chase() refuses the same "unsafe path transition").
    case unsafePathTransition
    /// Root resolving a ROOT met a symbolic link in a directory that a
    /// user other than root owns: that user chooses where it leads, and can
    /// change it at any moment, so it is not followed.
    case symbolicLinkOfAnother
    /// The directory that holds `run --snapshot`'s snapshots belongs to
    /// another user, who could have put anything there.
    case snapshotDirectoryOfAnother
    /// `run --snapshot` by an ordinary user of a ROOT with a btrfs
    /// subvolume nested in it that another user owns: only its owner, or
    /// root, may snapshot it.
    case nestedSubvolumeOfAnother
    /// `run --snapshot` by an ordinary user of a ROOT whose btrfs
    /// subvolume another user owns (a home that is a directory in root's
    /// `/home` subvolume): only its owner, or root, may snapshot it.
    case subvolumeOfAnother
    /// `run --snapshot` of a ROOT in a read-only btrfs subvolume: no
    /// snapshot can be made in it, and none is needed.
    case readOnlySubvolume
    /// A save through a symbolic link that leads nowhere, or in a loop.
    case danglingSymbolicLink
    /// A link, file or FIFO that another user put in a sticky directory
    /// others may write (as /tmp): never followed nor written, as the
    /// kernel's `fs.protected_symlinks` and `fs.protected_regular` refuse.
    case anotherUsersItemInSharedDirectory
    /// A walk of ``path`` (a tree query) that went on past what it could
    /// not read: each failure, by its own path, in the order met. What the
    /// query answered leaves out what is below each.
    case itemsUnread([SkipBackupError])
    /// A directory on the way to a file to write that another user owns
    /// (neither root nor the caller): its owner can rename, replace or
    /// `chmod` what is below it at any time, so nothing is written
    /// through it (systemd's unsafe path transition).
    case directoryOfAnotherOnTheWay
    /// A symbolic link on the way to a file to write, in a directory that
    /// others may write or another user owns: not followed.
    case symbolicLinkOnTheWay
  }

  /// The failure of `call` with `errno` on the item at `path`.
  package init(
    _ call: SystemCall, _ errno: Errno, path: FilePath, attribute: AttributeName? = nil,
    fileType: FileType? = nil
  ) {
    self.cause = .failed(call, errno)
    self.path = path
    self.attribute = attribute
    self.fileType = fileType
  }

  /// The refusal of the item at `path`.
  package init(refusing refusal: Refusal, path: FilePath, fileType: FileType? = nil) {
    self.cause = .refused(refusal)
    self.path = path
    self.fileType = fileType
  }

  /// The failures behind this error: for a tree query that could not read
  /// several items below its root, each of them, by its own path; for any
  /// other error, the error itself.
  public var unreadItems: [SkipBackupError] {
    if case .refused(.itemsUnread(let failures)) = cause { return failures }
    return [self]
  }

  /// The one error a walk of `root` ends with after it could not read
  /// `failures` (at least one): a single failure as it is, several under
  /// `root`, each by its path.
  package init(unread failures: [SkipBackupError], under root: FilePath) {
    precondition(!failures.isEmpty)
    if failures.count == 1 {
      self = failures[0]
    } else {
      self.init(refusing: .itemsUnread(failures), path: root)
    }
  }

  /// The error number the call set; `nil` for a refusal.
  public var errno: Errno? {
    if case .failed(_, let errno) = cause { return errno }
    return nil
  }

  /// The C function that failed, such as `lsetxattr` or
  /// `ioctl(FS_IOC_SETFLAGS)`; `nil` when SkipBackup refused by itself
  /// before any call (a symbolic link not followed, a foreign
  /// `CACHEDIR.TAG`), which ``reason`` explains.
  public var functionName: String? { call?.description }

  /// The C function that failed; `nil` for a refusal.
  package var call: SystemCall? {
    if case .failed(let call, _) = cause { return call }
    return nil
  }

  /// The refusal, when SkipBackup refused rather than the kernel.
  package var refusal: Refusal? {
    if case .refused(let refusal) = cause { return refusal }
    return nil
  }

  /// Whether the item was gone when the call was made.
  package var isNoSuchFile: Bool { errno == .noSuchFileOrDirectory }

  /// Whether the error is a refusal of user attributes on a symbolic link:
  /// the kernel's, or SkipBackup's before asking it.
  package var isSymbolicLinkRefusal: Bool {
    refusal == .symbolicLinkNotFollowed || (errno == .notPermitted && fileType == .symbolicLink)
  }

  /// Whether an open without following links met one (`ELOOP` from
  /// `O_NOFOLLOW`): the item became a symbolic link since it was listed.
  package var isLinkNotFollowed: Bool {
    errno == .tooManySymbolicLinkLevels && call == .openat
  }

  /// Whether the kernel refused (`EPERM`) what a look right after found to
  /// be a plain file or directory, neither immutable nor append-only: the
  /// name held a symbolic link or special file at the call, and the item
  /// again by the look (a swap under way; scripts/torture's sweepswap
  /// rounds meet it about once in 50).
  package var isRefusedForAMomentaryType: Bool {
    errno == .notPermitted && finding == .neitherImmutableNorAppendOnly
  }

  /// Whether the kernel refused because the item is a symbolic link, a
  /// device, a FIFO or a socket: Linux keeps user attributes on none of them.
  package var isRefusedForFileType: Bool {
    guard errno == .notPermitted, let fileType else { return false }
    return fileType != .regular && fileType != .directory
  }

  /// Whether the error says that what a walk listed as a file or directory
  /// was something else at the call: a symbolic link or special file
  /// swapped in since its directory was listed, or there at the call and
  /// gone again by the look that explains the refusal. The attribute
  /// mechanisms' `EPERM` on what is no file or directory
  /// (``isRefusedForFileType``), an open that met a link
  /// (``isLinkNotFollowed``), and nodump's and cachedir's own refusals of
  /// what is no file or directory. `mark -R` and `sweep` both skip and
  /// count such an entry, not report it, and do not follow it (reported,
  /// 8 sweeps in 1,000 under scripts/torture's swaps failed on one).
  package var isSwappedInDuringWalk: Bool {
    isRefusedForFileType || isLinkNotFollowed
      || refusal == .inodeFlagsNeedFileOrDirectory
      || refusal == .cacheDirectoryTagNeedsDirectory
  }

  /// What went wrong, in words, without the path.
  public var reason: String {
    switch cause {
    case .refused(let refusal): Self.reason(refusal, fileType, attribute)
    case .failed(let call, let errno): Self.reason(call, errno, attribute, fileType, finding)
    }
  }

  private static func reason(
    _ refusal: Refusal, _ fileType: FileType?, _ attribute: AttributeName?
  ) -> String {
    switch refusal {
    case .symbolicLinkNotFollowed:
      return "Linux keeps no user extended attributes on symbolic links"
    case .foreignCacheDirectoryTag:
      return "a CACHEDIR.TAG is there that is not a cache directory tag; it is left as it is"
    case .cacheDirectoryTagOfAnotherTool:
      return "left in place: this cache directory tag was not written by skipbackup (its "
        + "contents differ), so another tool such as cargo keeps a cache here and expects it; "
        + "the directory stays excluded until you remove the tag yourself"
    case .cacheDirectoryTagNeedsDirectory:
      return "only a directory can carry a CACHEDIR.TAG"
    case .inodeFlagsNeedFileOrDirectory:
      let what = fileType.map { ", and this is \(article($0))" } ?? ""
      return "only regular files and directories carry the nodump flag (chattr +d)\(what)"
    case .notAFileURL:
      return "not a file URL: only files and directories carry backup marks"
    case .namesNoFile:
      return "names no file that a save could replace"
    case .attributeNotKept(let call, let errno):
      let what = attribute.map { "the attribute \($0)" } ?? "an attribute"
      let how = call.changesAttributes ? "set on the new file" : "read"
      return "\(what) cannot be \(how) (\(call): \(errno.description.lowercasedFirst)), "
        + "and the new file would lose it; nothing was replaced"
    case .notARegularFile:
      let what = fileType.map { ", and this is \(article($0))" } ?? ""
      return "only a regular file can be copied or saved over\(what)"
    case .replacedWhileSaved:
      return "another file took its place while it was saved over, so its permissions and "
        + "attributes would not be one file's; nothing was replaced: save it again"
    case .notOnASnapshottingFilesystem:
      return "not on btrfs, the filesystem run --snapshot can snapshot; run it without "
        + "--snapshot (the live view), or see docs/backups.md"
    case .subvolumeRootUnreachable:
      return "the root directory of the btrfs subvolume that holds it is not reachable here (a "
        + "bind mount of a directory inside a subvolume?), and a snapshot is taken of that root; "
        + "give a ROOT below the subvolume's own mount"
    case .snapshotDeletionNotAllowed:
      return "its btrfs filesystem is mounted without user_subvol_rm_allowed, so an ordinary "
        + "user could make the snapshot but never delete it; run as root, or mount it with "
        + "-o user_subvol_rm_allowed"
    case .movedWhileSnapshotted:
      return "it was renamed or replaced while its snapshot was taken; run again"
    case .changedOnTheWay:
      return "a directory on the way to it is a symbolic link now, or another directory, where "
        + "it was a directory when the path was resolved: the owner of the directory above it "
        + "can swap it, so nothing is read or mounted there; nothing was run"
    case .symbolicLinkOfAnother:
      return "a symbolic link in a directory that a user other than root owns, who can point "
        + "it anywhere at any moment and so choose what this path reaches (an unsafe path "
        + "transition); give the directory it leads to as ROOT; nothing was run"
    case .unsafePathTransition:
      return "owned by root or by another user, but reached through a directory that a user "
        + "other than root owns, who can rename or swap what it holds and so choose what this "
        + "path reaches (an unsafe path transition); give this directory itself as ROOT, or "
        + "let one user own the whole way; nothing was run"
    case .snapshotDirectoryOfAnother:
      return "belongs to another user, and run --snapshot keeps its snapshots only in a "
        + "directory of its own; remove or rename it"
    case .readOnlySubvolume:
      return "its btrfs subvolume is read-only, so no snapshot can be taken in it, and none is "
        + "needed: it does not change, and run without --snapshot shows it as it is; nothing "
        + "was run"
    case .nestedSubvolumeOfAnother:
      return "a btrfs subvolume nested in a ROOT, which belongs to another user: only its "
        + "owner, or root, may snapshot it, and the ROOT's snapshot holds it empty; run as "
        + "root, or give -x to leave it out as the empty directory list -x lists; nothing was run"
    case .subvolumeOfAnother:
      return "its btrfs subvolume belongs to another user, and only its owner, or root, may "
        + "snapshot it; run as root, or without --snapshot; nothing was run"
    case .danglingSymbolicLink:
      return "a symbolic link to nothing: a save writes through a link only to a file that "
        + "exists, and never turns the link into a file"
    case .directoryOfAnotherOnTheWay:
      return "another user owns this directory on the way to the file to write, and can "
        + "rename, replace or chmod what is below it at any time; nothing is written through a "
        + "directory only another user controls (write it where only root or you may change the "
        + "path); nothing was written"
    case .symbolicLinkOnTheWay:
      return "a symbolic link on the way to the file to write, in a directory another user "
        + "owns or others may write: it is not followed, since someone else may have put it "
        + "there; name the real directory; nothing was written"
    case .anotherUsersItemInSharedDirectory:
      let what = fileType.map { article($0) } ?? "an item"
      return "\(what) that another user owns, in a sticky directory others may write (as /tmp): "
        + "it is neither followed nor written, as the kernel's fs.protected_symlinks and "
        + "fs.protected_regular refuse; nothing was written (choose a name of your own there)"
    case .itemsUnread(let failures):
      return "\(failures.count) items below could not be read, and what is below each is "
        + "left out: " + failures.map(\.description).joined(separator: "; ")
    }
  }

  private static func reason(
    _ call: SystemCall, _ errno: Errno, _ attribute: AttributeName?, _ fileType: FileType?,
    _ finding: Finding?
  ) -> String {
    switch errno {
    case .noSuchFileOrDirectory:
      return "no such file or directory"
    case .notSupported:
      if call.isInodeFlags {
        return "the filesystem here\(named(finding)) keeps no nodump flag (chattr +d)"
      }
      if let attribute, attribute.namespace == nil {
        return "'\(attribute)' is in no namespace Linux knows (user., trusted., security., system.)"
      }
      if let filesystem = Filesystem(finding) {
        return "the filesystem here, \(filesystem.name), keeps no user extended attributes"
          + filesystem.missingUserAttributesHint
      }
      return "the filesystem here keeps no user extended attributes "
        + "(a pseudo-filesystem such as /proc, or one mounted without user_xattr)"
    case .notPermitted:
      switch fileType {
      case .symbolicLink?:
        return "Linux keeps no user extended attributes on symbolic links"
      case .some(let type) where type != .regular && type != .directory:
        return "Linux keeps user extended attributes only on regular files and directories, "
          + "and this is \(article(type))"
      default:
        if call.isInodeFlags {
          return "operation not permitted: only the owner or root may change inode flags"
        }
        return notPermittedReason(finding)
      }
    case .permissionDenied:
      if finding == .searchDenied {
        return "permission denied: a directory on the way to it lacks search (x) permission "
          + "for this user"
      }
      if call.changesAttributes {
        return "permission denied: changing its attributes needs write permission on it"
      }
      return "permission denied"
    case .noSpace where call.setsAttribute:
      return "no space left for extended attributes on this item (ext4 keeps them in one block) "
        + "or on the device"
    case .noSpace:
      return "no space left on the device: the filesystem that holds it is full"
    case .argListTooLong:
      return "the attribute value is larger than the filesystem allows"
    case .outOfRange:
      return "the attribute value kept growing while it was read"
    case .readOnlyFileSystem:
      guard let filesystem = Filesystem(finding) else { return "read-only file system" }
      if filesystem.isReadOnlyImage {
        return "read-only file system: \(filesystem.name) is an image nothing writes to, so "
          + "its marks are read but never changed (make the image again from a tree marked "
          + "as it should be)"
      }
      return "read-only file system: the filesystem here, \(filesystem.name), is mounted "
        + "read-only"
    case .diskQuotaExceeded:
      return "disk quota exceeded"
    // A link that was followed (a save's target) is a loop, not a link refused.
    case .tooManySymbolicLinkLevels where call == .openat && fileType != .symbolicLink:
      return "it is a symbolic link, which is not followed"
    case .tooManyOpenFiles:
      return "too many open files: the tree is deeper than the limit on open files allows"
    case .inappropriateIOCTLForDevice:
      return "the filesystem here\(named(finding)) keeps no inode flags (chattr)"
    default:
      return errno.description.lowercasedFirst
    }
  }

  /// `PATH: reason (call attribute: strerror)`; a refusal, where no call
  /// ran, is `PATH: reason`.
  public var description: String {
    switch cause {
    case .refused(.notAFileURL(let url)):
      return "\(url): \(reason)"
    case .refused:
      return "\(path.escapedDescription): \(reason)"
    case .failed(let call, let errno):
      var detail = call.description
      if let attribute { detail += " \(attribute)" }
      return "\(path.escapedDescription): \(reason) (\(detail): \(errno.description))"
    }
  }

  /// The filesystem a finding names, as `, NAME,` to follow "the
  /// filesystem here"; nothing when none was looked up, or it is none of
  /// ``Filesystem``.
  private static func named(_ finding: Finding?) -> String {
    Filesystem(finding).map { ", \($0.name)," } ?? ""
  }

  /// Why a change of a user attribute on a regular file or a directory
  /// got `EPERM`, by what a look at the item found.
  private static func notPermittedReason(_ finding: Finding?) -> String {
    switch finding {
    case .immutable?:
      return "operation not permitted: the item is immutable (chattr +i)"
    case .appendOnly?:
      return "operation not permitted: the item is append-only (chattr +a)"
    case .stickyDirectoryOfAnother?:
      return "operation not permitted: a directory with the sticky bit (as /tmp) that someone "
        + "else owns keeps its attributes to its owner"
    case .pseudoFilesystem(let filesystem)?:
      return "operation not permitted: this is on \(filesystem.name), a kernel "
        + "pseudo-filesystem that refuses user extended attributes"
    case .neitherImmutableNorAppendOnly?:
      return "operation not permitted, though the item is neither immutable nor append-only: "
        + "it was most likely a symbolic link or special file when the call was made "
        + "(replaced while this ran), which keep no user extended attributes"
    case .searchDenied?, .filesystem?, nil:
      return "operation not permitted: the item may be immutable or append-only (chattr +i "
        + "or +a), or a sticky directory owned by someone else; its flags could not be read"
    }
  }

  private static func article(_ type: FileType) -> String {
    switch type {
    case .fifo: "a FIFO"
    case .socket: "a socket"
    case .characterSpecial: "a character device"
    case .blockSpecial: "a block device"
    case .symbolicLink: "a symbolic link"
    case .directory: "a directory"
    default: "a regular file"
    }
  }
}

extension String {
  fileprivate var lowercasedFirst: String {
    guard let first else { return self }
    return first.lowercased() + dropFirst()
  }
}

extension FilePath {
  /// The path for messages: bytes as they are, except control characters and
  /// bytes that are not UTF-8, which are written as escapes (`\n`, `\xff`).
  package var escapedDescription: String {
    withCString { pointer in
      let bytes = UnsafeBufferPointer(
        start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
        count: strlen(pointer))
      return String(escapingForDisplay: bytes)
    }
  }
}

extension String {
  /// Text for a terminal from arbitrary bytes: valid UTF-8 kept, control
  /// characters (C0, DEL and C1) and invalid bytes escaped (`\n`, `\x1b`,
  /// `\xc2\x9b`, `\xff`).
  package init(escapingForDisplay bytes: some Collection<UInt8>) {
    let bytes = Array(bytes)
    var result = ""
    var index = 0
    while index < bytes.count {
      guard let (scalar, length) = UTF8Scalar.decode(bytes, at: index) else {
        result += "\\x" + Self.hex(bytes[index])
        index += 1
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        result += "\\x" + Self.hex(UInt8(scalar.value))
      // The C1 controls (U+0080 to U+009F): U+009B starts a control
      // sequence as ESC [ does on terminals that read them. Their bytes.
      case _ where (0x80...0x9F).contains(scalar.value):
        result += "\\xc2\\x" + Self.hex(UInt8(scalar.value & 0xFF) | 0x80)
      default: result.unicodeScalars.append(scalar)
      }
      index += length
    }
    self = result
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
