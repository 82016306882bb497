// An open file descriptor this process owns, and the calls made on it.
// Each call carries its own SystemCall case and throws the one error type,
// naming the path the descriptor was opened by: no caller pairs a case
// with a raw call. An item, once opened, is reached through its descriptor
// alone, so that a path another user changes between two looks is never
// resolved again (systemd's "unsafe path transition", CVE-2018-15686's
// class of bug).

import CFanotify
import CLinux
import CMount
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

// MARK: - Walking below it

extension Descriptor {
  /// Opens the directory `relative` below this one (names separated by
  /// slashes) one name at a time, each from the one before, `O_PATH |
  /// O_DIRECTORY | O_NOFOLLOW`: a directory on the way replaced by a
  /// symbolic link since it was looked at is refused (`ENOTDIR`), never
  /// followed out of the tree, and a path longer than `PATH_MAX` is walked
  /// as well. `O_PATH` asks no permission of the directories themselves:
  /// the descriptor serves for the `*at` calls below it and as a mount's
  /// place. Each directory, and the error, is named by `reporting` with
  /// the names walked after it. `relative` empty opens this directory
  /// again (`.`).
  package func openDirectory(_ relative: [UInt8], reporting: FilePath) throws(SkipBackupError)
    -> Descriptor
  {
    let flags: OpenFlags = [.pathOnly, .directory, .noFollow]
    let names = relative.split(separator: UInt8(ascii: "/"))
    guard let first = names.first else { return try open(".", flags, reporting: reporting) }
    var walked = Array(first)
    var current = try open(
      FilePath(bytes: walked), flags, reporting: reporting.appending(bytes: walked))
    for name in names.dropFirst() {
      walked += [UInt8(ascii: "/")] + name
      current = try current.open(
        FilePath(bytes: Array(name)), flags, reporting: reporting.appending(bytes: walked))
    }
    return current
  }

  /// Calls `body` with the directory `relative` below this one, opened by
  /// ``openDirectory(_:reporting:)``, or with this one itself when
  /// `relative` is empty.
  package func withDirectory<R: ~Copyable>(
    _ relative: [UInt8], reporting: FilePath,
    _ body: (borrowing Descriptor) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R {
    guard relative.contains(where: { $0 != UInt8(ascii: "/") }) else { return try body(self) }
    let directory = try openDirectory(relative, reporting: reporting)
    return try body(directory)
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

  /// The status of the filesystem it is on, `fstatfs(2)`; the error names
  /// `reporting`, or else its path.
  package func filesystemStatus(reporting: FilePath? = nil) throws(SkipBackupError) -> statfs {
    var status = statfs()
    _ = try valueOrErrno { system_fstatfs(rawValue, &status) }.get(.fstatfs, reporting ?? path)
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
  /// Makes the directory `name` in this one; the error names `reporting`,
  /// or else this one's path with `name` after it.
  package func makeDirectory(_ name: FilePath, mode: mode_t, reporting: FilePath? = nil)
    throws(SkipBackupError)
  {
    _ = try name.withCString { cName in
      valueOrErrno { system_mkdirat(rawValue, cName, mode) }
    }.get(.mkdirat, reporting ?? below(name))
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
  package func changeOwner(_ owner: uid_t, group: gid_t, reporting: FilePath? = nil)
    throws(SkipBackupError)
  {
    _ = try valueOrErrno { system_fchown(rawValue, owner, group) }.get(.fchown, reporting ?? path)
  }

  /// Changes its mode, `fchmod(2)`.
  package func changeMode(_ mode: mode_t, reporting: FilePath? = nil) throws(SkipBackupError) {
    _ = try valueOrErrno { system_fchmod(rawValue, mode) }.get(.fchmod, reporting ?? path)
  }

  /// Writes what was written through it to the disk, `fsync(2)`.
  package func synchronize() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsync(rawValue) }.get(.fsync, path)
  }
}

// MARK: - Mounts

extension Descriptor {
  /// A new filesystem context of `type` (`fsopen(2)`), to configure and
  /// mount; it and the mount made of it name `path` (the ROOT it is for),
  /// or else `type`.
  package static func filesystemContext(_ type: String, for path: FilePath? = nil)
    throws(SkipBackupError) -> Descriptor
  {
    let shown = path ?? FilePath(type)
    let number = try type.withCString { name in
      valueOrErrno { system_fsopen(name, CMOUNT_FSOPEN_CLOEXEC) }
    }.get(.fsopen, shown)
    return Descriptor(adopting: number, path: shown)
  }

  /// Sets the flag `key` of this filesystem context (`fsconfig(2)`).
  package func configure(flag key: String) throws(SkipBackupError) {
    _ = try key.withCString { cKey in
      valueOrErrno { system_fsconfig(rawValue, CMOUNT_FSCONFIG_SET_FLAG, cKey, nil, 0) }
    }.get(.fsconfig, path)
  }

  /// Sets `key` to the bytes of `value` (`fsconfig(2)`).
  package func configure(_ key: String, to value: [UInt8]) throws(SkipBackupError) {
    _ = try key.withCString { cKey in
      (value + [0]).withUnsafeBytes { bytes in
        valueOrErrno {
          system_fsconfig(rawValue, CMOUNT_FSCONFIG_SET_STRING, cKey, bytes.baseAddress, 0)
        }
      }
    }.get(.fsconfig, path)
  }

  /// Creates the filesystem this context describes (`fsconfig(2)`'s
  /// `FSCONFIG_CMD_CREATE`).
  package func createFilesystem() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsconfig(rawValue, CMOUNT_FSCONFIG_CMD_CREATE, nil, nil, 0) }.get(
      .fsconfig, path)
  }

  /// A detached mount of the filesystem this context created
  /// (`fsmount(2)`), attached nowhere until ``moveMount(onto:)``.
  package func mount(_ attributes: MountAttributes) throws(SkipBackupError) -> Descriptor {
    let number = try valueOrErrno {
      system_fsmount(rawValue, CMOUNT_FSMOUNT_CLOEXEC, attributes.rawValue)
    }.get(.fsmount, path)
    return Descriptor(adopting: number, path: path)
  }

  /// A descriptor of the mount at `name` in this directory, or a detached
  /// copy of it (``OpenTreeFlags/clone``), `open_tree(2)`.
  package func openTree(
    _ name: FilePath = "", _ flags: OpenTreeFlags, reporting: FilePath? = nil
  ) throws(SkipBackupError) -> Descriptor {
    let flags = flags.union(.closeOnExec).union(name.isEmpty ? .emptyPath : [])
    let shown = reporting ?? below(name)
    let number = try name.withCString { cName in
      valueOrErrno { system_open_tree(rawValue, cName, flags.rawValue) }
    }.get(.openTree, shown)
    return Descriptor(adopting: number, path: shown)
  }

  /// Attaches this detached mount onto the directory or file `target` is
  /// open on (`move_mount(2)` with both sides by descriptor:
  /// `MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH`): no path is
  /// resolved, so what was opened is what is covered. On a place where
  /// something was mounted since it was opened, it goes on top (the
  /// kernel's `lock_mount` follows the mounts stacked there). The error
  /// names `reporting`, or else the target's path.
  package func moveMount(onto target: borrowing Descriptor, reporting: FilePath? = nil)
    throws(SkipBackupError)
  {
    let flags: MoveMountFlags = [.fromEmptyPath, .toEmptyPath]
    _ = try valueOrErrno {
      system_move_mount(rawValue, "", target.rawValue, "", flags.rawValue)
    }.get(.moveMount, reporting ?? target.path)
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

// MARK: - Building and entering a view

extension Descriptor {
  /// Makes the whiteout `name` in this directory: the character device
  /// 0/0, which overlayfs shows as "no such file" (overlayfs.rst,
  /// "whiteouts and opaque directories"). The error names `reporting`.
  package func makeWhiteout(_ name: FilePath, reporting: FilePath) throws(SkipBackupError) {
    _ = try name.withCString { cName in
      valueOrErrno { system_mknodat(rawValue, cName, S_IFCHR, 0, 0) }
    }.get(.mknodat, reporting)
  }

  /// Sets its access and modification times (`futimens(3)`); the error
  /// names `reporting`, or else its path.
  package func changeTimes(
    access: timespec, modification: timespec, reporting: FilePath? = nil
  ) throws(SkipBackupError) {
    let times = [access, modification]
    _ = try times.withUnsafeBufferPointer { buffer in
      valueOrErrno { system_futimens(rawValue, buffer.baseAddress!) }
    }.get(.futimens, reporting ?? path)
  }

  /// Makes the directory it is open on this process's working directory
  /// and root directory (`fchdir(2)`, then `chroot(".")`): a root reached
  /// by descriptor, not by a path looked up again.
  package func enterAsRoot() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fchdir(rawValue) }.get(.fchdir, path)
    _ = try valueOrErrno { system_chroot(".") }.get(.chroot, path)
  }

  /// Opens `path` for the program this process is replaced by: not
  /// close-on-exec, so `execve(2)` keeps it. The number, which that
  /// program owns from then on and nothing here closes.
  package static func openForNextProgram(_ path: FilePath, _ flags: OpenFlags)
    throws(SkipBackupError) -> CInt
  {
    try path.withCString { name in
      valueOrErrno { system_openat(CLINUX_AT_FDCWD, name, flags.rawValue, 0) }
    }.get(.openat, path)
  }
}

/// Makes `directory` the working directory (`chdir(2)`).
package func changeWorkingDirectory(to directory: FilePath) throws(SkipBackupError) {
  _ = try directory.withCString { name in valueOrErrno { system_chdir(name) } }.get(
    .chdir, directory)
}

/// Sets the environment variable `name` to `value` (`setenv(3)`); the
/// error names `path`, what the value is about.
package func setEnvironment(_ name: String, to value: [UInt8], for path: FilePath)
  throws(SkipBackupError)
{
  let cValue = value.map { CChar(bitPattern: $0) } + [0]
  _ = try valueOrErrno { system_setenv(name, cValue, 1) }.get(.setenv, path)
}

/// Sets the propagation of the mounts at `path` and below it (`mount(2)`
/// with no source, type or data).
package func changePropagation(of path: FilePath, _ flags: MountFlags) throws(SkipBackupError) {
  _ = try path.withCString { target in
    valueOrErrno { system_mount(nil, target, nil, flags.rawValue, nil) }
  }.get(.mount, path)
}

/// Makes the calling thread's namespaces `flags` new (`unshare(2)`); the
/// error names `path`, the ROOT the namespace is for.
package func enterNewNamespaces(_ flags: CloneFlags, for path: FilePath) throws(SkipBackupError) {
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

  /// Marks the item that `name` (`nil`: the directory itself) names in
  /// the directory `directory`, a descriptor number as
  /// `FileItem.withAtArguments` gives it; the error names `reporting`.
  package func mark(
    _ flags: FanotifyMarkFlags, _ events: FanotifyEvents, in directory: CInt,
    _ name: UnsafePointer<CChar>?, reporting: FilePath
  ) throws(SkipBackupError) {
    _ = try valueOrErrno {
      system_fanotify_mark(rawValue, flags.rawValue, events.rawValue, directory, name)
    }.get(.fanotifyMark, reporting)
  }

  /// Takes every mark of this group of the kind `flags` names
  /// (``FanotifyMarkFlags/filesystem``, or none for the marks of inodes)
  /// off (`FAN_MARK_FLUSH`); the group queues no event of them after.
  package func flushMarks(_ flags: FanotifyMarkFlags) throws(SkipBackupError) {
    _ = try valueOrErrno { system_fanotify_flush(rawValue, flags.rawValue) }.get(
      .fanotifyFlush, path)
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

/// The handle that identifies the item `name` names in `directory` (a
/// descriptor number as `FileItem.withAtArguments` gives it), as fanotify's
/// events name a directory: `name_to_handle_at(2)` with `flags` and
/// ``AtFlags/handleForIdentity``. The handle (struct file_handle:
/// `handle_bytes`, `handle_type`, `f_handle`) and the ID of the mount it
/// was found on; the error names `reporting`.
package func fileHandle(
  in directory: CInt, _ name: UnsafePointer<CChar>, _ flags: AtFlags, reporting: FilePath
) throws(SkipBackupError) -> (handle: [UInt8], mountID: CInt) {
  // struct file_handle's two fields and the longest handle.
  var handle = [UInt8](repeating: 0, count: 8 + Int(CFANOTIFY_MAX_HANDLE_SZ))
  var mountID: CInt = 0
  let asked = flags.union(.handleForIdentity).rawValue
  _ = try handle.withUnsafeMutableBytes { buffer in
    valueOrErrno {
      system_name_to_handle_at(directory, name, buffer.baseAddress!, &mountID, asked)
    }
  }.get(.nameToHandleAt, reporting)
  return (handle, mountID)
}
