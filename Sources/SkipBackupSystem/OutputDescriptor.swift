import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Descriptors for the tool's output: opening a file to write, writing whole
/// buffers, closing. Every output path goes through ``writeAll(_:to:)``, the
/// one loop over `write(2)`, so that a short write, an interruption or a full
/// pipe is handled the same everywhere and its failure can be forced in tests.
package enum OutputDescriptor {
  /// Opens `path` for writing with `flags` (`O_CREAT` makes it with
  /// `permissions`, less the umask).
  ///
  /// The corresponding C function is `openat(2)`.
  package static func open(
    _ path: FilePath, flags: CInt, permissions: mode_t = 0o666
  ) -> Result<CInt, Errno> {
    path.withCString { path in
      valueOrErrno { system_openat(CLINUX_AT_FDCWD, path, flags | O_CLOEXEC, permissions) }
    }
  }

  /// Writes every byte of `bytes` to `descriptor`: after a short write the
  /// rest, after `EINTR` again, and after `EAGAIN` (a non-blocking pipe or
  /// terminal that is full) once `poll(2)` says it can take more.
  ///
  /// The corresponding C function is `write(2)`.
  package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: CInt) -> Result<
    Void, Errno
  > {
    var offset = 0
    while offset < bytes.count {
      switch valueOrErrno({
        system_write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      }) {
      case .success(let count):
        offset += count
      case .failure(.resourceTemporarilyUnavailable):
        var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        if case .failure(let errno) = valueOrErrno({ system_poll(&waiting, 1, -1) }) {
          return .failure(errno)
        }
      case .failure(let errno):
        return .failure(errno)
      }
    }
    return .success(())
  }

  /// Writes every byte of `bytes` to `descriptor`, as the other `writeAll`.
  package static func writeAll(_ bytes: [UInt8], to descriptor: CInt) -> Result<Void, Errno> {
    bytes.withUnsafeBytes { writeAll($0, to: descriptor) }
  }

  /// Writes `text` as UTF-8, as ``writeAll(_:to:)-([UInt8],_)`` does.
  package static func writeAll(_ text: String, to descriptor: CInt) -> Result<Void, Errno> {
    var text = text
    return text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
  }

  /// Closes `descriptor`, once: after `EINTR` Linux has closed it already.
  ///
  /// The corresponding C function is `close(2)`.
  package static func close(_ descriptor: CInt) -> Result<Void, Errno> {
    valueOrErrnoOnce { system_close(descriptor) }.map { _ in () }
  }
}

extension OutputDescriptor {
  /// Sends standard error to `/dev/null` for every thread from here on,
  /// and returns a copy of it as it was, for the one thread that ends the
  /// run: a run ended by a signal deletes its snapshots while its other
  /// threads may still walk them, and what vanishes under those threads is
  /// no error of the run's. Under ThreadSanitizer, whose run is slower,
  /// the walk's "no such file or directory (getdents64)" followed the
  /// signal's line.
  ///
  /// The corresponding C functions are `fcntl(2)` (`F_DUPFD_CLOEXEC`),
  /// `openat(2)` and `dup2(2)`.
  package static func silenceStandardError() throws(SkipBackupError) -> Descriptor {
    let name = FilePath("standard error")
    let saved = try Descriptor(duplicating: STDERR_FILENO, path: name)
    let null = try Descriptor.open("/dev/null", .writeOnly)
    _ = try valueOrErrno { system_dup2(null.rawValue, STDERR_FILENO) }.get(.dup2, name)
    return saved
  }
}

/// Standard output sent to standard error for as long as the value lives,
/// and put back when it ends: `run --sweep ~ -- tar -cf - ~` keeps standard
/// output for COMMAND's archive alone, so the sweep's report goes to
/// standard error.
package struct StandardOutputOnError: ~Copyable {
  /// Standard output as it was, put back by `deinit`.
  private let saved: Descriptor

  /// The corresponding C functions are `fcntl(2)` (`F_DUPFD_CLOEXEC`) and
  /// `dup2(2)`.
  package init() throws(SkipBackupError) {
    let name = FilePath("standard output")
    let saved = try Descriptor(duplicating: STDOUT_FILENO, path: name)
    _ = try valueOrErrno { system_dup2(STDERR_FILENO, STDOUT_FILENO) }.get(.dup2, name)
    self.saved = saved
  }

  deinit {
    // dup2 onto an open descriptor fails only for a bad source, and the
    // saved copy is open until this returns: nothing is left to report.
    _ = system_dup2(saved.rawValue, STDOUT_FILENO)
  }
}
