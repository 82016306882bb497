/// A C call the library makes, by name: what a ``SkipBackupError`` says
/// failed, and what debug builds can make fail on purpose.
///
/// Code decides by case, never by the text of a name: a reason depends on
/// whether the call changes attributes or inode flags, not on how it is
/// spelled.
package enum SystemCall: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
  case getxattr, lgetxattr, fgetxattr, getxattrat
  case setxattr, lsetxattr, fsetxattr, setxattrat
  case listxattr, llistxattr, flistxattr, listxattrat
  case removexattr, lremovexattr, fremovexattr, removexattrat
  case openat, close, read, write, poll, fsync, fchmod, fchown
  case getdents64, fstatat, fstat, statx, fstatfs
  case renameat, linkat, unlinkat, realpath, readlinkat, flock, openat2, renameat2
  case getInodeFlags = "ioctl(FS_IOC_GETFLAGS)"
  case setInodeFlags = "ioctl(FS_IOC_SETFLAGS)"
  case attrCopyAction = "attr_copy_action"
  case getrlimit, setrlimit
  case pthreadCreate = "pthread_create"
  case pthreadJoin = "pthread_join"
  case sysconf, getcwd, sigaction
  // Running git for sweep's gitignore rule (ChildProcess.swift).
  case pipe2, waitpid, access
  case posixSpawn = "posix_spawn"
  case posixSpawnFileActionsInit = "posix_spawn_file_actions_init"
  case posixSpawnFileActionsAddopen = "posix_spawn_file_actions_addopen"
  case posixSpawnFileActionsAdddup2 = "posix_spawn_file_actions_adddup2"
  // Building run's view (Sources/SkipBackupView/).
  case unshare, mount, fsopen, fsconfig, fsmount, mknodat, mkdirat, futimens, chdir
  case execvp, dup, dup2, setenv, fchdir, chroot
  case moveMount = "move_mount"
  // export --for deja-dup: the user name Déjà Dup puts for $USER.
  case getpwuidR = "getpwuid_r"
  // run --snapshot: btrfs's snapshot ioctls, and COMMAND as a waited-for child.
  case btrfsSnapshotCreate = "ioctl(BTRFS_IOC_SNAP_CREATE_V2)"
  case btrfsSnapshotDestroy = "ioctl(BTRFS_IOC_SNAP_DESTROY)"
  case btrfsSubvolumeGetFlags = "ioctl(BTRFS_IOC_SUBVOL_GETFLAGS)"
  case btrfsSubvolumeSetFlags = "ioctl(BTRFS_IOC_SUBVOL_SETFLAGS)"
  case btrfsTreeSearch = "ioctl(BTRFS_IOC_TREE_SEARCH_V2)"
  case btrfsSubvolumeChildren = "ioctl(BTRFS_IOC_GET_SUBVOL_ROOTREF)"
  case btrfsSubvolumePlace = "ioctl(BTRFS_IOC_INO_LOOKUP_USER)"
  case btrfsSubvolumeInfo = "ioctl(BTRFS_IOC_GET_SUBVOL_INFO)"
  case btrfsFilesystemInfo = "ioctl(BTRFS_IOC_FS_INFO)"
  case pthreadKill = "pthread_kill"
  case sigpending
  case fork, kill, sigprocmask, sigwaitinfo
  case setParentDeathSignal = "prctl(PR_SET_PDEATHSIG)"
  case openTree = "open_tree"
  case mountSetattr = "mount_setattr"
  // Watching each ROOT while run's view is made (ChangeWatch.swift).
  case fanotifyInit = "fanotify_init"
  case fanotifyMark = "fanotify_mark"
  case nameToHandleAt = "name_to_handle_at"
  case readEvents = "read(fanotify)"
  case fanotifyFlush = "fanotify_mark(flush)"

  /// The C function's name, as messages show it: `lsetxattr`,
  /// `ioctl(FS_IOC_SETFLAGS)`.
  package var description: String { rawValue }

  /// Whether the call creates, changes or removes an extended attribute.
  package var changesAttributes: Bool {
    switch self {
    case .setxattr, .lsetxattr, .fsetxattr, .setxattrat, .removexattr, .lremovexattr,
      .fremovexattr, .removexattrat:
      true
    default: false
    }
  }

  /// Whether the call sets an extended attribute's value: the one kind of
  /// call whose `ENOSPC` may mean the item's attribute space (ext4 keeps an
  /// inode's attributes in one block) rather than the filesystem's.
  package var setsAttribute: Bool {
    switch self {
    case .setxattr, .lsetxattr, .fsetxattr, .setxattrat: true
    default: false
    }
  }

  /// Whether the call reads or writes inode flags (`chattr`).
  package var isInodeFlags: Bool {
    self == .getInodeFlags || self == .setInodeFlags
  }
}
