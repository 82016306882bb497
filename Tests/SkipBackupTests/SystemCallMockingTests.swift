import SkipBackupCore
import SystemPackage
import Testing

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// Every ``SystemCall`` case is one the mocking driver can fail: its
  /// `system_*` wrapper asks the driver first, so that a forced errno (a
  /// test's, or `SKIPBACKUP_FORCE_ERRNO`'s) reaches the code above exactly
  /// as the kernel's would. The switch below names every case: a new one
  /// does not compile until it is called here.
  @Suite(.onTestThreads) struct SystemCallMockingTests {
    /// What a wrapper's call came to.
    enum Outcome: Equatable {
      case failed(Errno)
      case succeeded
    }

    /// A forced `EIO` is what the call answers, and the driver counted the
    /// call once. Each call is made with arguments the kernel would refuse
    /// or that change nothing (a bad descriptor, a path that does not
    /// exist, a pid that is no child), so that a wrapper that did not ask
    /// the driver fails the test with another answer and harms nothing.
    @Test(arguments: SystemCall.allCases)
    func theDriverFailsTheCall(_ call: SystemCall) {
      MockingDriver.withMocking { driver in
        driver.force(.ioError, on: call)
        #expect(Self.invoke(call) == .failed(.ioError), "\(call)")
        #expect(driver.calls[call] == 1, "\(call)")
      }
    }

    /// A path that does not exist, as a C string.
    private static let missing = "/nonexistent-skipbackup-mocking/item"

    private static func outcome(_ result: some FixedWidthInteger) -> Outcome {
      switch valueOrErrnoOnce({ result }) {
      case .success: .succeeded
      case .failure(let errno): .failed(errno)
      }
    }

    /// For the calls that return their error number.
    private static func outcome(returned code: CInt) -> Outcome {
      code == 0 ? .succeeded : .failed(Errno(returned: code))
    }

    private static func outcome<P>(_ pointer: UnsafeMutablePointer<P>?) -> Outcome {
      switch valueOrErrnoOnce({ pointer == nil ? -1 : 0 }) {
      case .success:
        system_free(pointer)
        return .succeeded
      case .failure(let errno): return .failed(errno)
      }
    }

    /// Zeroed memory for a C structure this target cannot name (`statx`
    /// and `statfs` come from CXattr's headers), its type the wrapper's.
    private static func scratch<T, R>(_ body: (UnsafeMutablePointer<T>) -> R) -> R {
      let memory = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
      defer { memory.deallocate() }
      memory.initializeMemory(as: UInt8.self, repeating: 0, count: 4096)
      return body(memory.bindMemory(to: T.self, capacity: 1))
    }

    // swift-format-ignore: FunctionLength
    private static func invoke(_ call: SystemCall) -> Outcome {
      var buffer = [UInt8](repeating: 0, count: 64)
      var status = stat()
      let name = "user.skipbackup.mocking"
      return buffer.withUnsafeMutableBytes { bytes in
        let list = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
        switch call {
        case .getxattr: return outcome(system_getxattr(missing, name, bytes.baseAddress, 64))
        case .lgetxattr: return outcome(system_lgetxattr(missing, name, bytes.baseAddress, 64))
        case .fgetxattr: return outcome(system_fgetxattr(-1, name, bytes.baseAddress, 64))
        case .getxattrat:
          return outcome(system_getxattrat(-1, "x", 0, name, bytes.baseAddress, 64))
        case .setxattr: return outcome(system_setxattr(missing, name, nil, 0, 0))
        case .lsetxattr: return outcome(system_lsetxattr(missing, name, nil, 0, 0))
        case .fsetxattr: return outcome(system_fsetxattr(-1, name, nil, 0, 0))
        case .setxattrat: return outcome(system_setxattrat(-1, "x", 0, name, nil, 0, 0))
        case .listxattr: return outcome(system_listxattr(missing, list, 64))
        case .llistxattr: return outcome(system_llistxattr(missing, list, 64))
        case .flistxattr: return outcome(system_flistxattr(-1, list, 64))
        case .listxattrat: return outcome(system_listxattrat(-1, "x", 0, list, 64))
        case .removexattr: return outcome(system_removexattr(missing, name))
        case .lremovexattr: return outcome(system_lremovexattr(missing, name))
        case .fremovexattr: return outcome(system_fremovexattr(-1, name))
        case .removexattrat: return outcome(system_removexattrat(-1, "x", 0, name))
        case .openat:
          return outcome(system_openat(AT_FDCWD, missing, O_RDONLY, 0))
        case .close: return outcome(system_close(-1))
        case .read: return outcome(system_read(-1, bytes.baseAddress, 64))
        case .write: return outcome(system_write(-1, bytes.baseAddress, 64))
        case .poll:
          var descriptor = pollfd(fd: -1, events: Int16(POLLIN), revents: 0)
          return outcome(system_poll(&descriptor, 1, 0))
        case .fsync: return outcome(system_fsync(-1))
        case .fchmod: return outcome(system_fchmod(-1, 0o600))
        case .fchown: return outcome(system_fchown(-1, 0, 0))
        case .getdents64: return outcome(system_getdents64(-1, bytes.baseAddress!, 64))
        case .fstatat:
          return outcome(system_fstatat(AT_FDCWD, missing, &status, 0))
        case .fstat: return outcome(system_fstat(-1, &status))
        case .statx: return outcome(scratch { system_statx(-1, "x", 0, 0, $0) })
        case .fstatfs: return outcome(scratch { system_fstatfs(-1, $0) })
        case .openat2:
          return outcome(system_openat2(AT_FDCWD, missing, O_RDONLY, 0, 0))
        case .renameat2:
          return outcome(
            system_renameat2(
              AT_FDCWD, missing, AT_FDCWD, missing, 0))
        case .renameat:
          return outcome(
            system_renameat(
              AT_FDCWD, missing, AT_FDCWD, missing))
        case .linkat:
          return outcome(
            system_linkat(
              AT_FDCWD, missing, AT_FDCWD, missing, 0))
        case .unlinkat: return outcome(system_unlinkat(AT_FDCWD, missing, 0))
        case .realpath: return outcome(system_realpath(missing, nil))
        case .readlinkat:
          return outcome(system_readlinkat(AT_FDCWD, missing, list, 64))
        case .flock: return outcome(system_flock(-1, LOCK_EX))
        case .getInodeFlags:
          var flags: CInt = 0
          return outcome(system_get_inode_flags(-1, &flags))
        case .setInodeFlags:
          var flags: CInt = 0
          return outcome(system_set_inode_flags(-1, &flags))
        case .attrCopyAction: return outcome(system_attr_copy_action(name))
        case .getrlimit:
          var limit = rlimit()
          return outcome(system_getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit))
        case .setrlimit:
          var limit = rlimit()
          return outcome(system_setrlimit(9999, &limit))
        case .pthreadCreate:
          var thread = pthread_t()
          let code = system_pthread_create(&thread, { _ in nil }, nil)
          if code == 0 { _ = system_pthread_join(thread) }
          return outcome(returned: code)
        case .pthreadJoin: return outcome(returned: system_pthread_join(pthread_self()))
        case .sysconf: return outcome(system_sysconf(-1))
        case .getcwd: return outcome(system_getcwd())
        case .sigaction: return outcome(system_sigaction(0, nil, nil))
        case .pipe2:
          var descriptors: [CInt] = [-1, -1]
          return outcome(system_pipe2(&descriptors, -1))
        case .waitpid:
          var status: CInt = 0
          return outcome(system_waitpid(pid_t.max, &status, WNOHANG))
        case .access: return outcome(system_access(missing, F_OK))
        case .posixSpawn:
          var actions = posix_spawn_file_actions_t()
          _ = posix_spawn_file_actions_init(&actions)
          defer { _ = posix_spawn_file_actions_destroy(&actions) }
          let arguments = CStringArray([Array(missing.utf8)])
          let environment = CStringArray([])
          var pid = pid_t()
          return outcome(
            returned: system_posix_spawn(
              &pid, arguments.pointers[0]!, &actions, arguments.pointers, environment.pointers))
        case .posixSpawnFileActionsInit:
          var actions = posix_spawn_file_actions_t()
          let code = system_posix_spawn_file_actions_init(&actions)
          if code == 0 { _ = posix_spawn_file_actions_destroy(&actions) }
          return outcome(returned: code)
        case .posixSpawnFileActionsAddopen:
          var actions = posix_spawn_file_actions_t()
          _ = posix_spawn_file_actions_init(&actions)
          defer { _ = posix_spawn_file_actions_destroy(&actions) }
          return outcome(
            returned: system_posix_spawn_file_actions_addopen(&actions, -1, missing, O_RDONLY, 0))
        case .posixSpawnFileActionsAdddup2:
          var actions = posix_spawn_file_actions_t()
          _ = posix_spawn_file_actions_init(&actions)
          defer { _ = posix_spawn_file_actions_destroy(&actions) }
          return outcome(returned: system_posix_spawn_file_actions_adddup2(&actions, -1, 1))
        case .unshare: return outcome(system_unshare(-1))
        case .mount: return outcome(system_mount(nil, missing, nil, 0, nil))
        case .fsopen: return outcome(system_fsopen("skipbackup-mocking", 0))
        case .fsconfig: return outcome(system_fsconfig(-1, 0, nil, nil, 0))
        case .fsmount: return outcome(system_fsmount(-1, 0, 0))
        case .moveMount: return outcome(system_move_mount(-1, "", -1, "", 0))
        case .getpwuidR:
          var entry = passwd()
          var found: UnsafeMutablePointer<passwd>?
          var text = [CChar](repeating: 0, count: 4096)
          return outcome(returned: system_getpwuid_r(0, &entry, &text, text.count, &found))
        case .mknodat:
          return outcome(system_mknodat(AT_FDCWD, missing, S_IFCHR, 0, 0))
        case .mkdirat: return outcome(system_mkdirat(AT_FDCWD, missing, 0o700))
        case .futimens:
          var times = [timespec(), timespec()]
          return outcome(system_futimens(-1, &times))
        case .chdir: return outcome(system_chdir(missing))
        case .execvp:
          let arguments = CStringArray([Array(missing.utf8)])
          return outcome(system_execvp(arguments.pointers[0]!, arguments.pointers))
        case .dup: return outcome(system_dup(-1))
        case .dup2: return outcome(system_dup2(-1, 1))
        case .setenv: return outcome(system_setenv("", "", 0))
        case .fchdir: return outcome(system_fchdir(-1))
        case .chroot: return outcome(system_chroot(missing))
        case .openTree: return outcome(system_open_tree(-1, missing, 0))
        case .mountSetattr: return outcome(system_mount_setattr(-1, missing, 0, 0))
        case .btrfsSnapshotCreate:
          return outcome(system_btrfs_snapshot_create(-1, -1, "skipbackup-mocking", true))
        case .btrfsSnapshotDestroy:
          return outcome(system_btrfs_snapshot_destroy(-1, "skipbackup-mocking"))
        case .btrfsSubvolumeGetFlags:
          var flags: UInt64 = 0
          return outcome(system_btrfs_subvolume_get_flags(-1, &flags))
        case .btrfsSubvolumeSetFlags: return outcome(system_btrfs_subvolume_set_flags(-1, 0))
        case .btrfsTreeSearch:
          let search = system_btrfs_inode_search_new()
          defer { system_btrfs_inode_search_free(search) }
          system_btrfs_inode_search_start(search, 256, 256)
          var inode: CUnsignedLongLong = 0
          var done: CInt = 0
          return outcome(CInt(system_btrfs_inode_search_step(-1, search, &inode, &done)))
        case .btrfsSubvolumeChildren:
          var next: UInt64 = 0
          var count: CInt = 0
          var treeids = [CUnsignedLongLong](repeating: 0, count: SnapshotFlag.childrenMost)
          var dirids = treeids
          return outcome(system_btrfs_subvolume_children(-1, &next, &treeids, &dirids, &count))
        case .btrfsSubvolumePlace:
          var path = [CChar](repeating: 0, count: SnapshotFlag.placeMost)
          return outcome(system_btrfs_subvolume_place(-1, 256, 257, &path))
        case .btrfsSubvolumeInfo:
          var (id, made): (UInt64, UInt64) = (0, 0)
          return outcome(system_btrfs_subvolume_identity(-1, &id, &made))
        case .btrfsFilesystemInfo:
          var fsid: [UInt8] = []
          return outcome(system_btrfs_filesystem_id(-1, &fsid))
        case .pthreadKill: return outcome(returned: system_pthread_kill(pthread_self(), 0))
        case .sigpending:
          var set = sigset_t()
          return outcome(system_sigpending(&set))
        case .fork:
          // Should the driver not be asked, the child ends at once and is waited for.
          let pid = system_fork()
          if pid == 0 { system__exit(0) }
          if pid > 0 {
            var status: CInt = 0
            _ = system_waitpid(pid, &status, 0)
          }
          return outcome(pid)
        case .kill: return outcome(system_kill(pid_t.max, 0))
        case .sigprocmask:
          var set = sigset_t()
          return outcome(system_sigprocmask(-1, &set, nil))
        case .sigwaitinfo:
          // An address the kernel refuses (EFAULT) rather than a set it would wait on.
          var code: CInt = 0
          return outcome(system_sigwaitinfo(UnsafePointer(bitPattern: 8)!, &code))
        case .setParentDeathSignal: return outcome(system_set_parent_death_signal(-1))
        case .fanotifyInit:
          // Flags no kernel knows (EINVAL), so no group is made.
          return outcome(system_fanotify_init(0x8000_0000, 0))
        case .fanotifyMark:
          return outcome(
            system_fanotify_mark(
              -1, FanotifyMarkFlags.add.rawValue, FanotifyEvents.created.rawValue, -1, missing))
        case .nameToHandleAt:
          // struct file_handle's two fields and MAX_HANDLE_SZ (128) bytes.
          var handle = [UInt8](repeating: 0, count: 8 + 128)
          var mountID: CInt = 0
          return handle.withUnsafeMutableBytes { handle in
            outcome(
              system_name_to_handle_at(
                AT_FDCWD, missing, handle.baseAddress!, &mountID, 0))
          }
        case .readEvents: return outcome(system_read_events(-1, bytes.baseAddress, 64))
        case .fanotifyFlush: return outcome(system_fanotify_flush(-1, 0))
        }
      }
    }
  }
#endif
