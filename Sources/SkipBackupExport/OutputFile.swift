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
/// FILE's directory is opened once, by ``TrustedPath``: one component at a
/// time by descriptor, through directories only root or the caller own
/// (systemd's rule against unsafe path transitions), so that no other user
/// can choose where root's write lands. The name is looked at once there,
/// without following a link (``DirectoryEntry``), and the open, the new
/// file and its rename are relative to that descriptor. A symbolic link at
/// the name is refused, never followed: root's `export -o /tmp/x` must not
/// write the file another user's link there names, and a link swapped in
/// after the look is replaced by the rename, not written through. Only a
/// link in a directory that root or the caller owns and that neither group
/// nor others may write is followed, and written in place: no other user
/// can have put it there, and those are the links to a descriptor that the
/// kernel keeps (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`). A
/// directory another user owns is never such a place, whatever its mode
/// says now: its owner may make it writable, plant a link and make it
/// read-only again. What a link leads to is judged by where the link is,
/// never by its path's text: a rules file in a directory of its own under
/// /dev/shm is a regular file like any other, and a write that fails there
/// leaves the old one whole.
///
/// A struct with an optional, not an enum of the two ways: Swift keeps a
/// class reference in an enum with two payloads with the case in its top
/// bit, where LeakSanitizer finds no pointer, and a run ended by a failed
/// write (``OutputFailure``'s exit, the replacement still held) had the
/// replacement reported as leaked (Tests/Sanitizers/tagged-reference).
package struct OutputFile {
  /// Where the rules are written.
  package let descriptor: CInt
  /// The new file that ``ReplacementFile/commit()`` puts in place; `nil`
  /// when FILE is written in place, and then whoever holds the value closes
  /// ``descriptor``, with `OutputDescriptor.close`, whose error is the
  /// write's.
  package let replacement: ReplacementFile?

  /// Written in place.
  package static func inPlace(_ descriptor: CInt) -> OutputFile {
    OutputFile(descriptor: descriptor, replacement: nil)
  }

  private static func replacement(_ replacement: ReplacementFile) -> OutputFile {
    OutputFile(descriptor: replacement.descriptor, replacement: replacement)
  }

  package static func open(_ path: FilePath) throws(SkipBackupError) -> OutputFile {
    // A special file that became a regular one between the look and the
    // open is looked at again; only a changing name runs out of tries.
    for _ in 0..<3 {
      let entry = try DirectoryEntry(trusting: path)
      if entry.type == .symbolicLink, entry.onlyOwnerMayWrite {
        let opened = try entry.opened.open(
          entry.name, [.writeOnly, .create, .truncate], mode: 0o666, reporting: path)
        return .inPlace(opened.release())
      }
      switch entry.type {
      case nil, .regular?:
        return .replacement(try ReplacementFile(entry, reportedAs: path))
      case .symbolicLink?:
        throw SkipBackupError(refusing: .notARegularFile, path: path, fileType: .symbolicLink)
      case .some:
        // No O_CREAT nor O_TRUNC: what is opened is judged before anything
        // is written, and a file swapped in is never cut short.
        let opened = try entry.opened.open(
          entry.name, [.writeOnly, .noFollow, .noControllingTerminal], reporting: path)
        let status = try opened.status()
        try SharedDirectory.refuseForeign(status, in: entry.directoryStatus, path: path)
        if status.st_mode & S_IFMT != S_IFREG { return .inPlace(opened.release()) }
      }
    }
    throw SkipBackupError(.openat, .resourceTemporarilyUnavailable, path: path)
  }
}
