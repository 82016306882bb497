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
  /// `EINVAL` from kernels before `O_TMPFILE`).
  ///
  /// The corresponding C function is `openat(2)` with `O_TMPFILE`.
  package static func open(in directory: CInt, mode: mode_t) -> Result<CInt?, Errno> {
    let opened = valueOrErrno {
      system_openat(directory, ".", CLINUX_O_TMPFILE | O_WRONLY | O_CLOEXEC, mode)
    }
    switch opened {
    case .success(let file): return .success(file)
    case .failure(.notSupported), .failure(.isDirectory), .failure(.invalidArgument):
      return .success(nil)
    case .failure(let errno): return .failure(errno)
    }
  }

  /// Gives the unnamed file `file` the name `name` in `directory`; fails
  /// with `EEXIST` when the name is taken.
  ///
  /// The corresponding C function is `linkat(2)`, of `/proc/self/fd/N`.
  package static func link(
    _ file: CInt, in directory: CInt, as name: FilePath
  ) -> Result<Void, Errno> {
    FilePath("/proc/self/fd/\(file)").withCString { source in
      name.withCString { name in
        valueOrErrno {
          system_linkat(CLINUX_AT_FDCWD, source, directory, name, AT_SYMLINK_FOLLOW)
        }.map { _ in () }
      }
    }
  }
}
