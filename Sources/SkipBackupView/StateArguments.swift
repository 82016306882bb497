import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A tool's own state named in its arguments (`--archive-dir=DIR`), where
/// a ROOT's view would show DIR read-only, or not at all when it is
/// marked: the directory is opened once, before anything is mounted (the
/// descriptor is not closed on exec), and the argument becomes
/// `/proc/self/fd/N`, which the kernel follows to the real directory below
/// the view, as ``ToolState`` does for the XDG directories. The tool writes
/// its real state, and the backup still reads the view.
package enum StateArguments {
  /// `command` with each argument `OPTION=DIR`, for an OPTION of `options`
  /// and an absolute DIR inside one of `roots`, pointing at DIR's real
  /// directory. Call in the private namespace, before anything is mounted.
  /// A DIR that is not there is left as it is: the tool says so.
  package static func pass(
    _ command: [[UInt8]], options: [[UInt8]], roots: [FilePath]
  ) throws(SkipBackupError) -> [[UInt8]] {
    var result = command
    for index in result.indices.dropFirst() {
      let argument = result[index]
      guard let option = options.first(where: { argument.starts(with: $0) }) else { continue }
      let directory = Array(argument.dropFirst(option.count))
      guard directory.first == UInt8(ascii: "/"),
        roots.contains(where: { path(directory[...], isOrIsBelow: $0.bytes) })
      else { continue }
      let named = FilePath(bytes: directory)
      let descriptor: CInt
      do {
        descriptor = try Descriptor.openForNextProgram(named, [.pathOnly, .directory])
      } catch  where error.errno == .noSuchFileOrDirectory {
        continue
      }
      result[index] = option + Array("/proc/self/fd/\(descriptor)".utf8)
    }
    return result
  }
}
