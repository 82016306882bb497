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
/// inode gets them before it is visible: the old file's extended attributes
/// (through libattr, honouring /etc/xattr.conf), its permissions and owner,
/// and then the mark.
///
/// Where the filesystem has `O_TMPFILE`, the file has no name until it is
/// complete; elsewhere it is created under a hidden temporary name and
/// marked before a byte is written.
package final class ReplacementFile {
  /// The file being written; its mark is set through this item.
  package let item: FileItem
  private let directory: CInt
  private let name: FilePath
  private let descriptor: CInt
  private var temporaryName: FilePath?
  private var committed = false

  /// Prepares to replace the file at `path` (a symbolic link is followed to
  /// its target). With `keepingOldMetadata`, an existing file lends the new
  /// one its permissions, owner and attributes; a new file gets
  /// `permissions`, less the umask.
  package init(
    replacing path: FilePath, keepingOldMetadata: Bool = true, permissions: mode_t = 0o666
  ) throws(SkipBackupError) {
    let target = (try? resolvedTarget(path)) ?? path
    let parent = target.removingLastComponent().isEmpty ? "." : target.removingLastComponent()
    guard let last = target.lastComponent else {
      throw SkipBackupError(refusing: .namesNoFile, path: path)
    }
    let name = FilePath(root: nil, [last])
    let parentItem = FileItem(path: parent)
    let directory = try parent.withCString { parent in
      valueOrErrno { system_openat(CXATTR_AT_FDCWD, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
    }.get(.openat, parentItem)

    // The old file, when there is one, lends its permissions, owner and attributes.
    var old = stat()
    let oldExists =
      name.withCString { name in
        valueOrErrno { system_fstatat(directory, name, &old, 0) }
      }.isSuccess && keepingOldMetadata
    let mode = oldExists ? old.st_mode & 0o7777 : permissions

    var created = valueOrErrno {
      system_openat(directory, ".", CXATTR_O_TMPFILE | O_WRONLY | O_CLOEXEC, mode)
    }
    var temporaryName: FilePath? = nil
    if case .failure = created {
      // No O_TMPFILE here: a hidden name in the same directory, so the rename stays atomic.
      for _ in 0..<100 {
        let candidate = hiddenName(for: last)
        created = candidate.withCString { candidate in
          valueOrErrno {
            system_openat(directory, candidate, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
          }
        }
        guard case .failure(.fileExists) = created else {
          temporaryName = candidate
          break
        }
      }
    }
    let descriptor: CInt
    switch created {
    case .success(let opened):
      descriptor = opened
    case .failure(let errno):
      _ = system_close(directory)
      throw SkipBackupError(.openat, errno, path: path)
    }
    self.directory = directory
    self.name = name
    self.descriptor = descriptor
    self.temporaryName = temporaryName
    self.item = FileItem(descriptor: FileDescriptor(rawValue: descriptor), displayPath: path)

    if oldExists {
      // As cp -p does, as far as allowed: root may give the file back to its owner.
      _ = system_fchown(descriptor, old.st_uid, old.st_gid)
      _ = system_fchmod(descriptor, mode)
      let oldFile = name.withCString { name in
        valueOrErrno { system_openat(directory, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0) }
      }
      if case .success(let oldDescriptor) = oldFile {
        defer { _ = system_close(oldDescriptor) }
        try copyAttributes(from: oldDescriptor, path: path)
      }
    } else if temporaryName != nil {
      _ = system_fchmod(descriptor, mode & ~currentUmask())
    }
  }

  /// Fills the new file from the regular file at `source`: its bytes, its
  /// permissions and every extended attribute, marks among them.
  package func copy(from source: FilePath) throws(SkipBackupError) {
    let sourceItem = FileItem(path: source)
    let input = try source.withCString { source in
      valueOrErrno { system_openat(CXATTR_AT_FDCWD, source, O_RDONLY | O_CLOEXEC, 0) }
    }.get(.openat, sourceItem)
    defer { _ = system_close(input) }
    var status = stat()
    _ = try valueOrErrno { system_fstat(input, &status) }.get(.fstat, sourceItem)
    _ = system_fchmod(descriptor, status.st_mode & 0o7777)
    try copyAttributes(from: input, path: source)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let count = try valueOrErrno { system_read(input, buffer.baseAddress, buffer.count) }
        .get(.read, sourceItem)
      if count == 0 { return }
      try write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }
  }

  /// Copies every extended attribute of the open file `source` to the new file.
  ///
  /// The corresponding C function is libattr's `attr_copy_fd(3)`.
  package func copyAttributes(from source: CInt, path: FilePath) throws(SkipBackupError) {
    let result = path.withCString { sourcePath in
      item.displayPath.withCString { destinationPath in
        valueOrErrno { system_attr_copy_fd(sourcePath, source, destinationPath, descriptor) }
      }
    }
    _ = try result.get(.attrCopyFD, FileItem(path: path))
  }

  /// Appends `bytes` to the new file.
  package func write(_ bytes: UnsafeRawBufferPointer) throws(SkipBackupError) {
    _ = try OutputDescriptor.writeAll(bytes, to: descriptor).get(.write, item)
  }

  /// Syncs the new file and renames it over the old one; then syncs the
  /// directory, so that the rename survives a crash.
  package func commit() throws(SkipBackupError) {
    _ = try valueOrErrno { system_fsync(descriptor) }.get(.fsync, item)
    let staged: FilePath
    if let temporaryName {
      staged = temporaryName
    } else {
      // Give the anonymous file a hidden name, then rename that over the target.
      var linked: Result<CInt, Errno> = .failure(.fileExists)
      var candidate = FilePath()
      let source = FilePath("/proc/self/fd/\(descriptor)")
      let directory = directory
      for _ in 0..<100 {
        candidate = hiddenName(for: name.lastComponent!)
        linked = source.withCString { source in
          candidate.withCString { candidate in
            valueOrErrno {
              system_linkat(CXATTR_AT_FDCWD, source, directory, candidate, AT_SYMLINK_FOLLOW)
            }
          }
        }
        guard case .failure(.fileExists) = linked else { break }
      }
      _ = try linked.get(.linkat, item)
      temporaryName = candidate
      staged = candidate
    }
    let directory = directory
    let renamed = staged.withCString { staged in
      name.withCString { name in
        valueOrErrno { system_renameat(directory, staged, directory, name) }
      }
    }
    _ = try renamed.get(.renameat, item)
    committed = true
    _ = system_fsync(directory)
  }

  deinit {
    let directory = directory
    if !committed, let temporaryName {
      _ = temporaryName.withCString { system_unlinkat(directory, $0, 0) }
    }
    _ = system_close(descriptor)
    _ = system_close(directory)
  }
}

/// The file a symbolic link at `path` points to, or `path` when it is none.
private func resolvedTarget(_ path: FilePath) throws(SkipBackupError) -> FilePath {
  let item = FileItem(path: path, followSymbolicLinks: false)
  guard try item.status().st_mode & S_IFMT == S_IFLNK else { return path }
  let resolved: FilePath? = path.withCString { pointer in
    guard let canonical = system_realpath(pointer, nil) else { return nil }
    defer { free(canonical) }
    return FilePath(platformString: canonical)
  }
  return resolved ?? path
}

/// `.NAME.skipbackup-RANDOM`: hidden, and beside the file it will replace.
private func hiddenName(for name: FilePath.Component) -> FilePath {
  FilePath(".\(name).skipbackup-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))")
}

extension Result {
  fileprivate var isSuccess: Bool {
    if case .success = self { return true }
    return false
  }
}

private func currentUmask() -> mode_t {
  let mask = system_umask(0)
  _ = system_umask(mask)
  return mask
}
