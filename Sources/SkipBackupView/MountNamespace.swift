import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The private mount namespace the view lives in. The process enters it
/// itself (unshare(2)), so that the mounts made next are seen by this
/// process and what it runs, and vanish when the last of them ends, however
/// it ends: nothing is ever mounted in the caller's namespace.
package enum MountNamespace {
  /// How the namespace is made: root makes a mount namespace; anyone else
  /// first a user namespace in which they are root, which maps their own
  /// user and group to themselves so that owners stay real.
  package enum Privilege {
    case root
    case user(uid: uid_t, gid: gid_t)

    package static var current: Privilege {
      // The effective IDs: an unprivileged gid_map may map only the caller's own.
      let user = system_geteuid()
      return user == 0 ? .root : .user(uid: user, gid: system_getegid())
    }

    /// Where the view's overlay keeps the attributes it reads from its
    /// layers: `trusted.overlay.*`, or `user.overlay.*` with `userxattr`,
    /// which a user namespace needs.
    package var overlayNamespace: OverlayNamespaces {
      if case .root = self { return .trusted }
      return .user
    }
  }

  /// Enters a new mount namespace whose mounts propagate nowhere.
  ///
  /// unshare(CLONE_NEWUSER) needs a process of one thread: the walk's
  /// helper threads are joined before this is called (ParallelWalk.swift).
  package static func enter(_ privilege: Privilege) throws(SkipBackupError) {
    switch privilege {
    case .root:
      try check(.unshare, "/") { system_unshare(MountFlag.newMountNamespace) }
    case .user(let uid, let gid):
      try check(.unshare, "/") {
        system_unshare(MountFlag.newUserNamespace | MountFlag.newMountNamespace)
      }
      // An unprivileged gid_map needs setgroups denied first (user_namespaces(7)).
      try write("deny", to: "/proc/self/setgroups")
      try write("\(uid) \(uid) 1", to: "/proc/self/uid_map")
      try write("\(gid) \(gid) 1", to: "/proc/self/gid_map")
    }
    // A shared / (systemd's default) would carry the view's mounts back
    // to the caller's namespace.
    try check(.mount, "/") {
      system_mount(nil, "/", nil, MountFlag.recursive | MountFlag.private, nil)
    }
  }

  private static func write(_ text: String, to path: FilePath) throws(SkipBackupError) {
    let descriptor = try check(.openat, path) {
      path.withCString { system_openat(MountFlag.atWorkingDirectory, $0, O_WRONLY | O_CLOEXEC, 0) }
    }
    defer { _ = OutputDescriptor.close(descriptor) }
    if case .failure(let errno) = OutputDescriptor.writeAll(text, to: descriptor) {
      throw SkipBackupError(.write, errno, path: path)
    }
  }
}
