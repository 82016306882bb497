import SkipBackupCore
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Which directory an open descriptor is, as long as it stays open: its
/// device and inode (btrfs gives each subvolume a device of its own, so the
/// pair names one directory of one subvolume).
package struct DirectoryIdentity: Equatable, Sendable {
  let device: UInt64
  let inode: UInt64
  let owner: uid_t

  init(_ status: stat) {
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    owner = status.st_uid
  }

  /// The same directory (its owner may have changed meanwhile).
  func isSame(as other: DirectoryIdentity) -> Bool {
    device == other.device && inode == other.inode
  }
}

/// A directory resolved once from its canonical path and held open: what
/// comes after (the snapshot of its subvolume, the check of the snapshot,
/// the view's mount point) is confirmed against this descriptor, never
/// against the path resolved again.
enum ResolvedDirectory {
  /// `given` with every symbolic link, `.` and `..` resolved, as
  /// `realpath(3)` resolves it, but one name at a time by descriptor and,
  /// for root, safely: a symbolic link in a directory that a user other
  /// than root owns is refused (``SkipBackupError/Refusal/symbolicLinkOfAnother``),
  /// never followed, and a step from such a directory into one that
  /// root or a third user owns, unless it is the last (the ROOT as given), is
  /// ``SkipBackupError/Refusal/unsafePathTransition``.
  /// That user can point the link, or swap the directory, at any moment:
  /// followed, a link the user points at root's directory for a moment puts
  /// root's view over root's directory while the path COMMAND reads leads
  /// back to the user's tree, unhidden (scripts/torture's linkswap check).
  /// As systemd's chase() with CHASE_SAFE (src/basic/chase.c,
  /// unsafe_transition).
  static func canonicalPath(of given: FilePath, checkingTransitions: Bool)
    throws(SkipBackupError) -> FilePath
  {
    let slash = UInt8(ascii: "/")
    var todo = given.bytes.split(separator: slash).map { Array($0) }
    if given.bytes.first != slash {
      guard let working = SkipBackupSystem.canonicalPath(Array(".".utf8)) else {
        throw SkipBackupError(.realpath, .noSuchFileOrDirectory, path: given)
      }
      todo = working.split(separator: slash).map { Array($0) } + todo
    }
    var resolved: [[UInt8]] = []
    var current = try Descriptor.open("/", [.pathOnly, .directory])
    var status = try current.status()
    var links = 0
    func shown(_ names: [[UInt8]]) -> FilePath {
      FilePath(bytes: names.isEmpty ? [slash] : names.flatMap { [slash] + $0 })
    }
    while !todo.isEmpty {
      let name = todo.removeFirst()
      if name.isEmpty || name == [UInt8(ascii: ".")] { continue }
      if name == Array("..".utf8) {
        if !resolved.isEmpty { resolved.removeLast() }
        current = try Descriptor.open(
          shown(resolved), [.pathOnly, .directory], resolve: .noLinks)
        status = try current.status()
        continue
      }
      let here = shown(resolved + [name])
      let child = try current.open(
        FilePath(bytes: name), [.pathOnly, .noFollow], reporting: here)
      let childStatus = try child.status()
      if childStatus.st_mode & S_IFMT == S_IFLNK {
        if checkingTransitions, status.st_uid != 0 {
          throw SkipBackupError(refusing: .symbolicLinkOfAnother, path: here)
        }
        links += 1
        // Linux's own bound on the links one lookup follows (MAXSYMLINKS).
        guard links <= 40 else {
          throw SkipBackupError(.openat, .tooManySymbolicLinkLevels, path: given)
        }
        let target = try current.linkTarget(of: FilePath(bytes: name)).bytes
        todo = target.split(separator: slash).map { Array($0) } + todo
        if target.first == slash {
          resolved = []
          current = try Descriptor.open("/", [.pathOnly, .directory])
          status = try current.status()
        }
        continue
      }
      if checkingTransitions, status.st_uid != 0, childStatus.st_uid != status.st_uid,
        !todo.isEmpty
      {
        throw SkipBackupError(refusing: .unsafePathTransition, path: here)
      }
      current = child
      status = childStatus
      resolved.append(name)
    }
    return shown(resolved)
  }

  /// Opens the canonical directory `path` from `/`, one directory at a
  /// time, each with `openat2` refusing any link (`RESOLVE_NO_SYMLINKS`,
  /// `RESOLVE_NO_MAGICLINKS`): a directory on the way that another user
  /// swapped for a link since the path was made canonical is refused
  /// (``SkipBackupError/Refusal/changedOnTheWay``), never followed. When
  /// `checkingTransitions` (root), a step from a directory a user other
  /// than root owns into one that root or a third user owns is refused
  /// (``SkipBackupError/Refusal/unsafePathTransition``), as systemd's
  /// chase() refuses it (src/basic/chase.c, unsafe_transition), except
  /// into the last directory when `isGiven` (the ROOT as given: root asked
  /// for that directory by name). The last is opened for reading (its
  /// subvolume is asked for by ioctl, which refuses an `O_PATH`
  /// descriptor) unless `pathOnly`.
  static func open(
    _ path: FilePath, checkingTransitions: Bool, isGiven: Bool, pathOnly: Bool = false
  ) throws(SkipBackupError) -> Resolved {
    let names = path.bytes.split(separator: UInt8(ascii: "/"))
    var walked: [UInt8] = []
    let lastFlags: OpenFlags = pathOnly ? [.pathOnly] : []
    var current = try Descriptor.open(
      "/", (names.isEmpty ? lastFlags : [.pathOnly]).union(.directory), resolve: .noLinks)
    var status = try current.status()
    for (index, name) in names.enumerated() {
      walked += [UInt8(ascii: "/")] + name
      let here = FilePath(bytes: walked)
      let isLast = index == names.count - 1
      let next = try openDirectory(
        Array(name), in: current, isLast ? lastFlags : [.pathOnly], naming: path)
      let child = try next.status()
      current = next
      if checkingTransitions, status.st_uid != 0, child.st_uid != status.st_uid,
        !(isLast && isGiven)
      {
        throw SkipBackupError(refusing: .unsafePathTransition, path: here)
      }
      status = child
    }
    return Resolved(descriptor: current, identity: DirectoryIdentity(status))
  }

  /// A directory ``open(_:checkingTransitions:isGiven:pathOnly:)`` resolved.
  struct Resolved: ~Copyable {
    /// The directory, open.
    let descriptor: Descriptor
    /// Which directory it is.
    let identity: DirectoryIdentity
  }

  /// Opens the directory `name` (one name) in `directory` with `flags`
  /// (`[]` to read it, or ``OpenFlags/pathOnly``), by `openat2` refusing
  /// any link and anything outside `directory`. A link or a non-directory
  /// where a directory was (`ELOOP`, `ENOTDIR`) is the refusal
  /// ``SkipBackupError/Refusal/changedOnTheWay`` of `target`; another
  /// failure is `openat2`'s.
  static func openDirectory(
    _ name: [UInt8], in directory: borrowing Descriptor, _ flags: OpenFlags,
    naming target: FilePath
  ) throws(SkipBackupError) -> Descriptor {
    do throws(SkipBackupError) {
      return try directory.open(
        FilePath(bytes: name), flags.union([.directory, .noFollow]),
        resolve: ResolveFlags.noLinks.union(.beneath))
    } catch  where error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory {
      throw SkipBackupError(refusing: .changedOnTheWay, path: target)
    }
  }

  /// Opens `path` again (`O_PATH`), in another mount namespace, where the
  /// descriptor opened before is of no use (a mount goes only onto a mount
  /// of the caller's namespace, and overlayfs takes layers only from it),
  /// and refuses it unless it is still the directory `identity` names:
  /// a directory on the way swapped since for a link, or for another
  /// directory, is refused rather than mounted over. The caller owns the
  /// number returned (``ViewMounter`` keeps its layers' descriptors as
  /// numbers).
  static func reopen(_ path: FilePath, as identity: DirectoryIdentity) throws(SkipBackupError)
    -> CInt
  {
    let descriptor: Descriptor
    do throws(SkipBackupError) {
      descriptor = try Descriptor.open(
        path, [.pathOnly, .directory, .noFollow], resolve: .noLinks)
    } catch  where error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory {
      throw SkipBackupError(refusing: .changedOnTheWay, path: path)
    }
    guard try DirectoryIdentity(descriptor.status()).isSame(as: identity) else {
      throw SkipBackupError(refusing: .changedOnTheWay, path: path)
    }
    return descriptor.release()
  }
}
