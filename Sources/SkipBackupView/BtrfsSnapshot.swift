import SkipBackupCore
import SkipBackupWalk
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The btrfs subvolume that holds a ROOT: a snapshot is of a whole
/// subvolume, taken from its root directory, which has inode 256 (the
/// kernel's `BTRFS_FIRST_FREE_OBJECTID`; fs/btrfs/ioctl.c refuses any other
/// source with `EINVAL`). A subvolume nested inside has a device of its
/// own, so the nearest directory at or above ROOT with inode 256, on ROOT's
/// device and reached through ROOT's mount, is its subvolume's root.
package struct BtrfsSubvolume {
  /// The subvolume's root directory, as this namespace reaches it.
  let root: FilePath
  /// The mount through which it is reached, for its options.
  let mountID: UInt64
  /// Which subvolume it is, once confirmed from a descriptor resolved
  /// once: each later open of `root` by its path is refused unless it
  /// reaches this one (``open()``).
  var identity: SubvolumeIdentity? = nil

  /// Opens the subvolume's root for reading (the snapshot ioctl refuses an
  /// `O_PATH` source), refused unless it is the subvolume `identity`
  /// names, at its root: another user may have swapped a directory on the
  /// way for a link since.
  func open() throws(SkipBackupError) -> CInt {
    let opened = try ResolvedDirectory.openDirectory(
      root, in: MountFlag.atWorkingDirectory, O_RDONLY, 0, naming: root, root)
    do throws(SkipBackupError) {
      var status = stat()
      try check(.fstat, root) { system_fstat(opened, &status) }
      if let identity {
        guard UInt64(status.st_ino) == SnapshotFlag.subvolumeRootInode,
          try SubvolumeIdentity(of: opened, root) == identity
        else { throw SkipBackupError(refusing: .changedOnTheWay, path: root) }
      }
    } catch {
      _ = system_close(opened)
      throw error
    }
    return opened
  }

  /// The subvolume that holds `path` (canonical, a directory), and `path`
  /// below its root ("" for the root itself).
  static func holding(_ path: FilePath) throws(SkipBackupError) -> (BtrfsSubvolume, [UInt8]) {
    let start = try ItemPlace(of: path)
    var candidate = path.bytes
    var place = start
    while place.inode != SnapshotFlag.subvolumeRootInode {
      // Above ROOT's mount, or on another device, before any subvolume root:
      // the subvolume's root is not mounted here.
      guard candidate.count > 1, let slash = candidate.lastIndex(of: UInt8(ascii: "/")) else {
        throw SkipBackupError(refusing: .subvolumeRootUnreachable, path: path)
      }
      candidate = slash == 0 ? [UInt8(ascii: "/")] : Array(candidate[..<slash])
      place = try ItemPlace(of: FilePath(bytes: candidate))
      guard place.sharesMount(with: start) else {
        throw SkipBackupError(refusing: .subvolumeRootUnreachable, path: path)
      }
    }
    let skip = candidate.count == 1 ? 1 : candidate.count + 1
    let inside = path.bytes.count > candidate.count ? Array(path.bytes[skip...]) : []
    return (BtrfsSubvolume(root: FilePath(bytes: candidate), mountID: start.mountID), inside)
  }

  /// Whether the subvolume whose root is `root` is read-only (its
  /// `BTRFS_SUBVOL_RDONLY` flag, which any user may read).
  static func isReadOnly(_ root: FilePath) throws(SkipBackupError) -> Bool {
    let opened = try check(.openat, root) {
      root.withCString {
        system_openat(
          MountFlag.atWorkingDirectory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    defer { _ = system_close(opened) }
    var flags: UInt64 = 0
    try check(.btrfsSubvolumeGetFlags, root) { system_btrfsSubvolumeGetFlags(opened, &flags) }
    return flags & SnapshotFlag.readOnly != 0
  }

  /// The subvolumes nested below `root`, a canonical directory on btrfs:
  /// each one's root directory, a subvolume before those nested in it. A
  /// snapshot holds each as an empty directory (the kernel's placeholder,
  /// inode 2), where the live view, which reads the one filesystem, shows
  /// it whole. Found from the tree's own records (each subvolume's
  /// children, and where each was made), which any user may read, so no
  /// walk of the live tree is needed. One that the kernel names at a path
  /// where something else is now (a filesystem mounted over it, a rename
  /// since) is not there for users either, and is left out.
  package static func nested(below root: FilePath) throws(SkipBackupError) -> [FilePath] {
    try nested(below: root, skippingUnreachable: false)
  }

  /// ``nested(below:)``, or with `skippingUnreachable` each subvolume whose
  /// place cannot be read (another user's directory on the way) left out,
  /// and what it holds.
  static func nested(below root: FilePath, skippingUnreachable: Bool) throws(SkipBackupError)
    -> [FilePath]
  {
    try nestedByID(below: root, skippingUnreachable: skippingUnreachable).map(\.path)
  }

  /// ``nested(below:skippingUnreachable:)``, each with the subvolume ID the
  /// tree's records give it: what is found at its path later is confirmed
  /// by that ID, not by its inode number (every subvolume's root is 256).
  static func nestedByID(below root: FilePath, skippingUnreachable: Bool)
    throws(SkipBackupError) -> [(path: FilePath, id: UInt64)]
  {
    let (holding, _) = try Self.holding(root)
    var found: [(path: FilePath, id: UInt64)] = []
    var pending = [holding.root]
    while !pending.isEmpty {
      let parent = pending.removeFirst()
      let kids: [(FilePath, UInt64)]
      do throws(SkipBackupError) {
        kids = try children(of: parent, skippingUnreachable: skippingUnreachable)
      } catch {
        // One found but unreadable (another user's, mode 0700): what it
        // holds is left out with it, as a walk leaves it.
        guard skippingUnreachable, error.errno == .permissionDenied, parent != holding.root
        else { throw error }
        continue
      }
      for (child, id) in kids {
        guard path(child.bytes[...], below: root.bytes) != nil,
          let place = try? ItemPlace(of: child),
          place.inode == SnapshotFlag.subvolumeRootInode, place.mountID == holding.mountID
        else { continue }
        found.append((child, id))
        pending.append(child)
      }
    }
    return found
  }

  /// The subvolumes made directly in the subvolume whose root is `parent`.
  private static func children(of parent: FilePath, skippingUnreachable: Bool)
    throws(SkipBackupError) -> [(FilePath, UInt64)]
  {
    let opened = try check(.openat, parent) {
      parent.withCString {
        system_openat(
          MountFlag.atWorkingDirectory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    defer { _ = system_close(opened) }
    var places: [(treeid: UInt64, dirid: UInt64)] = []
    let most = SnapshotFlag.childrenMost
    var treeids = [CUnsignedLongLong](repeating: 0, count: most)
    var dirids = treeids
    var next: UInt64 = 0
    while true {
      var count: CInt = 0
      let more = try check(.btrfsSubvolumeChildren, parent) {
        system_btrfsSubvolumeChildren(opened, &next, &treeids, &dirids, &count)
      }
      for index in 0..<Int(count) {
        places.append((UInt64(treeids[index]), UInt64(dirids[index])))
      }
      if more == 0 { break }
    }
    var children: [(FilePath, UInt64)] = []
    var buffer = [CChar](repeating: 0, count: SnapshotFlag.placeMost)
    for place in places {
      switch valueOrErrno({
        system_btrfsSubvolumePlace(opened, place.dirid, place.treeid, &buffer)
      }) {
      case .success:
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        children.append((parent.appending(bytes: bytes), place.treeid))
      // Deleted since its record was read.
      case .failure(.noSuchFileOrDirectory): continue
      case .failure(.permissionDenied) where skippingUnreachable: continue
      case .failure(let errno):
        throw SkipBackupError(.btrfsSubvolumePlace, errno, path: parent)
      }
    }
    return children
  }

  /// Refuses an ordinary user a snapshot that could not be deleted: the
  /// kernel lets anyone but root delete a subvolume only on a filesystem
  /// mounted with `user_subvol_rm_allowed` (fs/btrfs/ioctl.c,
  /// btrfs_ioctl_snap_destroy), which /proc/self/mountinfo lists among the
  /// filesystem's own options (the field after the " - " separator's two).
  func requireUserDeletion(naming root: FilePath) throws(SkipBackupError) {
    let text = try MountTable.read()
    let identifier = Array(String(mountID).utf8)
    for line in text.split(separator: UInt8(ascii: "\n")) {
      let fields = line.split(separator: UInt8(ascii: " "))
      guard fields.first.map(Array.init) == identifier,
        let separator = fields.firstIndex(where: { $0.elementsEqual("-".utf8) }),
        separator + 3 < fields.endIndex
      else { continue }
      let options = fields[separator + 3].split(separator: UInt8(ascii: ","))
      if options.contains(where: { $0.elementsEqual("user_subvol_rm_allowed".utf8) }) { return }
      break
    }
    throw SkipBackupError(refusing: .snapshotDeletionNotAllowed, path: root)
  }
}

/// Where `run --snapshot` keeps its snapshots of a subvolume: the
/// directory `.skipbackup-snapshots` at the subvolume's root (a snapshot
/// must be made on the same filesystem, and the subvolume's root is the one
/// place of it that its owner can write and that every namespace that
/// reaches ROOT reaches), mode 0700, owned by the user who runs, and
/// marked excluded from backups by every mechanism. The view of the
/// subvolume's root hides it.
///
/// Each run's snapshot is `run-PID-N`, beside its lock file `run-PID-N.lock`,
/// which the run holds shared (flock(2)) from before the snapshot is made
/// until it is deleted, and which COMMAND holds too (``holdForCommand(_:)``),
/// so that the lock is free only when no process that may read the snapshot
/// is left, however they ended. A lock file that can be taken exclusively
/// therefore belongs to a run that is over: its snapshot is deleted by the
/// next run on the subvolume, and nothing else in the directory is ever
/// touched. Making a snapshot and deleting leftovers happen under the
/// directory's own lock `lock`, so that no run deletes another's
/// snapshot between the moment its lock file is made and the moment it is
/// held.
package struct SnapshotDirectory: ~Copyable {
  package static let name = Array(".skipbackup-snapshots".utf8)
  private static let prefix = Array("run-".utf8)
  private static let lockSuffix = Array(".lock".utf8)

  /// The directory's path.
  let path: FilePath
  /// The directory, open.
  let descriptor: CInt

  /// The directory of the running user where the shared one is another
  /// user's: `.skipbackup-snapshots.UID`. The kernel lets the owner of a
  /// subvolume, and root, snapshot it (fs/btrfs/ioctl.c), so root's backup
  /// of a user's home and the user's own backups of it each keep theirs.
  static var ownName: [UInt8] { name + Array(".\(system_geteuid())".utf8) }

  /// Whether `component` names a snapshot directory: the shared name, or
  /// the shared name, a dot and a user ID.
  package static func isName(_ component: some Collection<UInt8>) -> Bool {
    guard component.starts(with: name) else { return false }
    let rest = component.dropFirst(name.count)
    return rest.isEmpty
      || (rest.first == UInt8(ascii: ".") && rest.count > 1
        && rest.dropFirst().allSatisfy { (0x30...0x39).contains($0) })
  }

  /// Whether the subvolume at `path` is a run's snapshot: named `run-…`,
  /// in a directory with a snapshot directory's name at a subvolume's
  /// root, where runs keep them; anything else is a user's own.
  static func holds(_ path: FilePath) -> Bool {
    let names = path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    guard names.count >= 3, isName(names[names.count - 2]),
      names[names.count - 1].starts(with: prefix)
    else { return false }
    let above = Array(names.dropLast(2).joined(separator: [UInt8(ascii: "/")]))
    let parent = FilePath(bytes: above.isEmpty ? [UInt8(ascii: "/")] : above)
    return (try? ItemPlace(of: parent))?.inode == SnapshotFlag.subvolumeRootInode
  }

  /// The snapshot directories of the running user's runs at the root of
  /// the snapshot open as `snapshot`: the shared one, which every run
  /// makes, and the user's own where there is one.
  static func names(in snapshot: CInt) -> [[UInt8]] {
    [Self.name]
      + [Self.ownName].filter { name in
        var status = stat()
        return FilePath(bytes: name).withCString {
          system_fstatat(snapshot, $0, &status, AT_SYMLINK_NOFOLLOW)
        } == 0
      }
  }

  /// Opens the directory of `subvolume`, made if missing: the shared one,
  /// or the running user's own when the shared one is another user's;
  /// `root` is the ROOT messages name.
  init(in subvolume: BtrfsSubvolume, naming root: FilePath) throws(SkipBackupError) {
    let source = try subvolume.open()
    defer { _ = system_close(source) }
    // In another user's subvolume (root's, in a home that is its mount's
    // root), readable, so that the user's own walks read its marks and
    // leave it out, where an unreadable directory would stop them; what it
    // holds is the user's own files, as they are in the home.
    var status = stat()
    try check(.fstat, subvolume.root) { system_fstat(source, &status) }
    let mode: mode_t = status.st_uid == system_geteuid() ? 0o700 : 0o755
    var name = Self.name
    var (opened, owner) = try Self.make(name, mode: mode, in: source, at: subvolume.root)
    if owner != system_geteuid() {
      _ = system_close(opened)
      name = Self.ownName
      (opened, owner) = try Self.make(name, mode: mode, in: source, at: subvolume.root)
    }
    let path = subvolume.root.appending(bytes: name)
    do throws(SkipBackupError) {
      guard owner == system_geteuid() else {
        throw SkipBackupError(refusing: .snapshotDirectoryOfAnother, path: path)
      }
      // Out of every backup of the live tree too, by whatever it honours:
      // `run` and `list` of the subvolume, borg's --exclude-nodump, tar's
      // and restic's --exclude-caches. Another run's snapshot in it is a
      // whole copy of the subvolume, which a walk would otherwise enter.
      // Idempotent: a directory already marked is written nothing.
      try MechanismSet.every.mark(
        FileItem(descriptor: FileDescriptor(rawValue: opened), displayPath: path))
    } catch {
      _ = system_close(opened)
      throw error
    }
    self.path = path
    descriptor = opened
  }

  /// Makes the directory `name` in the subvolume's root, open as `source`,
  /// with `mode` if missing, and opens it, never through a link; returns it
  /// and its owner.
  private static func make(_ name: [UInt8], mode: mode_t, in source: CInt, at root: FilePath)
    throws(SkipBackupError) -> (CInt, uid_t)
  {
    let path = root.appending(bytes: name)
    let child = FilePath(bytes: name)
    switch valueOrErrno({ child.withCString { system_mkdirat(source, $0, mode) } }) {
    case .success, .failure(.fileExists): break
    case .failure(let errno): throw SkipBackupError(.mkdirat, errno, path: path)
    }
    let opened = try check(.openat, path) {
      child.withCString {
        system_openat(source, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    var status = stat()
    do throws(SkipBackupError) {
      try check(.fstat, path) { system_fstat(opened, &status) }
    } catch {
      _ = system_close(opened)
      throw error
    }
    return (opened, status.st_uid)
  }

  /// Opens the directory `name` at the root of the subvolume `root` when
  /// it is there and the running user's, making nothing; `nil` otherwise.
  private init?(existingIn root: FilePath, named name: [UInt8]) {
    path = root.appending(bytes: name)
    let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
    guard
      case .success(let parent) = valueOrErrno({
        root.withCString { system_openat(MountFlag.atWorkingDirectory, $0, flags, 0) }
      })
    else { return nil }
    defer { _ = system_close(parent) }
    let child = FilePath(bytes: name)
    guard
      case .success(let opened) = valueOrErrno({
        child.withCString { system_openat(parent, $0, flags, 0) }
      })
    else { return nil }
    var status = stat()
    guard system_fstat(opened, &status) == 0, status.st_uid == system_geteuid() else {
      _ = system_close(opened)
      return nil
    }
    descriptor = opened
  }

  deinit { _ = system_close(descriptor) }

  /// Deletes what killed runs left in every snapshot directory of the
  /// running user's on the filesystem that `subvolume` is on, as far as
  /// this namespace's mounts of it reach: a run on one subvolume cleans up
  /// after a run on another. Best effort: a directory that cannot be read,
  /// locked or cleaned (a read-only subvolume, which holds a copy of one)
  /// is left as it is, and this run's own directory is cleaned again, with
  /// its errors, when its snapshot is taken.
  static func deleteLeftovers(onTheFilesystemOf subvolume: BtrfsSubvolume) {
    guard let points = try? MountTable.mountPoints(sharingFilesystemWith: subvolume.mountID)
    else { return }
    var roots: [FilePath] = []
    for point in points {
      let mountPoint = FilePath(bytes: point)
      guard let (holding, _) = try? BtrfsSubvolume.holding(mountPoint) else { continue }
      let below = (try? BtrfsSubvolume.nested(below: holding.root, skippingUnreachable: true)) ?? []
      for root in [holding.root] + below where !roots.contains(root) { roots.append(root) }
    }
    for root in roots where (try? BtrfsSubvolume.isReadOnly(root)) == false {
      for name in [Self.name, Self.ownName] {
        guard let directory = SnapshotDirectory(existingIn: root, named: name),
          let lock = try? directory.lockDirectory()
        else { continue }
        try? directory.deleteLeftovers()
        _ = system_close(lock)
      }
    }
  }

  /// Deletes what earlier runs left, then takes a read-only snapshot of
  /// `subvolume` under a new name, held. Returns the name and the lock.
  func takeSnapshot(of subvolume: BtrfsSubvolume, naming root: FilePath) throws(SkipBackupError)
    -> (name: [UInt8], lock: CInt)
  {
    let guardLock = try lockDirectory()
    defer { _ = system_close(guardLock) }
    try deleteLeftovers()
    let source = try subvolume.open()
    defer { _ = system_close(source) }
    // The one moment the snapshot is of: ROOT's path must still lead to
    // the subvolume's root that was found.
    var status = stat()
    try check(.fstat, subvolume.root) { system_fstat(source, &status) }
    guard UInt64(status.st_ino) == SnapshotFlag.subvolumeRootInode else {
      throw SkipBackupError(refusing: .movedWhileSnapshotted, path: root)
    }
    var number = 0
    while true {
      let name = Self.prefix + Array("\(system_getpid())-\(number)".utf8)
      let lockName = FilePath(bytes: name + Self.lockSuffix)
      let result = valueOrErrno {
        lockName.withCString {
          system_openat(
            descriptor, $0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
      }
      switch result {
      case .failure(.fileExists):
        number += 1
        continue
      case .failure(let errno):
        throw SkipBackupError(.openat, errno, path: path.appending(bytes: lockName.bytes))
      case .success(let lock):
        do throws(SkipBackupError) {
          try check(.flock, path.appending(bytes: lockName.bytes)) { system_flock(lock, LOCK_SH) }
          let cName = name.map { CChar(bitPattern: $0) } + [0]
          try check(.btrfsSnapshotCreate, root) {
            cName.withUnsafeBufferPointer {
              system_btrfsSnapshotCreate(descriptor, source, $0.baseAddress!, true)
            }
          }
        } catch {
          _ = lockName.withCString { system_unlinkat(descriptor, $0, 0) }
          _ = system_close(lock)
          throw error
        }
        return (name, lock)
      }
    }
  }

  /// Opens the snapshot `name`'s root.
  func openSnapshot(_ name: [UInt8], naming root: FilePath) throws(SkipBackupError) -> CInt {
    let snapshot = FilePath(bytes: name)
    return try check(.openat, path.appending(bytes: name)) {
      snapshot.withCString {
        system_openat(
          descriptor, $0, MountFlag.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
  }

  /// Takes the snapshot `name`'s lock once more, on a descriptor of its own
  /// that is not closed on exec: COMMAND, and whatever it starts, hold it.
  func holdForCommand(_ name: [UInt8]) throws(SkipBackupError) {
    let lockName = FilePath(bytes: name + Self.lockSuffix)
    let lockPath = path.appending(bytes: lockName.bytes)
    let lock = try check(.openat, lockPath) {
      lockName.withCString { system_openat(descriptor, $0, O_RDONLY | O_NOFOLLOW, 0) }
    }
    try check(.flock, lockPath) { system_flock(lock, LOCK_SH) }
  }

  /// Deletes this run's snapshot `name`, whose lock `lock` it holds, unless
  /// another process (one COMMAND left running) holds it too: then `false`.
  func deleteOwn(_ name: [UInt8], lock: CInt) throws(SkipBackupError) -> Bool {
    let lockPath = path.appending(bytes: name + Self.lockSuffix)
    switch valueOrErrno({ system_flock(lock, LOCK_EX | LOCK_NB) }) {
    case .success: break
    case .failure(.wouldBlock): return false
    case .failure(let errno): throw SkipBackupError(.flock, errno, path: lockPath)
    }
    try delete(name)
    return true
  }

  /// Takes the directory's own lock, waiting for a run that is making its
  /// snapshot or deleting leftovers.
  private func lockDirectory() throws(SkipBackupError) -> CInt {
    let lockPath = path.appending(bytes: Array("lock".utf8))
    let lock = try check(.openat, lockPath) {
      system_openat(descriptor, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    do {
      try check(.flock, lockPath) { system_flock(lock, LOCK_EX) }
    } catch {
      _ = system_close(lock)
      throw error
    }
    return lock
  }

  /// Deletes each snapshot whose lock file no process holds: its run is
  /// over. Only names of this scheme are looked at.
  private func deleteLeftovers() throws(SkipBackupError) {
    let listing = try check(.openat, path) {
      system_openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    }
    defer { _ = system_close(listing) }
    let names: [[UInt8]]
    switch directoryNames(listing) {
    case .success(let found): names = found
    case .failure(let errno): throw SkipBackupError(.getdents64, errno, path: path)
    }
    for lockName in names
    where lockName.starts(with: Self.prefix) && lockName.count > Self.lockSuffix.count
      && lockName.suffix(Self.lockSuffix.count).elementsEqual(Self.lockSuffix)
    {
      let lockPath = path.appending(bytes: lockName)
      let cName = lockName.map { CChar(bitPattern: $0) } + [0]
      let lock = try check(.openat, lockPath) {
        cName.withUnsafeBufferPointer {
          system_openat(descriptor, $0.baseAddress!, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0)
        }
      }
      defer { _ = system_close(lock) }
      switch valueOrErrno({ system_flock(lock, LOCK_EX | LOCK_NB) }) {
      case .success: try delete(Array(lockName.dropLast(Self.lockSuffix.count)))
      case .failure(.wouldBlock): continue
      case .failure(let errno): throw SkipBackupError(.flock, errno, path: lockPath)
      }
    }
  }

  /// Deletes the snapshot `name` (when it is there) and then its lock file.
  /// Its read-only flag is cleared first: the kernel asks an ordinary user
  /// for write access to the snapshot's root (btrfs_permission answers
  /// `EROFS` for a read-only subvolume), and asks root nothing.
  private func delete(_ name: [UInt8]) throws(SkipBackupError) {
    let snapshotPath = path.appending(bytes: name)
    let cName = name.map { CChar(bitPattern: $0) } + [0]
    let opened = valueOrErrno {
      cName.withUnsafeBufferPointer {
        system_openat(
          descriptor, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
      }
    }
    switch opened {
    case .failure(.noSuchFileOrDirectory): break
    case .failure(let errno): throw SkipBackupError(.openat, errno, path: snapshotPath)
    case .success(let snapshot):
      defer { _ = system_close(snapshot) }
      var status = stat()
      try check(.fstat, snapshotPath) { system_fstat(snapshot, &status) }
      // Only a subvolume: anything else of that name is not this scheme's.
      guard UInt64(status.st_ino) == SnapshotFlag.subvolumeRootInode else { return }
      var flags: UInt64 = 0
      try check(.btrfsSubvolumeGetFlags, snapshotPath) {
        system_btrfsSubvolumeGetFlags(snapshot, &flags)
      }
      if flags & SnapshotFlag.readOnly != 0 {
        try check(.btrfsSubvolumeSetFlags, snapshotPath) {
          system_btrfsSubvolumeSetFlags(snapshot, flags & ~SnapshotFlag.readOnly)
        }
      }
      // The kernel also asks an ordinary user for write and search access
      // to the snapshot's root, which has the mode of the subvolume's root
      // (0555 for a home its owner keeps read-only, say); its owner may
      // grant them.
      if system_geteuid() != 0, status.st_mode & 0o300 != 0o300 {
        try check(.fchmod, snapshotPath) {
          system_fchmod(snapshot, (status.st_mode & 0o7777) | 0o300)
        }
      }
      try check(.btrfsSnapshotDestroy, snapshotPath) {
        cName.withUnsafeBufferPointer { system_btrfsSnapshotDestroy(descriptor, $0.baseAddress!) }
      }
    }
    let lockName = FilePath(bytes: name + Self.lockSuffix)
    try check(.unlinkat, path.appending(bytes: lockName.bytes)) {
      lockName.withCString { system_unlinkat(descriptor, $0, 0) }
    }
  }
}
