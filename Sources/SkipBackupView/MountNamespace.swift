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
      try enterNewNamespaces(.newMountNamespace, for: "/")
    case .user(let uid, let gid):
      try enterNewNamespaces([.newUserNamespace, .newMountNamespace], for: "/")
      // An unprivileged gid_map needs setgroups denied first (user_namespaces(7)).
      let (setgroups, uidMap, gidMap) = identityFiles
      try write("deny", to: setgroups)
      try write("\(uid) \(uid) 1", to: uidMap)
      try write("\(gid) \(gid) 1", to: gidMap)
    }
    // A shared / (systemd's default) would carry the view's mounts back
    // to the caller's namespace.
    try changePropagation(of: "/", [.recursive, .private])
  }

  /// The files that map this user and group into a new user namespace, in
  /// the order they are written (user_namespaces(7)).
  private static let identityFiles: (FilePath, FilePath, FilePath) = (
    "/proc/self/setgroups", "/proc/self/uid_map", "/proc/self/gid_map"
  )

  /// Whether `error` is the kernel's refusal to map this user into the
  /// new user namespace: a failure on one of the files that do so.
  package static func isIdentityMapRefusal(_ error: SkipBackupError) -> Bool {
    let (setgroups, uidMap, gidMap) = identityFiles
    switch error.call {
    case .openat?, .write?: return [setgroups, uidMap, gidMap].contains(error.path)
    default: return false
    }
  }

  private static func write(_ text: String, to path: FilePath) throws(SkipBackupError) {
    try Descriptor.open(path, .writeOnly).writeAll(Array(text.utf8))
  }
}
