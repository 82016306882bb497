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
  /// The corresponding C functions are `statx(2)`, `openat(2)`, `fstatfs(2)` and
  /// `ioctl(FS_IOC_GETFLAGS)`.
  package func explanation(of errno: Errno) -> (type: FileType?, finding: SkipBackupError.Finding?)
  {
    switch errno {
    case .permissionDenied:
      let looked = extendedStatus(mask: CUnsignedInt(STATX_TYPE))
      if case .failure(let error) = looked, error.errno == .permissionDenied {
        return (nil, .searchDenied)
      }
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
    let mask = CUnsignedInt(STATX_TYPE | STATX_MODE | STATX_UID)
    guard case .success(let buffer) = extendedStatus(mask: mask) else { return (nil, nil) }
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

  /// The type of the filesystem the item is on (`f_type`), if a look can
  /// say: `O_PATH` opens anything, even without permission to read it.
  private func filesystemType() -> UInt? {
    guard let status = try? self.open(.pathOnly).filesystemStatus() else { return nil }
    return UInt(bitPattern: Int(status.f_type))
  }

  /// What `statx(2)` says of the item for `mask`.
  ///
  /// The corresponding C function is `statx(2)`.
  package func extendedStatus(mask: CUnsignedInt) -> Result<statx, SkipBackupError> {
    withAtArguments { directory, path, flags in
      Result { () throws(SkipBackupError) in
        try Descriptor.extendedStatus(
          of: path, in: directory, AtFlags(rawValue: flags), mask: mask,
          reporting: { displayPath })
      }
    }
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
    return try? self.open(.nonBlocking).inodeFlags()
  }
}
