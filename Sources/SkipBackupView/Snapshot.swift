import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What freezes a ROOT for `run --snapshot`: a closed set, one case for
/// each kind of filesystem, each with its own functions for the provider's
/// operations, reached by descriptor:
///
/// - ``facts(of:privilege:isNested:listingNested:)`` and
///   ``explain(_:)``: what is known of a ROOT, read from its directory
///   opened once, and, from those facts alone, whether and how it can be
///   frozen;
/// - ``hold(_:)``: the filesystem's leftovers of runs that were killed,
///   reaped under their directory's lock;
/// - ``take(_:for:keptIn:)``: the snapshot of what holds a ROOT, given
///   by descriptor;
/// - ``Snapshot/reopen()``: the snapshot opened again in the view's
///   namespace, confirmed by filesystem, subvolume ID and generation;
/// - ``Snapshot/delete()``: by the descriptor of the directory that holds
///   it and its name.
///
/// ``SnapshotSet`` and ``ViewRun`` call these only. Only btrfs is built
/// and tested here; two more would each be one case and its functions:
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
package enum SnapshotProvider: Equatable, Sendable {
  /// A read-only snapshot of the btrfs subvolume that holds the ROOT.
  case btrfs

  /// The provider of the filesystem `directory` is on (`fstatfs(2)`'s
  /// type); `nil` when none can freeze it.
  static func of(_ directory: borrowing Descriptor) throws(SkipBackupError) -> SnapshotProvider? {
    switch UInt(bitPattern: try directory.filesystemStatus().f_type) {
    case SnapshotFlag.btrfsMagic: return .btrfs
    default: return nil
    }
  }

  /// What is known of the directory `path`, canonical, resolved once
  /// (``ResolvedDirectory``, with `privilege`'s checks) and read by that
  /// descriptor only. `isNested` for a subvolume found nested in a ROOT
  /// rather than given; with `listingNested`, the subvolumes nested in it,
  /// and with `.skippingUnreachable` those that cannot be read left out.
  package static func facts(
    of path: FilePath, privilege: MountNamespace.Privilege, isNested: Bool = false,
    listingNested: NestedListing = .none
  ) throws(SkipBackupError) -> SnapshotFacts {
    let resolved = try ResolvedDirectory.open(
      path, checkingTransitions: privilege.isRoot, isGiven: !isNested)
    return try facts(
      of: resolved.descriptor, at: path, privilege: privilege, isNested: isNested,
      listingNested: listingNested)
  }

  /// The subvolumes (or datasets) nested below the live directory
  /// `path`, for the live view, which gives each a view of its own: none
  /// on a filesystem no provider freezes. Those that cannot be read are
  /// left out, as a walk leaves them, and so are the runs' snapshots.
  package static func nestedSubvolumes(below path: FilePath) throws(SkipBackupError)
    -> [FilePath]
  {
    let directory = try Descriptor.open(path, [.pathOnly, .directory], resolve: .noLinks)
    switch try of(directory) {
    case .btrfs?:
      let subvolume = try BtrfsSubvolume.holding(directory, at: path)
      return try subvolume.nested(below: subvolume.inside, skippingUnreachable: true).map(\.path)
    case nil: return []
    }
  }

  /// Whether ``facts(of:privilege:isNested:listingNested:)`` lists the
  /// nested subvolumes (or datasets), and how.
  package enum NestedListing: Equatable, Sendable {
    case none
    case listed(skippingUnreachable: Bool)
  }

  /// Whether the ROOT `facts` describe can be frozen, and how; pure, so
  /// that each answer is tested on facts made by hand.
  package static func explain(_ facts: SnapshotFacts) -> SnapshotVerdict {
    guard facts.provider != nil else { return .refused(.notOnASnapshottingFilesystem) }
    guard facts.sourceReachable else { return .refused(.subvolumeRootUnreachable) }
    // A ROOT in a read-only subvolume is refused, as one on a read-only
    // filesystem is: nothing can be made in it, and its live view is one
    // instant already. One nested in a ROOT is shown as it is.
    if facts.readOnly { return facts.isNested ? .frozenAlready : .refused(.readOnlySubvolume) }
    if !facts.isRoot {
      // The kernel lets only its owner, and root, snapshot a subvolume
      // (fs/btrfs/ioctl.c); asked before anything is made at its root.
      guard facts.ownsSource else {
        return .refused(facts.isNested ? .nestedSubvolumeOfAnother : .subvolumeOfAnother)
      }
      guard facts.userMayDelete else { return .refused(.snapshotDeletionNotAllowed) }
    }
    return .take
  }

  /// Deletes what runs that were killed left on the filesystem that
  /// `subvolume` is on, each under its directory's lock (best effort).
  func hold(_ subvolume: borrowing BtrfsSubvolume) {
    switch self {
    case .btrfs: SnapshotDirectory.deleteLeftovers(onTheFilesystemOf: subvolume)
    }
  }

  /// Takes the snapshot of `subvolume` (by its descriptor) for the ROOT
  /// `root`, kept in `keeper` when given, else at the subvolume's root.
  func take(
    _ subvolume: borrowing BtrfsSubvolume, for root: FilePath, keptIn keeper: SnapshotStore?
  ) throws(SkipBackupError) -> Snapshot {
    switch self {
    case .btrfs: try Snapshot(of: subvolume, for: root, keptIn: keeper)
    }
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

/// What ``SnapshotProvider/facts(of:privilege:isNested:listingNested:)``
/// reads of a ROOT, and ``SnapshotProvider/explain(_:)`` judges.
package struct SnapshotFacts: Equatable, Sendable {
  /// The provider of its filesystem; `nil` where none can freeze it.
  package var provider: SnapshotProvider? = nil
  /// Whether what is frozen (a btrfs subvolume's root) is reachable
  /// through the ROOT's mount.
  package var sourceReachable = true
  /// Whether it is frozen already (a read-only subvolume).
  package var readOnly = false
  /// Whether it is a subvolume found nested in a ROOT, not one given.
  package var isNested = false
  /// Whether root runs.
  package var isRoot = false
  /// Whether the running user owns what is frozen.
  package var ownsSource = true
  /// Whether the running user may delete the snapshot once it is made
  /// (btrfs: root, or a filesystem mounted `user_subvol_rm_allowed`).
  package var userMayDelete = true
  /// The subvolumes nested in it, below the ROOT, when asked for.
  package var nested: [Nested] = []

  /// A subvolume nested in a ROOT: its path and the ID the tree's records
  /// give it, by which what is found there later is confirmed.
  package struct Nested: Equatable, Sendable {
    package let path: FilePath
    package let id: UInt64
    package init(path: FilePath, id: UInt64) {
      self.path = path
      self.id = id
    }
  }

  package init(
    provider: SnapshotProvider? = nil, sourceReachable: Bool = true, readOnly: Bool = false,
    isNested: Bool = false, isRoot: Bool = false, ownsSource: Bool = true,
    userMayDelete: Bool = true, nested: [Nested] = []
  ) {
    self.provider = provider
    self.sourceReachable = sourceReachable
    self.readOnly = readOnly
    self.isNested = isNested
    self.isRoot = isRoot
    self.ownsSource = ownsSource
    self.userMayDelete = userMayDelete
    self.nested = nested
  }
}

/// What ``SnapshotProvider/explain(_:)`` says of a ROOT.
package enum SnapshotVerdict: Equatable, Sendable {
  /// A snapshot is taken.
  case take
  /// It does not change (a read-only subvolume nested in a ROOT): it is
  /// its own snapshot, and nothing is taken, held or deleted.
  case frozenAlready
  /// It cannot be frozen, for this reason.
  case refused(SkipBackupError.Refusal)
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
/// run on that filesystem (``SnapshotProvider/hold(_:)``). Sendable for the
/// one other thread that touches it, ``SetupSignals``'s, which does so only
/// under the lock the run holds while it takes and deletes snapshots.
package final class SnapshotSet: @unchecked Sendable {
  package private(set) var snapshots: [Snapshot] = []

  /// Freezes each of `requests` (canonical directories), as `privilege`
  /// may. Several ROOTs on one subvolume share its snapshot. Each is
  /// resolved once (``ResolvedDirectory``), and everything after reaches
  /// it, its subvolume and its snapshot by descriptor.
  package init(_ requests: [SnapshotRequest], privilege: MountNamespace.Privilege)
    throws(SkipBackupError)
  {
    var taken: [Snapshot] = []
    var frozen: [FrozenRoot] = []
    var held: Set<UInt64> = []
    var directories: [OpenDirectory] = []
    do throws(SkipBackupError) {
      for request in requests {
        let root = request.path
        let resolved = try ResolvedDirectory.open(
          root, checkingTransitions: privilege.isRoot, isGiven: request.subvolumeID == nil)
        let facts = try SnapshotProvider.facts(
          of: resolved.descriptor, at: root, privilege: privilege,
          isNested: request.subvolumeID != nil)
        let verdict: SnapshotVerdict
        switch SnapshotProvider.explain(facts) {
        // Its caller refuses a ROOT given in a read-only subvolume before
        // anything is taken (``ViewRun``); here it is its own snapshot.
        case .refused(.readOnlySubvolume): verdict = .frozenAlready
        case .refused(let refusal): throw SkipBackupError(refusing: refusal, path: root)
        case let other: verdict = other
        }
        guard let provider = facts.provider else { continue }
        switch provider {
        case .btrfs:
          let identity = try resolved.descriptor.subvolumeIdentity()
          if let expected = request.subvolumeID,
            identity.id != expected || resolved.identity.inode != SnapshotFlag.subvolumeRootInode
          {
            throw SkipBackupError(refusing: .changedOnTheWay, path: root)
          }
          let subvolume = try BtrfsSubvolume.holding(resolved.descriptor, at: root)
          if held.insert(subvolume.mountID).inserted { provider.hold(subvolume) }
          let index: Int
          if let shared = taken.firstIndex(where: { $0.sourceIdentity == identity }) {
            index = shared
          } else if verdict == .frozenAlready {
            taken.append(try Snapshot(frozen: subvolume, identity: identity))
            index = taken.count - 1
          } else {
            // Kept beside the snapshot of a ROOT this one is inside, on the
            // same mount (a subvolume nested in it): nothing is written in
            // the nested subvolume (a container's layer, say).
            var keeper = frozen.last {
              path(root.bytes[...], below: $0.path.bytes) != nil
                && taken[$0.snapshot].store?.mountID == subvolume.mountID
            }.flatMap { taken[$0.snapshot].store }
            if keeper == nil { keeper = try Self.enclosingStore(of: subvolume, among: taken) }
            taken.append(try provider.take(subvolume, for: root, keptIn: keeper))
            index = taken.count - 1
          }
          frozen.append(
            FrozenRoot(
              path: root, live: resolved.identity,
              real: taken[index].path.appending(bytes: subvolume.inside), snapshot: index,
              inside: subvolume.inside))
          directories.append(
            OpenDirectory(
              try taken[index].confirm(subvolume.inside, holds: root, resolved.identity)))
        }
      }
    } catch {
      // A ROOT that cannot be frozen leaves none of the others' snapshots.
      for snapshot in taken { _ = try? snapshot.delete() }
      throw error
    }
    snapshots = taken
    self.roots = frozen
    self.directories = directories
  }

  /// Each ROOT, in the order given.
  package let roots: [FrozenRoot]

  /// Each ROOT's directory in its snapshot, open for reading, in the order
  /// given: what the walk and ``SnapshotWarming`` read, never its path,
  /// which passes through directories other users own.
  private let directories: [OpenDirectory]

  /// A descriptor held in an array, which holds no `~Copyable` value.
  private final class OpenDirectory {
    let descriptor: Descriptor
    init(_ descriptor: consuming Descriptor) { self.descriptor = descriptor }
  }

  /// The status of the item at `inside` (names below ROOT `index`) in
  /// its snapshot, reached from the ROOT's directory held, no link
  /// followed.
  package func status(of inside: [UInt8], in index: Int) throws(SkipBackupError) -> stat {
    guard !inside.isEmpty else { return try directories[index].descriptor.status() }
    return try directories[index].descriptor.open(
      FilePath(bytes: inside), [.pathOnly, .noFollow], resolve: ResolveFlags.noLinks.union(.beneath)
    ).status()
  }

  /// ROOT `index`'s directory in its snapshot, open for reading as long
  /// as this set lives (``TreeWalkOptions/rootDirectory``).
  package func directory(of index: Int) -> CInt {
    directories[index].descriptor.rawValue
  }

  /// Where root keeps the snapshot of a subvolume another user owns (a
  /// systemd-homed home, say): beside the subvolume it is nested in,
  /// reached through the same mount (by `..` from the subvolume's root),
  /// when root owns that one, so that nothing of root's is left in the
  /// user's home, where it would be in the user's way. `nil` where there
  /// is no such subvolume (the user's is its mount's root): the user's
  /// subvolume keeps it.
  private static func enclosingStore(
    of subvolume: borrowing BtrfsSubvolume, among taken: [Snapshot]
  ) throws(SkipBackupError) -> SnapshotStore? {
    let me = system_geteuid()
    guard subvolume.owner != me else { return nil }
    let bytes = subvolume.root.bytes
    guard bytes.count > 1, let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
    let parentPath = FilePath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash]))
    let enclosing: BtrfsSubvolume
    do throws(SkipBackupError) {
      enclosing = try BtrfsSubvolume.holding(
        subvolume.descriptor.open("..", [.pathOnly, .directory], reporting: parentPath),
        at: parentPath)
    } catch {
      return nil
    }
    guard enclosing.mountID == subvolume.mountID, enclosing.owner == me,
      (try? enclosing.open().isReadOnlySubvolume()) == false
    else { return nil }
    let identity = try enclosing.open().subvolumeIdentity()
    if let store = taken.lazy.compactMap(\.store).first(where: { $0.identity == identity }) {
      return store
    }
    return SnapshotStore(
      directory: try SnapshotDirectory(in: enclosing, naming: subvolume.root),
      mountID: enclosing.mountID, identity: identity)
  }

  /// The names at the root of the snapshot of ROOT `index` that its view
  /// hides: the snapshot directories the runs keep there, when the ROOT
  /// is its subvolume's root.
  package func hiddenAtRoot(of index: Int) -> [[UInt8]] {
    guard roots[index].inside.isEmpty else { return [] }
    let snapshot = snapshots[roots[index].snapshot]
    switch snapshot.provider {
    case .btrfs: return SnapshotDirectory.names(in: snapshot.descriptor)
    }
  }

  /// What tells the walk of ROOT `index` which of its snapshot's inodes
  /// may carry a mark, without a look at each; `nil` where none does.
  package func inodes(of index: Int) -> SnapshotInodes? {
    let snapshot = snapshots[roots[index].snapshot]
    switch snapshot.provider {
    case .btrfs: return SnapshotInodes(ofSubvolume: snapshot.descriptor)
    }
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
        diagnostics.report(SnapshotProvider.explain(error))
      }
    }
  }
}

extension SnapshotProvider {
  /// ``facts(of:privilege:isNested:listingNested:)`` of the directory open
  /// as `directory`, at `path`.
  static func facts(
    of directory: borrowing Descriptor, at path: FilePath, privilege: MountNamespace.Privilege,
    isNested: Bool, listingNested: NestedListing = .none
  ) throws(SkipBackupError) -> SnapshotFacts {
    var facts = SnapshotFacts(isNested: isNested, isRoot: privilege.isRoot)
    guard let provider = try of(directory) else { return facts }
    facts.provider = provider
    switch provider {
    case .btrfs:
      let subvolume: BtrfsSubvolume
      do throws(SkipBackupError) {
        subvolume = try BtrfsSubvolume.holding(directory, at: path)
      } catch  where error.refusal == .subvolumeRootUnreachable {
        facts.sourceReachable = false
        return facts
      }
      facts.readOnly = try subvolume.open().isReadOnlySubvolume()
      facts.ownsSource = subvolume.owner == system_geteuid()
      facts.userMayDelete = privilege.isRoot ? true : try subvolume.allowsUserDeletion()
      if case .listed(let skipping) = listingNested {
        facts.nested = try subvolume.nested(below: subvolume.inside, skippingUnreachable: skipping)
          .map { SnapshotFacts.Nested(path: $0.path, id: $0.id) }
      }
    }
    return facts
  }
}

/// The directory a run keeps snapshots in (``SnapshotDirectory``), shared
/// by the snapshots of the subvolumes nested in the one it is in.
final class SnapshotStore {
  let directory: SnapshotDirectory
  /// The mount through which the subvolume it is in was reached: a
  /// snapshot is made on the filesystem of its source.
  let mountID: UInt64
  /// The subvolume it is in.
  let identity: SubvolumeIdentity
  init(directory: consuming SnapshotDirectory, mountID: UInt64, identity: SubvolumeIdentity) {
    self.directory = directory
    self.mountID = mountID
    self.identity = identity
  }
}

/// One snapshot a run took, of the subvolume `source`, at `path`; held
/// (the lock of ``SnapshotDirectory``) until it is deleted or the process
/// ends. A read-only subvolume (a snapper or `btrfs receive` snapshot) is
/// frozen already: it is its own snapshot, nothing is taken, held or
/// deleted, and nothing is written in it, which could not be.
package final class Snapshot {
  package let provider: SnapshotProvider
  /// The live directory it is a snapshot of: the subvolume's root.
  package let source: FilePath
  /// Which subvolume that is.
  let sourceIdentity: SubvolumeIdentity
  /// Where the snapshot is: `SOURCE/.skipbackup-snapshots/NAME` (or that
  /// of the subvolume it is nested in), or `SOURCE` itself when it is
  /// read-only.
  package let path: FilePath
  /// The snapshot's root, open (`O_PATH`).
  package let descriptor: Descriptor
  /// Which subvolume the snapshot is: what ``reopen()`` confirms.
  private let identity: SubvolumeIdentity
  /// What this run took; `nil` for a read-only subvolume.
  private let taken: Taken?
  /// Where it is kept; `nil` for a read-only subvolume.
  var store: SnapshotStore? { taken?.store }

  /// A snapshot this run made: where, its name, and this run's lock on it,
  /// shared.
  private final class Taken {
    let store: SnapshotStore
    let name: [UInt8]
    let lock: Descriptor
    init(store: SnapshotStore, name: [UInt8], lock: consuming Descriptor) {
      self.store = store
      self.name = name
      self.lock = lock
    }
  }

  /// The read-only `subvolume`, which is its own snapshot.
  fileprivate init(frozen subvolume: borrowing BtrfsSubvolume, identity: SubvolumeIdentity)
    throws(SkipBackupError)
  {
    provider = .btrfs
    source = subvolume.root
    sourceIdentity = identity
    path = subvolume.root
    descriptor = try subvolume.descriptor.open(".", [.pathOnly, .directory], reporting: path)
    self.identity = identity
    taken = nil
  }

  /// A snapshot of `subvolume`, kept in `keeper` when given, else in the
  /// subvolume's own `.skipbackup-snapshots`.
  fileprivate init(
    of subvolume: borrowing BtrfsSubvolume, for root: FilePath, keptIn keeper: SnapshotStore?
  ) throws(SkipBackupError) {
    provider = .btrfs
    source = subvolume.root
    sourceIdentity = try subvolume.open().subvolumeIdentity()
    let store: SnapshotStore
    if let keeper {
      store = keeper
    } else {
      store = SnapshotStore(
        directory: try SnapshotDirectory(in: subvolume, naming: root), mountID: subvolume.mountID,
        identity: sourceIdentity)
    }
    var name: [UInt8] = []
    let lock = try store.directory.takeSnapshot(of: subvolume, naming: root, name: &name)
    path = store.directory.path.appending(bytes: name)
    taken = Taken(store: store, name: name, lock: lock)
    descriptor = try store.directory.openSnapshot(name)
    identity = try descriptor.open(".", [.directory], reporting: path).subvolumeIdentity()
  }

  /// Opens `root`'s directory in the snapshot, at `inside`, for reading,
  /// and checks that it is the same inode of the same subvolume as `live`
  /// (btrfs keeps inode numbers in a snapshot, and the snapshot was taken
  /// of `live`'s subvolume by descriptor), so that a ROOT renamed or
  /// replaced while its snapshot was taken is refused.
  func confirm(_ inside: [UInt8], holds root: FilePath, _ live: DirectoryIdentity)
    throws(SkipBackupError) -> Descriptor
  {
    let real =
      inside.isEmpty
      ? try descriptor.open(".", [.directory], reporting: path)
      : try descriptor.open(
        FilePath(bytes: inside), [.directory, .noFollow],
        resolve: ResolveFlags.noLinks.union(.beneath))
    guard UInt64(try real.status().st_ino) == live.inode else {
      throw SkipBackupError(refusing: .movedWhileSnapshotted, path: root)
    }
    return real
  }

  /// Opens the snapshot's root again by its path, in a new mount namespace:
  /// overlayfs takes a layer only from the caller's namespace (Linux 6.18
  /// answers `EINVAL` for a directory opened before unshare(2)). Refused
  /// unless it is the snapshot taken: the same device and inode as the
  /// descriptor held, and the same filesystem, subvolume ID and
  /// generation. The caller owns the number returned (``ViewMounter``
  /// keeps its layers' descriptors as numbers).
  package func reopen() throws(SkipBackupError) -> CInt {
    let opened = try Descriptor.open(path, [.pathOnly, .directory], resolve: .noLinks)
    let (now, before) = (try opened.status(), try descriptor.status())
    guard now.st_dev == before.st_dev, now.st_ino == before.st_ino,
      try opened.open(".", [.directory], reporting: path).subvolumeIdentity() == identity
    else { throw SkipBackupError(refusing: .changedOnTheWay, path: path) }
    return opened.release()
  }

  /// See ``SnapshotSet/holdForCommand()``.
  func holdForCommand() throws(SkipBackupError) {
    guard let taken else { return }
    try taken.store.directory.holdForCommand(taken.name)
  }

  /// Deletes the snapshot, by the descriptor of the directory that holds
  /// it and its name, unless a process COMMAND started still holds it
  /// (then `false`: the next run deletes it).
  func delete() throws(SkipBackupError) -> Bool {
    guard let taken else { return true }
    return try taken.store.directory.deleteOwn(taken.name, lock: taken.lock)
  }
}
