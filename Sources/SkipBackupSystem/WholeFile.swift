import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The whole of a small file (sweep's rules file, /proc/self/mountinfo);
/// one larger than `limit` bytes is `EFBIG` (`--rules /dev/zero` aborted
/// the run for want of memory). Through the `system_*` wrappers, so that a
/// test can force the kernel's refusals here too.
///
/// The corresponding C functions are `openat(2)`, `read(2)` and `close(2)`.
package func readWholeFile(_ path: FilePath, limit: Int = 1 << 20) throws(Errno) -> [UInt8] {
  let descriptor = try path.withCString { path in
    valueOrErrno { system_openat(CLINUX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0) }
  }.get()
  defer { _ = system_close(descriptor) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 64 * 1024)
  while true {
    let count = try chunk.withUnsafeMutableBytes { chunk in
      valueOrErrno { system_read(descriptor, chunk.baseAddress, chunk.count) }
    }.get()
    if count == 0 { return bytes }
    bytes += chunk[..<count]
    if bytes.count > limit { throw .fileTooLarge }
  }
}
