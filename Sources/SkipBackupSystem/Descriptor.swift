// An open file descriptor this process owns, and the calls made on it.
// Each call carries its own SystemCall case and throws the one error type,
// naming the path the descriptor was opened by: no caller pairs a case
// with a raw call. An item, once opened, is reached through its descriptor
// alone, so that a path another user changes between two looks is never
// resolved again (systemd's "unsafe path transition", CVE-2018-15686's
// class of bug).

import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An open file descriptor that this value owns: closed exactly once, when
/// the value ends, unless its ownership passes on (``release()``, to a child
/// or the kernel) or it is closed on purpose (``close()``, which reports
/// the error). `~Copyable`, so no second owner can close it again, nor use
/// it after it was closed.
package struct Descriptor: ~Copyable {
  /// The descriptor number, for a call made with it; reading it passes no
  /// ownership. -1 once released.
  package private(set) var rawValue: CInt
  /// The path it was opened by, for messages.
  package let path: FilePath

  /// Takes ownership of `rawValue`, a descriptor a call just returned,
  /// opened by `path`.
  package init(adopting rawValue: CInt, path: FilePath) {
    self.rawValue = rawValue
    self.path = path
  }

  /// Closes it; `close(2)` on Linux has closed the descriptor whatever it
  /// answers, and an error here (`EIO` of a network filesystem's last
  /// write) is for ``close()`` to report.
  deinit {
    if rawValue >= 0 { _ = system_close(rawValue) }
  }

  /// A duplicate of `number` (`dup(2)`, close-on-exec), which this value
  /// owns: a descriptor it did not open (standard input), read through a
  /// value that closes only its own copy.
  package init(duplicating number: CInt, path: FilePath) throws(SkipBackupError) {
    let copy = try valueOrErrno { system_fcntl_dupfd_cloexec(number) }.get(.dup, path)
    self.init(adopting: copy, path: path)
  }

  /// Gives up ownership: the number, which the caller (or the child or
  /// kernel it hands it to) now closes.
  package consuming func release() -> CInt {
    let number = rawValue
    rawValue = -1
    return number
  }

  /// Closes it now, and says whether the kernel reported an error: a file
  /// written through it may not be on the disk. Not made again after
  /// `EINTR`, which on Linux has closed it too.
  package consuming func close() throws(SkipBackupError) {
    let shown = path
    let number = release()
    _ = try valueOrErrnoOnce { system_close(number) }.get(.close, shown)
  }

  /// The path of the entry `name` below this one, for messages.
  private func below(_ name: FilePath) -> FilePath {
    name.isAbsolute || name == FilePath(".") || name.isEmpty
      ? name : path.appending(name.components)
  }
}

// MARK: - Opening

extension Descriptor {
  /// Opens `path`, relative to the working directory.
  package static func open(
    _ path: FilePath, _ flags: OpenFlags, mode: mode_t = 0
  ) throws(SkipBackupError) -> Descriptor {
    let number = try path.withCString { name in
      valueOrErrno {
        system_openat(CLINUX_AT_FDCWD, name, flags.union(.closeOnExec).rawValue, mode)
      }
    }.get(.openat, path)
    return Descriptor(adopting: number, path: path)
  }

  /// Opens `name`, relative to this directory; the error and the new
  /// descriptor name `reporting`, or this one's path with `name` after it.
  package func open(
    _ name: FilePath, _ flags: OpenFlags, mode: mode_t = 0, reporting: FilePath? = nil
  ) throws(SkipBackupError) -> Descriptor {
    let shown = reporting ?? below(name)
    let number = try name.withCString { cName in
      valueOrErrno { system_openat(rawValue, cName, flags.union(.closeOnExec).rawValue, mode) }
    }.get(.openat, shown)
    return Descriptor(adopting: number, path: shown)
  }

  /// Opens `path` as `openat2(2)` does, relative to the working
  /// directory, resolving it only as `resolve` allows: with
  /// ``ResolveFlags/noLinks`` a symbolic link anywhere on the way is
  /// refused (`ELOOP`), not followed.
  ///
  /// Where the kernel lacks `openat2` (`ENOSYS`: before Linux 5.6, or a
  /// seccomp filter that does not know it), the path is walked one
  /// component at a time with `O_NOFOLLOW`, each directory reached from
  /// the one before by descriptor, which refuses the same links (a magic
  /// link is a symbolic link to `O_NOFOLLOW`); the other flags have no
  /// such walk, and are then refused with `ENOSYS`.
  package static func open(
    _ path: FilePath, _ flags: OpenFlags, resolve: ResolveFlags, mode: mode_t = 0
  ) throws(SkipBackupError) -> Descriptor {
    try openResolving(path, base: CLINUX_AT_FDCWD, shown: path, flags, resolve, mode)
  }

  /// ``open(_:_:resolve:mode:)`` relative to this directory.
  package func open(
    _ path: FilePath, _ flags: OpenFlags, resolve: ResolveFlags, mode: mode_t = 0
  ) throws(SkipBackupError) -> Descriptor {
    try Self.openResolving(path, base: rawValue, shown: below(path), flags, resolve, mode)
  }

  private static func openResolving(
    _ path: FilePath, base: CInt, shown: FilePath, _ flags: OpenFlags, _ resolve: ResolveFlags,
    _ mode: mode_t
  ) throws(SkipBackupError) -> Descriptor {
    let flags = flags.union(.closeOnExec)
    let opened = path.withCString { name in
      valueOrErrno { system_openat2(base, name, flags.rawValue, mode, resolve.rawValue) }
    }
    switch opened {
    case .success(let number): return Descriptor(adopting: number, path: shown)
    case .failure(.noFunction) where resolve.isSubset(of: .noLinks):
      return try openByComponents(path, base: base, shown: shown, flags, mode: mode)
    case .failure(let errno): throw SkipBackupError(.openat2, errno, path: shown)
    }
  }

  /// ``open(_:_:resolve:mode:)``'s walk where the kernel has no
  /// `openat2`: each directory on the way opened `O_PATH | O_NOFOLLOW`
  /// from the one before, the last component with `flags` and
  /// `O_NOFOLLOW`; a symbolic link met is `ELOOP`, as `openat2` says.
  private static func openByComponents(
    _ path: FilePath, base: CInt, shown: FilePath, _ flags: OpenFlags, mode: mode_t
  ) throws(SkipBackupError) -> Descriptor {
    var components = Array(path.components)
    let start: FilePath = path.isAbsolute ? "/" : "."
    var current = try Descriptor.openRaw(
      start, in: base, [.pathOnly, .directory], mode: 0, shown: shown)
    guard let last = components.popLast() else {
      return try Descriptor.openRaw(start, in: base, flags, mode: mode, shown: shown)
    }
    for component in components {
      let next = try Descriptor.openRaw(
        FilePath(root: nil, [component]), in: current.rawValue,
        [.pathOnly, .directory, .noFollow], mode: 0, shown: shown, linkIsLoop: true)
      current = next
    }
    let opened = try Descriptor.openRaw(
      FilePath(root: nil, [last]), in: current.rawValue, flags.union(.noFollow), mode: mode,
      shown: shown, linkIsLoop: true)
    // `O_PATH | O_NOFOLLOW` opens a link itself rather than refuse it.
    if flags.contains(.pathOnly), try opened.status().st_mode & S_IFMT == S_IFLNK {
      throw SkipBackupError(.openat2, .tooManySymbolicLinkLevels, path: shown)
    }
    return opened
  }

  /// One `openat` of the walk above, its failure named as `openat2`'s
  /// (the call the caller asked for); with `linkIsLoop`, a directory's
  /// `ENOTDIR` that is a symbolic link is `ELOOP`.
  private static func openRaw(
    _ name: FilePath, in directory: CInt, _ flags: OpenFlags, mode: mode_t, shown: FilePath,
    linkIsLoop: Bool = false
  ) throws(SkipBackupError) -> Descriptor {
    let opened = name.withCString { cName in
      valueOrErrno { system_openat(directory, cName, flags.union(.closeOnExec).rawValue, mode) }
    }
    switch opened {
    case .success(let number): return Descriptor(adopting: number, path: shown)
    case .failure(.notDirectory) where linkIsLoop:
      var status = stat()
      let looked = name.withCString { cName in
        valueOrErrno {
          system_fstatat(directory, cName, &status, AtFlags.symbolicLinkNoFollow.rawValue)
        }
      }
      let isLink = (try? looked.get(.fstatat, shown)) != nil && status.st_mode & S_IFMT == S_IFLNK
      throw SkipBackupError(
        .openat2, isLink ? .tooManySymbolicLinkLevels : .notDirectory, path: shown)
    case .failure(let errno): throw SkipBackupError(.openat2, errno, path: shown)
    }
  }
}

// MARK: - Looking at it

extension Descriptor {
  /// Its status, `fstat(2)`.
  package func status() throws(SkipBackupError) -> stat {
    var status = stat()
    _ = try valueOrErrno { system_fstat(rawValue, &status) }.get(.fstat, path)
    return status
  }

  /// The status of its entry `name`, `fstatat(2)`.
  package func status(
    of name: FilePath, _ flags: AtFlags = .symbolicLinkNoFollow, reporting: FilePath? = nil
  ) throws(SkipBackupError) -> stat {
    var status = stat()
    _ = try name.withCString { cName in
      valueOrErrno { system_fstatat(rawValue, cName, &status, flags.rawValue) }
    }.get(.fstatat, reporting ?? below(name))
    return status
  }

  /// The status of the filesystem it is on, `fstatfs(2)`.
  package func filesystemStatus() throws(SkipBackupError) -> statfs {
    var status = statfs()
    _ = try valueOrErrno { system_fstatfs(rawValue, &status) }.get(.fstatfs, path)
    return status
  }

  /// Reads into `buffer`; the bytes read, 0 at the end.
  package func read(into buffer: UnsafeMutableRawBufferPointer) throws(SkipBackupError) -> Int {
    try valueOrErrno { system_read(rawValue, buffer.baseAddress, buffer.count) }.get(.read, path)
  }

  /// Reads into `bytes` from `offset` to its end; the bytes read, 0 at
  /// the end of the file.
  package func read(into bytes: inout [UInt8], from offset: Int) throws(SkipBackupError) -> Int {
    let number = rawValue
    return try bytes.withUnsafeMutableBytes { buffer in
      valueOrErrno { system_read(number, buffer.baseAddress! + offset, buffer.count - offset) }
    }.get(.read, path)
  }

  /// Where the symbolic link `name` in this directory points.
  package func linkTarget(of name: FilePath) throws(SkipBackupError) -> FilePath {
    try Self.linkTarget(name, in: rawValue, reporting: below(name))
  }

  /// Where the symbolic link at `path` points, `path` relative to the
  /// working directory (a `/proc/self/fd/N`, which says where a descriptor
  /// leads); the error names `reporting`.
  package static func linkTarget(at path: FilePath, reporting: FilePath) throws(SkipBackupError)
    -> FilePath
  {
    try linkTarget(path, in: CLINUX_AT_FDCWD, reporting: reporting)
  }

  private static func linkTarget(_ name: FilePath, in directory: CInt, reporting: FilePath)
    throws(SkipBackupError) -> FilePath
  {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let size = buffer.count - 1
    let count = try name.withCString { cName in
      valueOrErrno { system_readlinkat(directory, cName, &buffer, size) }
    }.get(.readlinkat, reporting)
    buffer[count] = 0
    return FilePath(platformString: buffer)
  }
}

// MARK: - Changing entries and the item

extension Descriptor {
  /// Makes the directory `name` in this one.
  package func makeDirectory(_ name: FilePath, mode: mode_t) throws(SkipBackupError) {
    _ = try name.withCString { cName in
      valueOrErrno { system_mkdirat(rawValue, cName, mode) }
    }.get(.mkdirat, below(name))
  }

  /// Removes the entry `name` of this directory (``AtFlags/removeDirectory``
  /// for a directory).
  package func removeEntry(_ name: FilePath, _ flags: AtFlags = []) throws(SkipBackupError) {
    _ = try name.withCString { cName in
      valueOrErrno { system_unlinkat(rawValue, cName, flags.rawValue) }
    }.get(.unlinkat, below(name))
  }

  /// Renames its entry `name` to `newName` in `directory` (`renameat2(2)`).
  package func rename(
    _ name: FilePath, to newName: FilePath, in directory: borrowing Descriptor,
    _ flags: RenameFlags = []
  ) throws(SkipBackupError) {
    let target = directory.rawValue
    _ = try name.withCString { old in
      newName.withCString { new in
        valueOrErrno { system_renameat2(rawValue, old, target, new, flags.rawValue) }
      }
    }.get(.renameat2, below(name))
  }

  /// Changes its owner and group, `fchown(2)`.
  package func changeOwner(_ owner: uid_t, group: gid_t) throws(SkipBackupError) {
    _ = try valueOrErrno { system_fchown(rawValue, owner, group) }.get(.fchown, path)
  }

  /// Changes its mode, `fchmod(2)`.
  package func changeMode(_ mode: mode_t) throws(SkipBackupError) {
    _ = try valueOrErrno { system_fchmod(rawValue, mode) }.get(.fchmod, path)
  }

  /// Writes what was written through it to the disk, `fsync(2)`.
  package func synchronize() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsync(rawValue) }.get(.fsync, path)
  }
}

// MARK: - Mounts

extension Descriptor {
  /// A new filesystem context of `type` (`fsopen(2)`), to configure and
  /// mount.
  package static func filesystemContext(_ type: String) throws(SkipBackupError) -> Descriptor {
    let number = try type.withCString { name in
      valueOrErrno { system_fsopen(name, MountFlag.fsopenCloseOnExec) }
    }.get(.fsopen, FilePath(type))
    return Descriptor(adopting: number, path: FilePath(type))
  }

  /// Sets the flag `key` of this filesystem context (`fsconfig(2)`).
  package func configure(flag key: String) throws(SkipBackupError) {
    _ = try key.withCString { cKey in
      valueOrErrno { system_fsconfig(rawValue, MountFlag.setFlag, cKey, nil, 0) }
    }.get(.fsconfig, path)
  }

  /// Sets `key` to the bytes of `value` (`fsconfig(2)`).
  package func configure(_ key: String, to value: [UInt8]) throws(SkipBackupError) {
    _ = try key.withCString { cKey in
      (value + [0]).withUnsafeBytes { bytes in
        valueOrErrno { system_fsconfig(rawValue, MountFlag.setString, cKey, bytes.baseAddress, 0) }
      }
    }.get(.fsconfig, path)
  }

  /// Creates the filesystem this context describes (`fsconfig(2)`'s
  /// `FSCONFIG_CMD_CREATE`).
  package func createFilesystem() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsconfig(rawValue, MountFlag.create, nil, nil, 0) }.get(
      .fsconfig, path)
  }

  /// A detached mount of the filesystem this context created
  /// (`fsmount(2)`), attached nowhere until ``moveMount(onto:)``.
  package func mount(_ attributes: MountAttributes) throws(SkipBackupError) -> Descriptor {
    let number = try valueOrErrno {
      system_fsmount(rawValue, MountFlag.fsmountCloseOnExec, attributes.rawValue)
    }.get(.fsmount, path)
    return Descriptor(adopting: number, path: path)
  }

  /// A descriptor of the mount at `name` in this directory, or a detached
  /// copy of it (``OpenTreeFlags/clone``), `open_tree(2)`.
  package func openTree(_ name: FilePath = "", _ flags: OpenTreeFlags) throws(SkipBackupError)
    -> Descriptor
  {
    let flags = flags.union(.closeOnExec).union(name.isEmpty ? .emptyPath : [])
    let shown = below(name)
    let number = try name.withCString { cName in
      valueOrErrno { system_open_tree(rawValue, cName, flags.rawValue) }
    }.get(.openTree, shown)
    return Descriptor(adopting: number, path: shown)
  }

  /// Attaches this detached mount onto the directory or file `target` is
  /// open on (`move_mount(2)` with both sides by descriptor:
  /// `MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH`): no path is
  /// resolved, so what was opened is what is covered.
  package func moveMount(onto target: borrowing Descriptor) throws(SkipBackupError) {
    let flags: MoveMountFlags = [.fromEmptyPath, .toEmptyPath]
    _ = try valueOrErrno {
      system_move_mount(rawValue, "", target.rawValue, "", flags.rawValue)
    }.get(.moveMount, target.path)
  }

  /// Sets `attributes` on the mount it is open on, clearing none
  /// (`mount_setattr(2)`).
  package func setMountAttributes(_ attributes: MountAttributes) throws(SkipBackupError) {
    _ = try valueOrErrno {
      system_mount_setattr(
        rawValue, "", CUnsignedInt(AtFlags.emptyPath.rawValue), UInt64(attributes.rawValue))
    }.get(.mountSetattr, path)
  }
}

/// Makes the calling thread's namespaces `flags` new (`unshare(2)`); the
/// error names `path`, the ROOT the namespace is for.
package func unshare(_ flags: CloneFlags, for path: FilePath) throws(SkipBackupError) {
  _ = try valueOrErrno { system_unshare(flags.rawValue) }.get(.unshare, path)
}

// MARK: - fanotify

extension Descriptor {
  /// A new fanotify group (`fanotify_init(2)`) whose events' files are
  /// opened with `eventFlags`; `path` names it in messages.
  package static func fanotifyGroup(
    _ flags: FanotifyInitFlags, eventFlags: OpenFlags, for path: FilePath
  ) throws(SkipBackupError) -> Descriptor {
    let number = try valueOrErrno {
      system_fanotify_init(
        flags.union(.closeOnExec).rawValue, CUnsignedInt(bitPattern: eventFlags.rawValue))
    }.get(.fanotifyInit, path)
    return Descriptor(adopting: number, path: path)
  }

  /// Marks `item` (this group's `events` on it, `fanotify_mark(2)`); the
  /// error names the item's path.
  package func mark(
    _ flags: FanotifyMarkFlags, _ events: FanotifyEvents, on item: borrowing Descriptor
  ) throws(SkipBackupError) {
    _ = try valueOrErrno {
      system_fanotify_mark(rawValue, flags.rawValue, events.rawValue, item.rawValue, nil)
    }.get(.fanotifyMark, item.path)
  }

  /// Reads this non-blocking group's queued events into `buffer`: the
  /// bytes read, 0 when none are queued (`EAGAIN`). ``FanotifyRecords``
  /// decodes them.
  package func readEvents(into buffer: UnsafeMutableRawBufferPointer) throws(SkipBackupError)
    -> Int
  {
    switch valueOrErrno({ system_read_events(rawValue, buffer.baseAddress, buffer.count) }) {
    case .success(let count): return count
    case .failure(.resourceTemporarilyUnavailable): return 0
    case .failure(let errno): throw SkipBackupError(.readEvents, errno, path: path)
    }
  }
}
