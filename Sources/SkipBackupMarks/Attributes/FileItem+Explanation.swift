import SkipBackupSystem
import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FileItem {
  /// What a look at the item finds that explains `errno` from a call on it:
  /// its type and a ``SkipBackupError/Finding``, for the error to carry (the
  /// error itself does no I/O). Made only after a failure, so it costs
  /// nothing on the way that works.
  ///
  /// - `EACCES`: whether the item can be looked up at all; when not, a
  ///   directory on the way denies search permission, and the item's own
  ///   permissions are not the reason.
  /// - `EPERM`: the type first (Linux refuses user attributes on links,
  ///   devices, FIFOs and sockets); for a regular file or a directory, the
  ///   filesystem (/proc refuses them), then the inode flags, as
  ///   `FS_IOC_GETFLAGS` gives them, before anyone is told it is immutable.
  /// - `EOPNOTSUPP`, `ENOTTY`, `EROFS`: the filesystem, whose lack it is
  ///   (ramfs keeps no user attributes, squashfs is an image nothing
  ///   writes to), named in the message.
  ///
  /// The corresponding C functions are `statx(2)`, `fstatfs(2)` and
  /// `ioctl(FS_IOC_GETFLAGS)`.
  package func explanation(of errno: Errno) -> (type: FileType?, finding: SkipBackupError.Finding?)
  {
    switch errno {
    case .permissionDenied:
      var buffer = statx()
      let looked = withAtArguments { directory, path, flags in
        valueOrErrno { system_statx(directory, path, flags, CUnsignedInt(STATX_TYPE), &buffer) }
      }
      if case .failure(.permissionDenied) = looked { return (nil, .searchDenied) }
      return (nil, nil)
    case .notPermitted:
      return notPermittedExplanation()
    default:
      return (nil, filesystemFinding(of: errno))
    }
  }

  /// The filesystem, for an `errno` that is its lack rather than the
  /// item's: `EOPNOTSUPP`, `ENOTTY` (no inode flags) and `EROFS`.
  package func filesystemFinding(of errno: Errno) -> SkipBackupError.Finding? {
    switch errno {
    case .notSupported, .inappropriateIOCTLForDevice, .readOnlyFileSystem:
      return filesystemType().map { .filesystem(type: $0) }
    default:
      return nil
    }
  }

  private func notPermittedExplanation() -> (type: FileType?, finding: SkipBackupError.Finding?) {
    var buffer = statx()
    let mask = CUnsignedInt(STATX_TYPE | STATX_MODE | STATX_UID)
    let looked = withAtArguments { directory, path, flags in
      valueOrErrno { system_statx(directory, path, flags, mask, &buffer) }
    }
    guard case .success = looked else { return (nil, nil) }
    let mode = mode_t(buffer.stx_mode)
    let type = FileType(rawValue: mode & S_IFMT)
    guard type == .regular || type == .directory else { return (type, nil) }
    if let filesystem = filesystemType().flatMap(SkipBackupError.PseudoFilesystem.init) {
      return (type, .pseudoFilesystem(filesystem))
    }
    let flags = inodeFlags(buffer)
    if let flags, flags & FS_IMMUTABLE_FL != 0 { return (type, .immutable) }
    if let flags, flags & FS_APPEND_FL != 0 { return (type, .appendOnly) }
    let user = system_geteuid()
    if type == .directory, mode & S_ISVTX != 0, user != 0, buffer.stx_uid != user {
      return (type, .stickyDirectoryOfAnother)
    }
    return (type, flags == nil ? nil : .neitherImmutableNorAppendOnly)
  }

  /// The type of the filesystem the item is on (`f_type`), if a look can say.
  private func filesystemType() -> UInt? {
    var buffer = statfs()
    let looked: Result<CInt, Errno>
    if case .descriptor(let descriptor) = base {
      looked = valueOrErrno { system_fstatfs(descriptor, &buffer) }
    } else {
      // O_PATH opens anything, even without permission to read it.
      let opened = withAtArguments { directory, path, _ in
        valueOrErrno {
          system_openat(
            directory, path, CLINUX_O_PATH | O_CLOEXEC | (followsSymbolicLinks ? 0 : O_NOFOLLOW), 0)
        }
      }
      guard case .success(let descriptor) = opened else { return nil }
      defer { _ = system_close(descriptor) }
      looked = valueOrErrno { system_fstatfs(descriptor, &buffer) }
    }
    guard case .success = looked else { return nil }
    return UInt(bitPattern: Int(buffer.f_type))
  }

  /// The immutable and append-only inode flags: from statx where the
  /// filesystem reports them there, else from `FS_IOC_GETFLAGS`; `nil` when
  /// neither can say (no inode flags here, or the item cannot be opened).
  private func inodeFlags(_ status: statx) -> CInt? {
    let immutable = UInt64(STATX_ATTR_IMMUTABLE)
    let append = UInt64(STATX_ATTR_APPEND)
    if status.stx_attributes_mask & (immutable | append) == immutable | append {
      return (status.stx_attributes & immutable != 0 ? FS_IMMUTABLE_FL : 0)
        | (status.stx_attributes & append != 0 ? FS_APPEND_FL : 0)
    }
    return try? withOpenDescriptor(O_RDONLY | O_NONBLOCK) { descriptor throws(SkipBackupError) in
      var flags: CInt = 0
      return try valueOrErrno { system_get_inode_flags(descriptor, &flags) }
        .map { _ in flags }.get(.getInodeFlags, self)
    }
  }
}
