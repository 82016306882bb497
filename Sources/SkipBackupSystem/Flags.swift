// The flag words of the calls, each its own OptionSet, so that a call
// takes only the flags the kernel reads for it: an `AT_` constant cannot
// reach `open`'s flags, nor a `CLONE_` one a mount's. Swift cannot see the
// kernel's macros, so the values come from the C modules' headers (CLinux,
// CMount, CFanotify) or Glibc.

import CFanotify
import CLinux
import CMount

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The flags of `open(2)`, `openat(2)` and `openat2(2)`: the access mode
/// (``readOnly`` is none of the others) and how the item is opened.
package struct OpenFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CInt
  package init(rawValue: CInt) { self.rawValue = rawValue }

  /// Reading only: the access mode 0, so the empty set.
  package static let readOnly: OpenFlags = []
  package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
  package static let readWrite = OpenFlags(rawValue: O_RDWR)
  package static let create = OpenFlags(rawValue: O_CREAT)
  package static let exclusive = OpenFlags(rawValue: O_EXCL)
  package static let truncate = OpenFlags(rawValue: O_TRUNC)
  package static let append = OpenFlags(rawValue: O_APPEND)
  package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
  package static let directory = OpenFlags(rawValue: O_DIRECTORY)
  /// Refuses (`ELOOP`) when the last component is a symbolic link.
  package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
  package static let closeOnExec = OpenFlags(rawValue: O_CLOEXEC)
  package static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
  /// A descriptor that reads nothing and opens any item, for the calls
  /// that take a descriptor as a place (`fstatfs`, `*at`, `move_mount`).
  package static let pathOnly = OpenFlags(rawValue: CLINUX_O_PATH)
  /// An unnamed file in the directory given (`O_TMPFILE`, which includes
  /// `O_DIRECTORY`).
  package static let temporaryFile = OpenFlags(rawValue: CLINUX_O_TMPFILE)
  package static let noAccessTime = OpenFlags(rawValue: CLINUX_O_NOATIME)
}

/// How `openat2(2)` may resolve a path (`RESOLVE_*`, linux/openat2.h).
package struct ResolveFlags: OptionSet, Sendable, Hashable {
  package let rawValue: UInt64
  package init(rawValue: UInt64) { self.rawValue = rawValue }

  /// No mount point crossed on the way.
  package static let noCrossingMounts = ResolveFlags(rawValue: CLINUX_RESOLVE_NO_XDEV)
  /// No `/proc/PID/fd/N`-style link on the way, nor at the end.
  package static let noMagicLinks = ResolveFlags(rawValue: CLINUX_RESOLVE_NO_MAGICLINKS)
  /// No symbolic link anywhere on the way, nor at the end.
  package static let noSymbolicLinks = ResolveFlags(rawValue: CLINUX_RESOLVE_NO_SYMLINKS)
  /// Nothing outside the directory given (no `..` above it, no absolute path).
  package static let beneath = ResolveFlags(rawValue: CLINUX_RESOLVE_BENEATH)
  package static let inRoot = ResolveFlags(rawValue: CLINUX_RESOLVE_IN_ROOT)

  /// What a path another user may change is walked with: it either leads
  /// through real directories to a real item, or is refused.
  package static let noLinks: ResolveFlags = [.noSymbolicLinks, .noMagicLinks]
}

/// The `AT_` flags of the `*at` calls that look an item up (`fstatat`,
/// `linkat`, `unlinkat`, `open_tree`, `name_to_handle_at`, the `*xattrat`
/// calls).
package struct AtFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CInt
  package init(rawValue: CInt) { self.rawValue = rawValue }

  package static let symbolicLinkNoFollow = AtFlags(rawValue: CLINUX_AT_SYMLINK_NOFOLLOW)
  package static let symbolicLinkFollow = AtFlags(rawValue: CLINUX_AT_SYMLINK_FOLLOW)
  /// The descriptor itself when the path is "".
  package static let emptyPath = AtFlags(rawValue: CLINUX_AT_EMPTY_PATH)
  package static let removeDirectory = AtFlags(rawValue: CLINUX_AT_REMOVEDIR)
  package static let noAutomount = AtFlags(rawValue: CLINUX_AT_NO_AUTOMOUNT)
  /// `open_tree`'s whole tree of mounts below the one named.
  package static let recursive = AtFlags(rawValue: CInt(CLINUX_AT_RECURSIVE))
  /// `name_to_handle_at`'s handle that identifies, and cannot open (fanotify's encoding).
  package static let handleForIdentity = AtFlags(rawValue: CLINUX_AT_HANDLE_FID)
}

/// `renameat2(2)`'s flags.
package struct RenameFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  /// Refuses (`EEXIST`) rather than replace what is at the new name.
  package static let noReplace = RenameFlags(rawValue: CLINUX_RENAME_NOREPLACE)
  /// Swaps the two names, both of which must exist.
  package static let exchange = RenameFlags(rawValue: CLINUX_RENAME_EXCHANGE)
  package static let whiteout = RenameFlags(rawValue: CLINUX_RENAME_WHITEOUT)
}

/// The namespaces `unshare(2)` makes new (`CLONE_NEW*`).
package struct CloneFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CInt
  package init(rawValue: CInt) { self.rawValue = rawValue }

  package static let newMountNamespace = CloneFlags(rawValue: CMOUNT_CLONE_NEWNS)
  package static let newUserNamespace = CloneFlags(rawValue: CMOUNT_CLONE_NEWUSER)
}

/// The flags of the old `mount(2)` the namespace's propagation is set with
/// (`MS_*`).
package struct MountFlags: OptionSet, Sendable, Hashable {
  package let rawValue: UInt
  package init(rawValue: UInt) { self.rawValue = rawValue }

  package static let recursive = MountFlags(rawValue: CMOUNT_MS_REC)
  package static let `private` = MountFlags(rawValue: CMOUNT_MS_PRIVATE)
}

/// A mount's attributes (`MOUNT_ATTR_*`), as `fsmount(2)` and
/// `mount_setattr(2)` set them.
package struct MountAttributes: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  package static let readOnly = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_RDONLY)
  package static let noSetUserID = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_NOSUID)
  package static let noDevices = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_NODEV)
  package static let noExecution = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_NOEXEC)
  package static let noAccessTime = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_NOATIME)
  package static let strictAccessTime = MountAttributes(rawValue: CMOUNT_MOUNT_ATTR_STRICTATIME)
  package static let noDirectoryAccessTime = MountAttributes(
    rawValue: CMOUNT_MOUNT_ATTR_NODIRATIME)
}

/// `move_mount(2)`'s flags: which side is named by its descriptor alone.
package struct MoveMountFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  /// The mount moved is the descriptor's own (`MOVE_MOUNT_F_EMPTY_PATH`).
  package static let fromEmptyPath = MoveMountFlags(rawValue: CMOUNT_MOVE_MOUNT_F_EMPTY_PATH)
  /// The place it goes is the descriptor's own (`MOVE_MOUNT_T_EMPTY_PATH`):
  /// no path resolved again after the place was opened.
  package static let toEmptyPath = MoveMountFlags(rawValue: CMOUNT_MOVE_MOUNT_T_EMPTY_PATH)
}

/// `open_tree(2)`'s flags: its own, and the `AT_` ones it reads.
package struct OpenTreeFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  /// A detached copy of the mount, not the mount itself.
  package static let clone = OpenTreeFlags(rawValue: CMOUNT_OPEN_TREE_CLONE)
  package static let closeOnExec = OpenTreeFlags(rawValue: CMOUNT_OPEN_TREE_CLOEXEC)
  package static let recursive = OpenTreeFlags(rawValue: CLINUX_AT_RECURSIVE)
  package static let emptyPath = OpenTreeFlags(rawValue: CUnsignedInt(CLINUX_AT_EMPTY_PATH))
  package static let symbolicLinkNoFollow = OpenTreeFlags(
    rawValue: CUnsignedInt(CLINUX_AT_SYMLINK_NOFOLLOW))
}

/// The events of fanotify(7) a mark asks for and an event reports
/// (`FAN_*` of the mask).
package struct FanotifyEvents: OptionSet, Sendable, Hashable {
  package let rawValue: UInt64
  package init(rawValue: UInt64) { self.rawValue = rawValue }

  package static let attributes = FanotifyEvents(rawValue: CFANOTIFY_FAN_ATTRIB)
  package static let movedFrom = FanotifyEvents(rawValue: CFANOTIFY_FAN_MOVED_FROM)
  package static let movedTo = FanotifyEvents(rawValue: CFANOTIFY_FAN_MOVED_TO)
  package static let created = FanotifyEvents(rawValue: CFANOTIFY_FAN_CREATE)
  package static let deleted = FanotifyEvents(rawValue: CFANOTIFY_FAN_DELETE)
  /// The queue overflowed: events were lost.
  package static let overflow = FanotifyEvents(rawValue: CFANOTIFY_FAN_Q_OVERFLOW)
  package static let onChildren = FanotifyEvents(rawValue: CFANOTIFY_FAN_EVENT_ON_CHILD)
  /// The item the event is about is a directory.
  package static let onDirectory = FanotifyEvents(rawValue: CFANOTIFY_FAN_ONDIR)

  /// What changes a directory's entries.
  package static let entryChanges: FanotifyEvents = [.created, .deleted, .movedFrom, .movedTo]
}

/// `fanotify_init(2)`'s flags.
package struct FanotifyInitFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  package static let closeOnExec = FanotifyInitFlags(rawValue: CFANOTIFY_FAN_CLOEXEC)
  package static let nonBlocking = FanotifyInitFlags(rawValue: CFANOTIFY_FAN_NONBLOCK)
  package static let unlimitedQueue = FanotifyInitFlags(rawValue: CFANOTIFY_FAN_UNLIMITED_QUEUE)
  package static let unlimitedMarks = FanotifyInitFlags(rawValue: CFANOTIFY_FAN_UNLIMITED_MARKS)
  /// Each event names its directory by handle and its entry by name.
  package static let reportDirectoryAndName = FanotifyInitFlags(
    rawValue: CFANOTIFY_FAN_REPORT_DFID_NAME)
}

/// `fanotify_mark(2)`'s flags.
package struct FanotifyMarkFlags: OptionSet, Sendable, Hashable {
  package let rawValue: CUnsignedInt
  package init(rawValue: CUnsignedInt) { self.rawValue = rawValue }

  package static let add = FanotifyMarkFlags(rawValue: CFANOTIFY_FAN_MARK_ADD)
  package static let dontFollow = FanotifyMarkFlags(rawValue: CFANOTIFY_FAN_MARK_DONT_FOLLOW)
  package static let onlyDirectory = FanotifyMarkFlags(rawValue: CFANOTIFY_FAN_MARK_ONLYDIR)
  /// The whole filesystem the item is on (CAP_SYS_ADMIN).
  package static let filesystem = FanotifyMarkFlags(rawValue: CFANOTIFY_FAN_MARK_FILESYSTEM)
  package static let flush = FanotifyMarkFlags(rawValue: CFANOTIFY_FAN_MARK_FLUSH)
}
