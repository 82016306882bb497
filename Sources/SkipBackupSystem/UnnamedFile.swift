import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A file made with no name (`O_TMPFILE`) and named only once it is whole,
/// so that it appears whole or not at all: what a `CACHEDIR.TAG` and a
/// replacement file (a safe save, `export -o`) are made as.
package enum UnnamedFile {
  /// A new file with no name in `directory`, open for writing; `nil` where
  /// the filesystem or kernel cannot make one (`EOPNOTSUPP`, and `EISDIR` or
  /// `EINVAL` from kernels before `O_TMPFILE`). The file and a failure are
  /// named `path`, what it will be called.
  ///
  /// The corresponding C function is `openat(2)` with `O_TMPFILE`.
  package static func open(
    in directory: borrowing Descriptor, mode: mode_t, path: FilePath
  ) throws(SkipBackupError) -> Descriptor? {
    let opened = valueOrErrno {
      system_openat(
        directory.rawValue, ".", OpenFlags([.temporaryFile, .writeOnly, .closeOnExec]).rawValue,
        mode)
    }
    switch opened {
    case .success(let file): return Descriptor(adopting: file, path: path)
    case .failure(.notSupported), .failure(.isDirectory), .failure(.invalidArgument):
      return nil
    case .failure(let errno): throw SkipBackupError(.openat, errno, path: path)
    }
  }

  /// Gives the unnamed `file` the name `name` in `directory`; fails with
  /// `EEXIST` when the name is taken. A failure names `file`'s path.
  ///
  /// The corresponding C function is `linkat(2)`, of `/proc/self/fd/N`.
  package static func link(
    _ file: borrowing Descriptor, in directory: borrowing Descriptor, as name: FilePath
  ) throws(SkipBackupError) {
    let target = directory.rawValue
    _ = try FilePath("/proc/self/fd/\(file.rawValue)").withCString { source in
      name.withCString { name in
        valueOrErrno {
          system_linkat(CLINUX_AT_FDCWD, source, target, name, AtFlags.symbolicLinkFollow.rawValue)
        }
      }
    }.get(.linkat, file.path)
  }
}
