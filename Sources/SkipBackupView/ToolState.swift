import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The backup tools' own state when HOME is inside a ROOT: restic, borg,
/// duplicity and kopia keep caches, keys and locks under the XDG base
/// directories (~/.cache, ~/.config, ~/.local/state, ~/.local/share), which
/// the view shows read-only, or not at all when marked (~/.cache usually
/// is). COMMAND gets the real HOME as an open directory, descriptor N (not
/// closed on exec, opened before anything is mounted), and each XDG
/// variable whose directory is inside a ROOT points into it as
/// /proc/self/fd/N/RELATIVE: the kernel follows that link to the real
/// directory, below the view. So a tool reads and writes its real state,
/// which is there for the next run, and the view, which the backup reads,
/// is unchanged: the state is in the backup exactly when it would be
/// without the view.
package struct ToolState {
  /// The XDG variables and their defaults below HOME (XDG Base Directory
  /// Specification 0.8).
  package static let directories: [(variable: String, fallback: String)] = [
    ("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
    ("XDG_STATE_HOME", ".local/state"), ("XDG_DATA_HOME", ".local/share"),
  ]

  /// HOME, canonical, when it is a ROOT or inside one; else no state is passed.
  package let home: [UInt8]
  /// Each variable to set, with its directory relative to HOME.
  package let relative: [(variable: String, path: [UInt8])]

  package init?(roots: [ViewRoot]) {
    guard let value = environmentValue("HOME"), let home = canonicalPath(value) else { return nil }
    func inside(_ directory: [UInt8], _ root: [UInt8]) -> Bool {
      path(directory[...], isOrIsBelow: root)
    }
    guard roots.contains(where: { inside(home, $0.path.bytes) }) else { return nil }
    var relative: [(String, [UInt8])] = []
    for (variable, fallback) in Self.directories {
      var directory = home + [UInt8(ascii: "/")] + Array(fallback.utf8)
      if let set = environmentValue(variable), set.first == UInt8(ascii: "/") {
        directory = set
      }
      // Only a directory below HOME and inside a ROOT: elsewhere it is writable as it is.
      guard path(directory[...], below: home) != nil,
        roots.contains(where: { inside(directory, $0.path.bytes) })
      else { continue }
      relative.append((variable, Array(directory[(home.count + 1)...])))
    }
    guard !relative.isEmpty else { return nil }
    self.home = home
    self.relative = relative
  }

  /// Opens the real HOME for COMMAND (call before anything is mounted), and
  /// sets each variable to its path through the descriptor.
  package func pass() throws(SkipBackupError) {
    let path = FilePath(bytes: home)
    let descriptor = try Descriptor.openForNextProgram(path, [.pathOnly, .directory])
    for (variable, relative) in relative {
      try setEnvironment(
        variable, to: Array("/proc/self/fd/\(descriptor)/".utf8) + relative, for: path)
    }
  }
}
