import SkipBackupCore
import SkipBackupWalk
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The btrfs subvolume that holds a ROOT, found by descriptor: a snapshot
/// is of a whole subvolume, taken from its root directory, which has inode
/// 256 (the kernel's `BTRFS_FIRST_FREE_OBJECTID`; fs/btrfs/ioctl.c refuses
/// any other source with `EINVAL`). A subvolume nested inside has a device
/// of its own, so the nearest directory at or above ROOT with inode 256,
/// reached through ROOT's mount, is its subvolume's root: found by `..`
/// from ROOT's descriptor, never by ROOT's path again.
struct BtrfsSubvolume: ~Copyable {
  /// The subvolume's root directory, as this namespace reached it: for
  /// messages, and where its snapshots are said to be.
  let root: FilePath
  /// The subvolume's root, open (`O_PATH`).
  let descriptor: Descriptor
  /// The mount through which it is reached, for its options.
  let mountID: UInt64
  /// The owner of its root: the kernel lets its owner, and root, snapshot it.
  let owner: uid_t
  /// The directory it was found from, below its root ("" for the root itself).
  let inside: [UInt8]

  /// The subvolume that holds `directory`, open at `path` (canonical).
  static func holding(_ directory: borrowing Descriptor, at path: FilePath)
    throws(SkipBackupError) -> BtrfsSubvolume
  {
    let start = try ItemPlace(of: directory)
    var current = try directory.open(".", [.pathOnly, .directory], reporting: path)
    var candidate = path.bytes
    var place = start
    while place.inode != SnapshotFlag.subvolumeRootInode {
      // Above ROOT's mount, or on another device, before any subvolume root:
      // the subvolume's root is not mounted here.
      guard candidate.count > 1, let slash = candidate.lastIndex(of: UInt8(ascii: "/")) else {
        throw SkipBackupError(refusing: .subvolumeRootUnreachable, path: path)
      }
      candidate = slash == 0 ? [UInt8(ascii: "/")] : Array(candidate[..<slash])
      let parent = try current.open(
        "..", [.pathOnly, .directory], reporting: FilePath(bytes: candidate))
      place = try ItemPlace(of: parent)
      guard place.sharesMount(with: start) else {
        throw SkipBackupError(refusing: .subvolumeRootUnreachable, path: path)
      }
      current = parent
    }
    let skip = candidate.count == 1 ? 1 : candidate.count + 1
    let inside = path.bytes.count > candidate.count ? Array(path.bytes[skip...]) : []
    let owner = try current.status().st_uid
    return BtrfsSubvolume(
      root: FilePath(bytes: candidate), descriptor: current, mountID: start.mountID, owner: owner,
      inside: inside)
  }

  /// Its root opened for reading (the snapshot ioctl refuses an `O_PATH`
  /// source, and so do the subvolume's own ioctls).
  func open() throws(SkipBackupError) -> Descriptor {
    try descriptor.open(".", [.directory], reporting: root)
  }

  /// The directory `relative` below its root, opened with `flags` by
  /// `openat2` refusing any link and anything outside the subvolume's
  /// mount: nothing another user swaps on the way is followed.
  func open(_ relative: [UInt8], _ flags: OpenFlags) throws(SkipBackupError) -> Descriptor {
    if relative.isEmpty {
      return try descriptor.open(".", flags.union(.directory), reporting: root)
    }
    return try descriptor.open(
      FilePath(bytes: relative), flags.union([.directory, .noFollow]),
      resolve: ResolveFlags.noLinks.union(.beneath))
  }

  /// A subvolume nested in this one: where it is, below this one's root
  /// and as a path, and its ID in the tree's records.
  struct Nested: Equatable {
    let relative: [UInt8]
    let path: FilePath
    let id: UInt64
  }

  /// The subvolumes nested below `inside` (names below this subvolume's
  /// root), each one's root directory, a subvolume before those nested in
  /// it. A snapshot holds each as an empty directory (the kernel's
  /// placeholder, inode 2), where the live view, which reads the one
  /// filesystem, shows it whole. Found from the tree's own records (each
  /// subvolume's children, and where each was made), which any user may
  /// read, and each confirmed where the records place it: opened from this
  /// subvolume's root by descriptor, refusing links, a subvolume's root
  /// (inode 256) reached through this mount and, where it can be read,
  /// the subvolume of the ID the records give, never judged by its inode
  /// number alone (every subvolume's root is 256). One that is not there
  /// (a filesystem mounted over it, a rename since, a link swapped in) is
  /// not there for users either, and is left out; so are the runs'
  /// snapshots in a snapshot directory. With `skippingUnreachable`, one
  /// whose place or contents cannot be read (another user's directory on
  /// the way) is left out with what it holds, as a walk leaves it.
  func nested(below inside: [UInt8], skippingUnreachable: Bool) throws(SkipBackupError)
    -> [Nested]
  {
    var found: [Nested] = []
    var pending: [(relative: [UInt8], id: UInt64?)] = [([], nil)]
    while !pending.isEmpty {
      let (parentRelative, parentID) = pending.removeFirst()
      let parent: Descriptor
      do throws(SkipBackupError) {
        parent = try open(parentRelative, [])
      } catch {
        // One found but unreadable (another user's, mode 0700).
        guard skippingUnreachable, error.errno == .permissionDenied else { throw error }
        continue
      }
      let children: [(id: UInt64, directory: UInt64)]
      do throws(SkipBackupError) {
        // Swapped since it was found: what it holds now is another's.
        if let parentID, try parent.subvolumeIdentity().id != parentID { continue }
        children = try parent.subvolumeChildren()
      } catch {
        guard skippingUnreachable, error.errno == .permissionDenied, !parentRelative.isEmpty
        else { throw error }
        continue
      }
      for child in children {
        let placed: [UInt8]
        switch parent.subvolumePlace(id: child.id, directory: child.directory) {
        case .success(let bytes): placed = bytes
        // Deleted since its record was read.
        case .failure(.noSuchFileOrDirectory): continue
        case .failure(.permissionDenied) where skippingUnreachable: continue
        case .failure(let errno):
          throw SkipBackupError(
            .btrfsSubvolumePlace, errno, path: root.appending(bytes: parentRelative))
        }
        let relative = parentRelative.isEmpty ? placed : parentRelative + [0x2F] + placed
        guard inside.isEmpty || path(relative[...], below: inside) != nil,
          parentRelative.isEmpty ? !SnapshotDirectory.holds(placed) : true
        else { continue }
        guard let opened = try? open(relative, [.pathOnly]),
          let place = try? ItemPlace(of: opened),
          place.inode == SnapshotFlag.subvolumeRootInode, place.mountID == mountID
        else { continue }
        do throws(SkipBackupError) {
          guard try opened.open(".", [.directory]).subvolumeIdentity().id == child.id else {
            continue
          }
        } catch {
          guard skippingUnreachable, error.errno == .permissionDenied else { throw error }
        }
        found.append(
          Nested(relative: relative, path: root.appending(bytes: relative), id: child.id))
        pending.append((relative, child.id))
      }
    }
    return found
  }

  /// Whether an ordinary user may delete a snapshot made here: the kernel
  /// lets anyone but root delete a subvolume only on a filesystem mounted
  /// with `user_subvol_rm_allowed` (fs/btrfs/ioctl.c,
  /// btrfs_ioctl_snap_destroy), which /proc/self/mountinfo lists among the
  /// filesystem's own options (the field after the " - " separator's two).
  func allowsUserDeletion() throws(SkipBackupError) -> Bool {
    let text = try MountTable.read()
    let identifier = Array(String(mountID).utf8)
    for line in text.split(separator: UInt8(ascii: "\n")) {
      let fields = line.split(separator: UInt8(ascii: " "))
      guard fields.first.map(Array.init) == identifier,
        let separator = fields.firstIndex(where: { $0.elementsEqual("-".utf8) }),
        separator + 3 < fields.endIndex
      else { continue }
      let options = fields[separator + 3].split(separator: UInt8(ascii: ","))
      return options.contains { $0.elementsEqual("user_subvol_rm_allowed".utf8) }
    }
    return false
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

  /// The directory's path, for messages.
  let path: FilePath
  /// The directory, open.
  let descriptor: Descriptor

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

  /// Whether the subvolume at `relative` below a subvolume's root is a
  /// run's snapshot: named `run-…`, in a directory with a snapshot
  /// directory's name at that root, where runs keep them; anything else is
  /// a user's own.
  static func holds(_ relative: [UInt8]) -> Bool {
    let names = relative.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    return names.count == 2 && isName(names[0]) && names[1].starts(with: prefix)
  }

  /// The snapshot directories of the running user's runs at the root of
  /// the snapshot open as `snapshot`: the shared one, which every run
  /// makes, and the user's own where there is one.
  static func names(in snapshot: borrowing Descriptor) -> [[UInt8]] {
    var names = [Self.name]
    if (try? snapshot.status(of: FilePath(bytes: Self.ownName))) != nil {
      names.append(Self.ownName)
    }
    return names
  }

  /// Opens the directory of `subvolume`, made if missing: the shared one,
  /// or the running user's own when the shared one is another user's;
  /// `root` is the ROOT messages name.
  init(in subvolume: borrowing BtrfsSubvolume, naming root: FilePath) throws(SkipBackupError) {
    // In another user's subvolume (root's, in a home that is its mount's
    // root), readable, so that the user's own walks read its marks and
    // leave it out, where an unreadable directory would stop them; what it
    // holds is the user's own files, as they are in the home.
    let mode: mode_t = subvolume.owner == system_geteuid() ? 0o700 : 0o755
    var opened = try Self.make(Self.name, mode: mode, in: subvolume)
    if try opened.status().st_uid != system_geteuid() {
      opened = try Self.make(Self.ownName, mode: mode, in: subvolume)
    }
    let path = opened.path
    guard try opened.status().st_uid == system_geteuid() else {
      throw SkipBackupError(refusing: .snapshotDirectoryOfAnother, path: path)
    }
    // Out of every backup of the live tree too, by whatever it honours:
    // `run` and `list` of the subvolume, borg's --exclude-nodump, tar's
    // and restic's --exclude-caches. Another run's snapshot in it is a
    // whole copy of the subvolume, which a walk would otherwise enter.
    // Idempotent: a directory already marked is written nothing.
    try MechanismSet.every.mark(
      FileItem(descriptor: FileDescriptor(rawValue: opened.rawValue), displayPath: path))
    self.path = path
    descriptor = opened
  }

  /// Makes the directory `name` at the subvolume's root with `mode` if
  /// missing, and opens it, never through a link.
  private static func make(_ name: [UInt8], mode: mode_t, in subvolume: borrowing BtrfsSubvolume)
    throws(SkipBackupError) -> Descriptor
  {
    let path = subvolume.root.appending(bytes: name)
    do throws(SkipBackupError) {
      try subvolume.descriptor.makeDirectory(FilePath(bytes: name), mode: mode)
    } catch  where error.errno == .fileExists {}
    return try subvolume.descriptor.open(
      FilePath(bytes: name), [.directory, .noFollow], reporting: path)
  }

  /// Opens the directory `name` at the root of the subvolume open as
  /// `root` (at `rootPath`) when it is there and the running user's,
  /// making nothing.
  private init(existingIn root: borrowing Descriptor, at rootPath: FilePath, named name: [UInt8])
    throws(SkipBackupError)
  {
    path = rootPath.appending(bytes: name)
    let opened = try root.open(FilePath(bytes: name), [.directory, .noFollow], reporting: path)
    guard try opened.status().st_uid == system_geteuid() else {
      throw SkipBackupError(refusing: .snapshotDirectoryOfAnother, path: path)
    }
    descriptor = opened
  }

  /// Deletes what killed runs left in every snapshot directory of the
  /// running user's on the filesystem that `subvolume` is on, as far as
  /// this namespace's mounts of it reach: a run on one subvolume cleans up
  /// after a run on another. Each subvolume is reached by descriptor from a
  /// mount point, refusing links, and once (by its identity). Best effort:
  /// a directory that cannot be read, locked or cleaned (a read-only
  /// subvolume, which holds a copy of one) is left as it is, and this
  /// run's own directory is cleaned again, with its errors, when its
  /// snapshot is taken.
  static func deleteLeftovers(onTheFilesystemOf subvolume: borrowing BtrfsSubvolume) {
    guard let points = try? MountTable.mountPoints(sharingFilesystemWith: subvolume.mountID)
    else { return }
    var seen: [SubvolumeIdentity] = []
    for point in points {
      let mountPoint = FilePath(bytes: point)
      let holding: BtrfsSubvolume
      do throws(SkipBackupError) {
        holding = try BtrfsSubvolume.holding(
          Descriptor.open(mountPoint, [.pathOnly, .directory], resolve: .noLinks), at: mountPoint)
      } catch {
        continue
      }
      let below = (try? holding.nested(below: [], skippingUnreachable: true)) ?? []
      for nested in [BtrfsSubvolume.Nested(relative: [], path: holding.root, id: 0)] + below {
        do throws(SkipBackupError) {
          let root = try holding.open(nested.relative, [])
          let identity = try root.subvolumeIdentity()
          guard !seen.contains(identity), try !root.isReadOnlySubvolume() else { continue }
          seen.append(identity)
          for name in [Self.name, Self.ownName] {
            do throws(SkipBackupError) {
              let directory = try SnapshotDirectory(
                existingIn: root, at: nested.path, named: name)
              let lock = try directory.lockDirectory()
              try directory.deleteLeftovers()
              _ = consume lock
            } catch {
              continue
            }
          }
        } catch {
          continue
        }
      }
    }
  }

  /// Deletes what earlier runs left, then takes a read-only snapshot of
  /// `subvolume` under a new name, held: sets `name`, and returns the
  /// lock.
  func takeSnapshot(
    of subvolume: borrowing BtrfsSubvolume, naming root: FilePath, name: inout [UInt8]
  ) throws(SkipBackupError) -> Descriptor {
    // Held until this returns.
    let guardLock = try lockDirectory()
    try deleteLeftovers()
    let source = try subvolume.open()
    var number = 0
    while true {
      let candidate = Self.prefix + Array("\(system_getpid())-\(number)".utf8)
      let lockName = FilePath(bytes: candidate + Self.lockSuffix)
      let lock: Descriptor
      do throws(SkipBackupError) {
        lock = try descriptor.open(
          lockName, [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
      } catch  where error.errno == .fileExists {
        number += 1
        continue
      }
      do throws(SkipBackupError) {
        try lock.lock(.shared)
        try descriptor.makeSnapshot(of: source, named: candidate, readOnly: true, reporting: root)
      } catch {
        try? descriptor.removeEntry(lockName)
        throw error
      }
      name = candidate
      _ = consume guardLock
      return lock
    }
  }

  /// Opens the snapshot `name`'s root.
  func openSnapshot(_ name: [UInt8]) throws(SkipBackupError) -> Descriptor {
    try descriptor.open(FilePath(bytes: name), [.pathOnly, .directory, .noFollow])
  }

  /// Takes the snapshot `name`'s lock once more, on a descriptor of its own
  /// that is not closed on exec: COMMAND, and whatever it starts, hold it.
  func holdForCommand(_ name: [UInt8]) throws(SkipBackupError) {
    let lockName = FilePath(bytes: name + Self.lockSuffix)
    let lockPath = path.appending(bytes: lockName.bytes)
    let number = descriptor.rawValue
    let lock = try check(.openat, lockPath) {
      lockName.withCString {
        // Raw: a descriptor left open across exec on purpose, for COMMAND to hold; no `~Copyable` value outlives the exec.
        system_openat(number, $0, O_RDONLY | O_NOFOLLOW, 0)
      }
    }
    // Raw: the same descriptor, which COMMAND inherits.
    try check(.flock, lockPath) { system_flock(lock, LOCK_SH) }
  }

  /// Deletes this run's snapshot `name`, whose lock `lock` it holds, unless
  /// another process (one COMMAND left running) holds it too: then `false`.
  func deleteOwn(_ name: [UInt8], lock: borrowing Descriptor) throws(SkipBackupError) -> Bool {
    guard try lock.tryLock(.exclusive) else { return false }
    try delete(name)
    return true
  }

  /// Takes the directory's own lock, waiting for a run that is making its
  /// snapshot or deleting leftovers.
  private func lockDirectory() throws(SkipBackupError) -> Descriptor {
    let lock = try descriptor.open("lock", [.readWrite, .create, .noFollow], mode: 0o600)
    try lock.lock(.exclusive)
    return lock
  }

  /// Deletes each snapshot whose lock file no process holds: its run is
  /// over. Only names of this scheme are looked at.
  private func deleteLeftovers() throws(SkipBackupError) {
    let listing = try descriptor.open(".", [.directory], reporting: path)
    let names: [[UInt8]]
    switch directoryNames(listing.rawValue) {
    case .success(let found): names = found
    case .failure(let errno): throw SkipBackupError(.getdents64, errno, path: path)
    }
    for lockName in names
    where lockName.starts(with: Self.prefix) && lockName.count > Self.lockSuffix.count
      && lockName.suffix(Self.lockSuffix.count).elementsEqual(Self.lockSuffix)
    {
      let lock = try descriptor.open(FilePath(bytes: lockName), [.noFollow])
      if try lock.tryLock(.exclusive) {
        try delete(Array(lockName.dropLast(Self.lockSuffix.count)))
      }
    }
  }

  /// Deletes the snapshot `name` (when it is there) and then its lock file.
  /// Its read-only flag is cleared first: the kernel asks an ordinary user
  /// for write access to the snapshot's root (btrfs_permission answers
  /// `EROFS` for a read-only subvolume), and asks root nothing.
  private func delete(_ name: [UInt8]) throws(SkipBackupError) {
    do throws(SkipBackupError) {
      let snapshot = try descriptor.open(FilePath(bytes: name), [.directory, .noFollow])
      let status = try snapshot.status()
      // Only a subvolume: anything else of that name is not this scheme's.
      guard UInt64(status.st_ino) == SnapshotFlag.subvolumeRootInode else { return }
      let flags = try snapshot.subvolumeFlags()
      if flags & SnapshotFlag.readOnly != 0 {
        try snapshot.setSubvolumeFlags(flags & ~SnapshotFlag.readOnly)
      }
      // The kernel also asks an ordinary user for write and search access
      // to the snapshot's root, which has the mode of the subvolume's root
      // (0555 for a home its owner keeps read-only, say); its owner may
      // grant them.
      if system_geteuid() != 0, status.st_mode & 0o300 != 0o300 {
        try snapshot.changeMode((status.st_mode & 0o7777) | 0o300)
      }
      try descriptor.destroySubvolume(named: name, reporting: path.appending(bytes: name))
    } catch  where error.errno == .noSuchFileOrDirectory && error.call == .openat {}
    try descriptor.removeEntry(FilePath(bytes: name + Self.lockSuffix))
  }
}
