import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The filesystems whose instant `run --snapshot` can freeze: a closed set,
/// each kind one case with its own branch in each step (find what holds a
/// ROOT, take, delete). Only btrfs is built and tested here.
///
/// Two more would each be one case:
/// - LVM thin: the logical volume holding ROOT (from its `st_dev`, through
///   /sys/dev/block/MAJ:MIN/dm/name), a thin snapshot of it
///   (`lvcreate -s -n NAME VG/LV`, device-mapper's thin target; needs root
///   and free room in the thin pool), activated with `-K`, mounted
///   read-only (with `nouuid` for XFS) inside the private namespace only,
///   on a directory of its own, then removed (`lvremove`) after COMMAND.
///   The lock and name scheme of ``SnapshotDirectory`` carries over, the
///   lock kept in /run/skipbackup rather than on the volume.
/// - ZFS: the dataset holding ROOT (its mount's source in mountinfo), a
///   snapshot `DATASET@skipbackup-run-PID-N` (`zfs snapshot`, or the
///   `ZFS_IOC_SNAPSHOT` ioctl on /dev/zfs; root, or `zfs allow snapshot,
///   destroy,mount`), read at DATASET's mount point
///   `.zfs/snapshot/NAME`, which ZFS mounts on first access, and
///   destroyed after COMMAND (`zfs destroy`).
/// Neither device-mapper nor ZFS is in the kernel these tests run on.
package enum SnapshotKind: Equatable {
  /// A read-only snapshot of the btrfs subvolume that holds the ROOT.
  case btrfs

  /// The kind that can freeze the filesystem `root` is on.
  static func of(_ root: FilePath) throws(SkipBackupError) -> SnapshotKind {
    switch try filesystemType(at: root) {
    case SnapshotFlag.btrfsMagic: return .btrfs
    default: throw SkipBackupError(refusing: .notOnASnapshottingFilesystem, path: root)
    }
  }
}

/// One directory `run --snapshot` freezes: a ROOT as given, or a btrfs
/// subvolume nested in one, which the tree's records name by ID.
package struct SnapshotRequest {
  /// Its canonical path.
  package let path: FilePath
  /// The nested subvolume's ID; `nil` for a ROOT as given.
  package let subvolumeID: UInt64?

  package init(_ path: FilePath, subvolumeID: UInt64? = nil) {
    self.path = path
    self.subvolumeID = subvolumeID
  }
}

/// One ROOT as `run --snapshot` shows it: the view is mounted at `path`,
/// and reads `real`, the ROOT's directory in its snapshot.
package struct FrozenRoot {
  /// The ROOT's canonical path, where its view is mounted.
  package let path: FilePath
  /// The live directory the path led to when it was resolved, once: the
  /// view is mounted on that directory only.
  package let live: DirectoryIdentity
  /// The ROOT in its snapshot: what the walk reads and the view shows.
  package let real: FilePath
  /// Which of the run's snapshots holds it.
  package let snapshot: Int
  /// The ROOT below the snapshot's root, "" for the root itself.
  package let inside: [UInt8]
}

/// The snapshots one run takes: one for each subvolume that holds a ROOT,
/// taken in the order of the ROOTs, each after the snapshots that earlier
/// runs left behind were deleted. Each is deleted by ``delete(_:)`` after
/// COMMAND; one left by a run that was killed is deleted by the user's next
/// run on that filesystem (``SnapshotDirectory``). Sendable for the one
/// other thread that touches it, ``SetupSignals``'s, which does so only
/// under the lock the run holds while it takes and deletes snapshots.
package final class SnapshotSet: @unchecked Sendable {
  package private(set) var snapshots: [Snapshot] = []

  /// Freezes each of `requests` (canonical directories), as `privilege`
  /// may. Several ROOTs on one subvolume share its snapshot. Each is
  /// resolved once (``ResolvedDirectory``), and its subvolume confirmed by
  /// identity wherever it is opened again.
  package init(_ requests: [SnapshotRequest], privilege: MountNamespace.Privilege)
    throws(SkipBackupError)
  {
    var taken: [Snapshot] = []
    var frozen: [FrozenRoot] = []
    var cleaned: Set<UInt64> = []
    do throws(SkipBackupError) {
      for request in requests {
        let root = request.path
        let (held, live) = try ResolvedDirectory.open(
          root, checkingTransitions: privilege.isRoot, isGiven: request.subvolumeID == nil)
        defer { _ = system_close(held) }
        switch try SnapshotKind.of(root) {
        case .btrfs:
          let identity = try SubvolumeIdentity(of: held, root)
          if let expected = request.subvolumeID,
            identity.id != expected || live.inode != SnapshotFlag.subvolumeRootInode
          {
            throw SkipBackupError(refusing: .changedOnTheWay, path: root)
          }
          var (subvolume, inside) = try BtrfsSubvolume.holding(root)
          subvolume.identity = identity
          if cleaned.insert(subvolume.mountID).inserted {
            SnapshotDirectory.deleteLeftovers(onTheFilesystemOf: subvolume)
          }
          let index: Int
          if let shared = taken.firstIndex(where: { $0.source == subvolume.root }) {
            index = shared
          } else {
            // Kept beside the snapshot of a ROOT this one is inside, on the
            // same mount (a subvolume nested in it): nothing is written in
            // the nested subvolume (a container's layer, say).
            var keeper = frozen.last {
              path(root.bytes[...], below: $0.path.bytes) != nil
                && taken[$0.snapshot].store?.mountID == subvolume.mountID
            }.flatMap { taken[$0.snapshot].store }
            if keeper == nil { keeper = try Self.enclosingStore(of: subvolume, among: taken) }
            taken.append(
              try Snapshot(of: subvolume, for: root, keptIn: keeper, privilege: privilege))
            index = taken.count - 1
          }
          frozen.append(
            FrozenRoot(
              path: root, live: live, real: taken[index].path.appending(bytes: inside),
              snapshot: index, inside: inside))
          try taken[index].confirm(inside, holds: root, live)
        }
      }
    } catch {
      // A ROOT that cannot be frozen leaves none of the others' snapshots.
      for snapshot in taken { _ = try? snapshot.delete() }
      throw error
    }
    snapshots = taken
    self.roots = frozen
  }

  /// Each ROOT, in the order given.
  package let roots: [FrozenRoot]

  /// Where root keeps the snapshot of a subvolume another user owns (a
  /// systemd-homed home, say): beside the subvolume it is nested in,
  /// reached through the same mount, when root owns that one, so that
  /// nothing of root's is left in the user's home, where it would be in
  /// the user's way. `nil` where there is no such subvolume (the user's is
  /// its mount's root): the user's subvolume keeps it.
  private static func enclosingStore(of subvolume: BtrfsSubvolume, among taken: [Snapshot])
    throws(SkipBackupError) -> SnapshotStore?
  {
    let me = system_geteuid()
    guard try FileItem(path: subvolume.root, followSymbolicLinks: false).status().st_uid != me
    else { return nil }
    let bytes = subvolume.root.bytes
    guard bytes.count > 1, let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
    let parent = FilePath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash]))
    guard let (enclosing, _) = try? BtrfsSubvolume.holding(parent),
      enclosing.mountID == subvolume.mountID,
      (try? FileItem(path: enclosing.root, followSymbolicLinks: false).status().st_uid) == me,
      (try? BtrfsSubvolume.isReadOnly(enclosing.root)) == false
    else { return nil }
    if let store = taken.lazy.compactMap(\.store).first(where: { $0.root == enclosing.root }) {
      return store
    }
    return SnapshotStore(
      directory: try SnapshotDirectory(in: enclosing, naming: subvolume.root),
      mountID: enclosing.mountID, root: enclosing.root)
  }

  /// In COMMAND's process: holds each snapshot for as long as COMMAND, or
  /// anything it leaves running, may read it.
  package func holdForCommand() throws(SkipBackupError) {
    for snapshot in snapshots { try snapshot.holdForCommand() }
  }

  /// Deletes every snapshot, after COMMAND ended; reports each that stays.
  package func delete(_ diagnostics: Diagnostics) {
    for snapshot in snapshots {
      do throws(SkipBackupError) {
        if try !snapshot.delete() {
          diagnostics.note(
            "\(snapshot.path.escapedDescription): this snapshot stays while a process "
              + "COMMAND started still holds it; the next run --snapshot on its "
              + "filesystem deletes it")
        }
      } catch {
        diagnostics.report(Snapshot.explain(error))
      }
    }
  }
}

/// The directory a run keeps snapshots in (``SnapshotDirectory``), shared
/// by the snapshots of the subvolumes nested in the one it is in.
final class SnapshotStore {
  let directory: SnapshotDirectory
  /// The mount through which the subvolume it is in was reached: a
  /// snapshot is made on the filesystem of its source.
  let mountID: UInt64
  /// The root of the subvolume it is in.
  let root: FilePath
  init(directory: consuming SnapshotDirectory, mountID: UInt64, root: FilePath) {
    self.directory = directory
    self.mountID = mountID
    self.root = root
  }
}

/// One snapshot a run took, of the subvolume `source`, at `path`; held
/// (the lock of ``SnapshotDirectory``) until it is deleted or the process
/// ends. A read-only subvolume (a snapper or `btrfs receive` snapshot) is
/// frozen already: it is its own snapshot, nothing is taken, held or
/// deleted, and nothing is written in it, which could not be.
package final class Snapshot {
  package let kind: SnapshotKind
  /// The live directory it is a snapshot of: the subvolume's root.
  package let source: FilePath
  /// Where the snapshot is: `SOURCE/.skipbackup-snapshots/NAME` (or that
  /// of the subvolume it is nested in), or `SOURCE` itself when it is
  /// read-only.
  package let path: FilePath
  /// The snapshot's root, open.
  package let descriptor: CInt
  /// What this run took; `nil` for a read-only subvolume.
  private let taken: Taken?
  /// Where it is kept; `nil` for a read-only subvolume.
  var store: SnapshotStore? { taken?.store }

  /// A snapshot this run made: where, its name, and this run's lock on it,
  /// shared.
  private final class Taken {
    let store: SnapshotStore
    let name: [UInt8]
    let lock: CInt
    init(store: SnapshotStore, name: [UInt8], lock: CInt) {
      self.store = store
      self.name = name
      self.lock = lock
    }
    deinit { _ = system_close(lock) }
  }

  /// A snapshot of `subvolume`, kept in `keeper` when given, else in the
  /// subvolume's own `.skipbackup-snapshots`.
  fileprivate init(
    of subvolume: BtrfsSubvolume, for root: FilePath, keptIn keeper: SnapshotStore?,
    privilege: MountNamespace.Privilege
  ) throws(SkipBackupError) {
    kind = .btrfs
    source = subvolume.root
    if try BtrfsSubvolume.isReadOnly(subvolume.root) {
      path = subvolume.root
      descriptor = try subvolume.open()
      taken = nil
      return
    }
    if case .user = privilege {
      // Before anything is made at its root, which the user may not write.
      guard
        try FileItem(path: subvolume.root, followSymbolicLinks: false).status().st_uid
          == system_geteuid()
      else { throw SkipBackupError(refusing: .subvolumeOfAnother, path: root) }
      try subvolume.requireUserDeletion(naming: root)
    }
    let store: SnapshotStore
    if let keeper {
      store = keeper
    } else {
      store = SnapshotStore(
        directory: try SnapshotDirectory(in: subvolume, naming: root), mountID: subvolume.mountID,
        root: subvolume.root)
    }
    let (name, lock) = try store.directory.takeSnapshot(of: subvolume, naming: root)
    path = store.directory.path.appending(bytes: name)
    let taken = Taken(store: store, name: name, lock: lock)
    self.taken = taken
    descriptor = try store.directory.openSnapshot(name, naming: root)
  }

  deinit { _ = system_close(descriptor) }

  /// Checks that the snapshot holds `root`, resolved as `live`, at
  /// `inside`: the same inode of the same subvolume (btrfs keeps inode
  /// numbers in a snapshot, and the snapshot was confirmed to be of
  /// `live`'s subvolume), so that a ROOT renamed or replaced while its
  /// snapshot was taken is refused.
  func confirm(_ inside: [UInt8], holds root: FilePath, _ live: DirectoryIdentity)
    throws(SkipBackupError)
  {
    let real = try FileItem.openDirectory(inside, below: descriptor, rootPath: path)
    defer { if real != descriptor { _ = system_close(real) } }
    var frozen = stat()
    try check(.fstat, path.appending(bytes: inside)) { system_fstat(real, &frozen) }
    guard UInt64(frozen.st_ino) == live.inode else {
      throw SkipBackupError(refusing: .movedWhileSnapshotted, path: root)
    }
  }

  /// Opens the snapshot's root again by its path, in a new mount namespace:
  /// overlayfs takes a layer only from the caller's namespace (Linux 6.18
  /// answers `EINVAL` for a directory opened before unshare(2)). Refused
  /// unless it is the snapshot opened before (same device and inode).
  package func reopen() throws(SkipBackupError) -> CInt {
    let opened = try check(.openat2, path) {
      path.withCString {
        system_openat2(
          MountFlag.atWorkingDirectory, $0, MountFlag.pathOnly | O_DIRECTORY | O_CLOEXEC, 0,
          ResolveFlags.noLinks.rawValue)
      }
    }
    var now = stat()
    var before = stat()
    do throws(SkipBackupError) {
      try check(.fstat, path) { system_fstat(opened, &now) }
      try check(.fstat, path) { system_fstat(descriptor, &before) }
      guard now.st_dev == before.st_dev, now.st_ino == before.st_ino else {
        throw SkipBackupError(.openat, .notDirectory, path: path)
      }
    } catch {
      _ = system_close(opened)
      throw error
    }
    return opened
  }

  /// See ``SnapshotSet/holdForCommand()``.
  func holdForCommand() throws(SkipBackupError) {
    guard let taken else { return }
    try taken.store.directory.holdForCommand(taken.name)
  }

  /// Deletes the snapshot, unless a process COMMAND started still holds it
  /// (then `false`: the next run deletes it).
  func delete() throws(SkipBackupError) -> Bool {
    guard let taken else { return true }
    return try taken.store.directory.deleteOwn(taken.name, lock: taken.lock)
  }

  /// One line for a failure to take, read or delete a snapshot.
  package static func explain(_ error: SkipBackupError) -> String {
    guard let call = error.call, let errno = error.errno else { return error.description }
    let path = error.path.escapedDescription
    let detail = "(\(call): \(errno.description))"
    // The snapshot directory at the subvolume's root, which the run makes.
    let last = error.path.bytes.split(separator: UInt8(ascii: "/")).last ?? []
    if SnapshotDirectory.isName(last) {
      switch (call, errno) {
      case (.openat, .notDirectory), (.openat, .tooManySymbolicLinkLevels):
        return
          "\(path): is not a directory, but run --snapshot keeps its snapshots in a directory of "
          + "this name at the subvolume's root \(detail); rename or remove it; nothing was run"
      case (.mkdirat, .notPermitted):
        return
          "\(path): run --snapshot cannot make its snapshot directory at the subvolume's root, "
          + "which may be immutable (chattr +i) \(detail); nothing was run"
      case (.mkdirat, .permissionDenied):
        return
          "\(path): run --snapshot cannot make its snapshot directory at the subvolume's root, "
          + "which you may not write to \(detail): run it as the subvolume's owner, who may "
          + "snapshot it, or as root; nothing was run"
      case (.mkdirat, .readOnlyFileSystem):
        return
          "\(path): run --snapshot cannot make its snapshot directory: the filesystem is "
          + "read-only \(detail), so it does not change: run without --snapshot; nothing was run"
      default: break
      }
    }
    switch (call, errno) {
    case (.btrfsSnapshotCreate, .readOnlyFileSystem):
      return
        "\(path): its btrfs filesystem or subvolume is read-only, so no snapshot can be taken in it \(detail); nothing was run"
    case (.btrfsSnapshotCreate, .noSpace):
      return
        "\(path): no space left on its btrfs filesystem for a snapshot \(detail); nothing was run"
    case (.btrfsSnapshotCreate, .notPermitted), (.btrfsSnapshotCreate, .permissionDenied):
      return
        "\(path): only the owner of the btrfs subvolume that holds it, or root, may snapshot it \(detail); nothing was run"
    case (.btrfsSnapshotCreate, .textFileBusy):
      // btrfs's ioctl.c refuses to snapshot a subvolume with an active swap file.
      return
        "\(path): its btrfs subvolume holds an active swap file (swapon --show), which btrfs "
        + "will not snapshot \(detail); keep swap files in a subvolume of their own; nothing "
        + "was run"
    case (.btrfsSnapshotCreate, _):
      return "\(path): cannot take a btrfs snapshot \(detail); nothing was run"
    case (.btrfsSubvolumeChildren, _), (.btrfsSubvolumePlace, _):
      return
        "\(path): the btrfs subvolumes nested in it cannot be found \(detail), so their own "
        + "snapshots cannot be taken; give -x to leave them out as the empty directories "
        + "list -x lists; nothing was run"
    case (.btrfsSnapshotDestroy, _), (.btrfsSubvolumeSetFlags, _), (.btrfsSubvolumeGetFlags, _):
      return
        "\(path): this snapshot could not be deleted \(detail); the next run --snapshot on its filesystem tries again"
    default:
      return error.description
    }
  }
}
