import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where `export -o FILE` writes: a regular or new FILE is written anew
/// beside it and put in place only when complete, so that no truncated
/// rules file is ever left; a device, FIFO or socket is written in place.
///
/// FILE's directory is opened once and the name looked at once, without
/// following a link (``DirectoryEntry``); the open, the new file and its
/// rename are relative to that descriptor. A symbolic link at the name is
/// refused, never followed: root's `export -o /tmp/x` must not write the
/// file another user's link there names, and a link swapped in after the
/// look is replaced by the rename, not written through. Only a link in a
/// directory that no user but root may write is followed, and written in
/// place: no other user can have put it there, and those are the links to a
/// descriptor that the kernel keeps (`/dev/stdout`, `/dev/fd/N`,
/// `/proc/self/fd/N`). What a link leads to is judged by where the link
/// is, never by its path's text: a rules file in a directory of its own
/// under /dev/shm is a regular file like any other, and a write that fails
/// there leaves the old one whole.
package enum OutputFile {
  case inPlace(CInt)
  case replacement(ReplacementFile)

  package var descriptor: CInt {
    switch self {
    case .inPlace(let descriptor): descriptor
    case .replacement(let replacement): replacement.descriptor
    }
  }

  package static func open(_ path: FilePath) throws(SkipBackupError) -> OutputFile {
    // A special file that became a regular one between the look and the
    // open is looked at again; only a changing name runs out of tries.
    for _ in 0..<3 {
      let entry = try DirectoryEntry(path)
      if entry.type == .symbolicLink, entry.onlyRootMayWrite {
        let directory = entry.directory
        let opened = entry.name.withCString { name in
          valueOrErrno {
            system_openat(directory, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
          }
        }
        return .inPlace(try opened.get(.openat, FileItem(path: path)))
      }
      switch entry.type {
      case nil, .regular?:
        return .replacement(try ReplacementFile(entry, reportedAs: path))
      case .symbolicLink?:
        throw SkipBackupError(refusing: .notARegularFile, path: path, fileType: .symbolicLink)
      case .some:
        // No O_CREAT nor O_TRUNC: what is opened is judged before anything
        // is written, and a file swapped in is never cut short.
        let directory = entry.directory
        let descriptor = try entry.name.withCString { name in
          valueOrErrno {
            system_openat(directory, name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0)
          }
        }.get(.openat, FileItem(path: path))
        var opened = stat()
        do throws(SkipBackupError) {
          _ = try valueOrErrno { system_fstat(descriptor, &opened) }.get(
            .fstat, FileItem(path: path))
          try SharedDirectory.refuseForeign(opened, in: entry.directoryStatus, path: path)
        } catch {
          _ = system_close(descriptor)
          throw error
        }
        if opened.st_mode & S_IFMT != S_IFREG { return .inPlace(descriptor) }
        _ = system_close(descriptor)
      }
    }
    throw SkipBackupError(.openat, .resourceTemporarilyUnavailable, path: path)
  }
}
