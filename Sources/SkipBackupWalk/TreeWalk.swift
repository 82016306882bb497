import SkipBackupMarks
import SkipBackupSystem
import CLinux
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One item met by a tree walk, lent to the visitor for the length of one
/// visit: its name and path point into the walk's buffers, so it cannot be
/// copied out of the visit.
package struct TreeEntry: ~Copyable {
  /// The item's type, from the directory listing where the filesystem gives it.
  package let type: FileType
  /// 0 for the root, 1 for the root's entries, and so on.
  package let depth: Int
  /// With `oneFileSystem`: a directory on another filesystem (a mount
  /// point). The walk never descends into it.
  package let isOnOtherFilesystem: Bool
  /// The item, as the calls reach it: by name in its open parent directory
  /// (never following a symbolic link), or the root by its path.
  package let item: FileItem
  /// The inode number: as the directory lists it (`d_ino`), or as `stat`
  /// gives it for the root and an entry looked up again. The same on
  /// btrfs, ext4 and tmpfs; an overlay may list another.
  package let inode: UInt64
  /// The path from the root as given, NUL-terminated: bytes, not text.
  package let pathBytes: UnsafeBufferPointer<UInt8>
  /// How many of the last bytes of ``pathBytes`` are the entry's own name
  /// (for a root, what follows its last slash).
  package let nameLength: Int
  /// The nearest directory above the entry, within the walk, that the
  /// visitor said is marked (``TreeVisit/descendMarked``): the first this
  /// many bytes of ``pathBytes``.
  package let markedAncestorLength: Int?

  /// The entry's own name, the end of ``pathBytes``: the walk knows its
  /// length, which spares a visitor that matches names (sweep's rules) a
  /// search for the last slash in every path.
  package var name: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(
      UnsafeBufferPointer(rebasing: pathBytes[(pathBytes.count - nameLength)...]))
  }

  /// The path from the root as given.
  package var path: FilePath {
    FilePath(
      platformString: UnsafeRawPointer(pathBytes.baseAddress!).assumingMemoryBound(to: CChar.self))
  }

  /// `error`, naming this entry's whole path instead of its bare name.
  package func located(_ error: SkipBackupError) -> SkipBackupError {
    var error = error
    error.path = path
    return error
  }
}

/// What a visitor wants after seeing a directory.
package enum TreeVisit {
  /// Walk the directory's entries.
  case descend
  /// Walk the directory's entries, which inherit the directory's mark: they
  /// see it as their ``TreeEntry/markedAncestorLength``.
  case descendMarked
  /// Leave the directory's entries alone.
  case skipChildren
  /// The entry was gone when the visitor acted on it (`ENOENT`): as
  /// ``skipChildren``, and the walk looks it up again at its end, visiting it
  /// then if its path is there again, or counting it vanished.
  case vanished
}

/// What a command does with the items of a walk. A walk on several threads
/// has one visitor per thread, each called from its thread only, so a
/// visitor keeps its own output buffer and counts without locks.
package protocol TreeVisitor: AnyObject {
  /// Sees one item; for a directory, says whether to go into it.
  func visit(_ entry: borrowing TreeEntry) -> TreeVisit
  /// Hears of a directory that could not be opened or read, or an entry
  /// whose type could not be looked up; the walk goes on with the others.
  func walkFailed(_ error: SkipBackupError)
  /// With ``TreeWalkOptions/wholeListings``: sees a directory's whole
  /// listing, its path and its entries' depth, before its entries are
  /// visited (on this visitor's thread).
  func enterDirectory(_ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int)
}

extension TreeVisitor {
  package func enterDirectory(
    _ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int
  ) {}
}

/// How a walk treats its root and mount points.
package struct TreeWalkOptions: Sendable {
  /// Stay on the root's filesystem: directories on others are visited but
  /// never entered.
  package var oneFileSystem = false
  /// Follow the root when it is a symbolic link. Nothing below the root is
  /// ever followed.
  package var followRootSymbolicLink = false
  /// Read each directory's records whole before visiting any of its
  /// entries, and hand the listing to ``TreeVisitor/enterDirectory(_:path:depth:)``:
  /// what `sweep` needs to look sentinels up among an entry's siblings
  /// without a call per entry. The frame's buffer then grows to hold the
  /// whole listing.
  package var wholeListings = false
  /// Asked from another thread to end the walk early: each walker closes
  /// its directories at its next entry, the queued ones are closed, and
  /// nothing vanished is looked up again.
  package var stop: WalkStop?
  /// The root, already open for reading (a directory its caller resolved
  /// once, and holds open for as long as the walk): the walk reads it
  /// through a duplicate of its own, and the root's path only names it.
  /// `run --snapshot`'s ROOT in its snapshot, opened by descriptor from
  /// the snapshot taken (``SnapshotSet``), where its path passes through
  /// directories another user owns.
  package var rootDirectory: CInt?

  package init(
    oneFileSystem: Bool = false, followRootSymbolicLink: Bool = false, wholeListings: Bool = false,
    stop: WalkStop? = nil, rootDirectory: CInt? = nil
  ) {
    self.oneFileSystem = oneFileSystem
    self.followRootSymbolicLink = followRootSymbolicLink
    self.wholeListings = wholeListings
    self.stop = stop
    self.rootDirectory = rootDirectory
  }
}

/// A request that a walk end before it has seen everything: the consumer of
/// a tree query that stopped iterating (``TreeQuery``). Read without a lock
/// at every entry, written once.
package final class WalkStop: Sendable {
  private let requested = Atomic<Bool>(false)

  package init() {}

  /// Asks every walker of the walk to stop.
  package func request() { requested.store(true, ordering: .relaxed) }

  package var isRequested: Bool { requested.load(ordering: .relaxed) }
}

extension TreeWalkOptions {
  /// Whether the walk was asked to stop.
  var isStopped: Bool { stop?.isRequested ?? false }
}

/// What a walk met besides what it visited.
package struct TreeWalkCounts: Sendable {
  /// Entries that were gone, or had been replaced, when the walk reached
  /// them, and were still gone at the end of the walk.
  package var vanished = 0
}

/// An entry that was gone when the walk (or its visitor) reached it, kept to
/// be looked up again at the end of the walk: a directory renamed away and
/// straight back (an editor's save, a tool moving a tree aside) is then
/// walked, not lost with everything in it. It is reached
/// again through its parent directory, held open (`O_PATH`), never by a path
/// resolved anew, so no link swapped in above it is followed.
final class VanishedEntry: @unchecked Sendable {
  /// The directory the entry was listed in.
  let parent: CInt
  /// The entry's name, NUL-terminated.
  let name: [CChar]
  /// Its path from the root, as the walk showed it.
  let path: [UInt8]
  let depth: Int
  /// Whether the visitor saw it already (only its entries are left to walk).
  let visited: Bool
  /// The marked ancestor its entries see (when visited), or it sees.
  let markedAncestorLength: Int?

  init?(
    name: UnsafePointer<CChar>, in parent: CInt, path: UnsafeBufferPointer<UInt8>, depth: Int,
    visited: Bool, markedAncestorLength: Int?
  ) {
    let opened = valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_openat(parent, ".", CLINUX_O_PATH | O_DIRECTORY | O_CLOEXEC, 0)
    }
    guard case .success(let descriptor) = opened else { return nil }
    self.parent = descriptor
    self.name = Array(UnsafeBufferPointer(start: name, count: cStringLength(name) + 1))
    self.path = Array(path)
    self.depth = depth
    self.visited = visited
    self.markedAncestorLength = markedAncestorLength
  }

  // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's raw
  // calls)
  deinit { _ = system_close(parent) }
}

/// Walks the tree at `root` depth first, relative to open directory
/// descriptors, and shows every item to a visitor: the root, then each entry
/// below it. Symbolic links are visited but never followed (except the root
/// with `followRootSymbolicLink`); entries are reached by name from their
/// open parent, so paths of any length work and a symbolic link swapped in
/// during the walk is refused (`O_NOFOLLOW`), not followed.
///
/// With one visitor the walk runs on the calling thread, in directory
/// order. With more, the calling thread walks alone until it has visited
/// `parallelAfter` items, so that a small tree is walked as a single walk
/// would; then one thread starts for each other visitor, and a walker about
/// to enter a directory hands it to an idle one instead. The order in which
/// subtrees are visited then varies from run to run.
///
/// Memory does not grow with the number of items: per level of depth an
/// open descriptor and one read buffer, and at most twice as many handed-over
/// directories waiting as there are threads.
///
/// 1,000 items alone: a few milliseconds of calls, against some 50 µs to
/// start a thread. A threshold of 20,000 keeps a tenth of the 200,000-file
/// tree's walk on one core (`list` 1.14x `xscan` wall, 1.03x CPU).
package func walkTree(
  root: FilePath, options: TreeWalkOptions = TreeWalkOptions(), visitors: [any TreeVisitor],
  parallelAfter threshold: Int = 1_000
) -> TreeWalkCounts {
  precondition(!visitors.isEmpty)
  raiseOpenFileLimit()
  let first = visitors[0]
  guard let start = openRoot(root, options, first) else { return TreeWalkCounts() }
  let sharing =
    visitors.count > 1
    ? WorkSharing(
      visitors: visitors, options: options, rootDevice: start.rootDevice, threshold: threshold)
    : nil
  var walker = TreeWalker(
    options: options, rootDevice: start.rootDevice, visitor: first, sharing: sharing,
    startsHelpers: sharing != nil)
  guard let task = start.task else { return walker.counts }
  walker.walk(task)
  var counts = walker.counts
  var vanished = walker.vanishedEntries
  if let sharing {
    while let task = sharing.take() { walker.walk(task) }
    counts = sharing.finish(adding: walker.counts)
    vanished = walker.vanishedEntries + sharing.vanishedEntries
  }
  // The end of the walk: what vanished on the way is looked up again, on
  // this thread, by a walker that counts what vanishes now instead.
  var lastLook = TreeWalker(
    options: options, rootDevice: start.rootDevice, visitor: first, sharing: nil,
    startsHelpers: false, keepsVanished: false)
  for entry in vanished where !options.isStopped && !lastLook.revisit(entry) {
    counts.vanished += 1
  }
  counts.vanished += lastLook.counts.vanished
  return counts
}

/// Walks the tree at `root` on the calling thread, as
/// ``walkTree(root:options:visitors:parallelAfter:)`` does with one visitor
/// made of `visit` and `failure`.
package func walkTree(
  root: FilePath, options: TreeWalkOptions = TreeWalkOptions(),
  visit: (borrowing TreeEntry) -> TreeVisit, failure: (SkipBackupError) -> Void
) -> TreeWalkCounts {
  withoutActuallyEscaping(visit) { visit in
    withoutActuallyEscaping(failure) { failure in
      walkTree(
        root: root, options: options, visitors: [ClosureVisitor(visit: visit, failure: failure)])
    }
  }
}

/// A visitor made of two closures, for a walk on one thread.
private final class ClosureVisitor: TreeVisitor {
  let visitClosure: (borrowing TreeEntry) -> TreeVisit
  let failure: (SkipBackupError) -> Void

  init(
    visit: @escaping (borrowing TreeEntry) -> TreeVisit,
    failure: @escaping (SkipBackupError) -> Void
  ) {
    self.visitClosure = visit
    self.failure = failure
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit { visitClosure(entry) }
  func walkFailed(_ error: SkipBackupError) { failure(error) }
}

/// Looks at the root, shows it to `visitor` and, when the visitor wants its
/// entries, opens it; `nil` when the root cannot be looked at.
private func openRoot(
  _ root: FilePath, _ options: TreeWalkOptions, _ visitor: any TreeVisitor
) -> (rootDevice: dev_t, task: WorkSharing.Task?)? {
  if let directory = options.rootDirectory {
    return openRoot(root, directory, visitor)
  }
  let follow = options.followRootSymbolicLink
  let rootItem = FileItem(path: root, followSymbolicLinks: follow)
  let status: stat
  do {
    status = try rootItem.status()
  } catch {
    visitor.walkFailed(error)
    return nil
  }
  guard let decision = visitRoot(root, rootItem, status, visitor) else {
    return (status.st_dev, nil)
  }
  let opened = root.withCString { path in
    valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_openat(
        CLINUX_AT_FDCWD, path, TreeWalker.directoryFlags & ~(follow ? O_NOFOLLOW : 0), 0)
    }
  }
  switch opened {
  case .success(let descriptor):
    return (status.st_dev, rootTask(root, decision, descriptor))
  case .failure(let errno):
    visitor.walkFailed(SkipBackupError(.openat, errno, path: root))
    return (status.st_dev, nil)
  }
}

/// ``openRoot(_:_:_:)`` of a root open as `directory`
/// (``TreeWalkOptions/rootDirectory``): its duplicate, which the walk
/// owns, is visited and read; `root` names it.
private func openRoot(_ root: FilePath, _ directory: CInt, _ visitor: any TreeVisitor)
  -> (rootDevice: dev_t, task: WorkSharing.Task?)?
{
  let copy: Descriptor
  do throws(SkipBackupError) {
    copy = try Descriptor(duplicating: directory, path: root)
  } catch {
    visitor.walkFailed(error)
    return nil
  }
  let status: stat
  do throws(SkipBackupError) {
    status = try copy.status()
  } catch {
    visitor.walkFailed(error)
    return nil
  }
  let item = FileItem(descriptor: FileDescriptor(rawValue: copy.rawValue), displayPath: root)
  guard let decision = visitRoot(root, item, status, visitor) else { return (status.st_dev, nil) }
  return (status.st_dev, rootTask(root, decision, copy.release()))
}

/// Shows the root, `item` with `status`, to `visitor`: what it decided,
/// or `nil` when the walk does not read the root's entries.
private func visitRoot(
  _ root: FilePath, _ item: FileItem, _ status: stat, _ visitor: any TreeVisitor
) -> TreeVisit? {
  var path = PathBuffer()
  path.set(root)
  let type = FileType(rawValue: status.st_mode & S_IFMT)
  let decision = visitor.visit(
    TreeEntry(
      type: type, depth: 0, isOnOtherFilesystem: false, item: item,
      inode: UInt64(status.st_ino), pathBytes: path.bytes,
      nameLength: path.bytes.count - ((path.bytes.lastIndex(of: 0x2F)).map { $0 + 1 } ?? 0),
      markedAncestorLength: nil))
  return decision != .skipChildren && type.isDirectory ? decision : nil
}

/// The first task of a walk: the root, open as `descriptor`, which the
/// walk owns from here on, as `decision` said.
private func rootTask(_ root: FilePath, _ decision: TreeVisit, _ descriptor: CInt)
  -> WorkSharing.Task
{
  var buffer = PathBuffer()
  buffer.set(root)
  let path = Array(buffer.bytes)
  return WorkSharing.Task(
    descriptor: descriptor, path: path, depth: 1,
    markedAncestorLength: decision == .descendMarked ? path.count : nil)
}

/// One thread's walk: a stack of open directories, each reading its entries
/// into a buffer of its own, and the bytes of the current path.
struct TreeWalker: ~Copyable {
  let options: TreeWalkOptions
  /// The root's filesystem, for `oneFileSystem`.
  let rootDevice: dev_t
  let visitor: any TreeVisitor
  /// Other walkers this one may hand directories to, when the walk is parallel.
  let sharing: WorkSharing?
  /// Whether this walker starts the helpers once it has visited
  /// `sharing.threshold` items: the calling thread's walker, until it has.
  var startsHelpers: Bool
  var visited = 0
  var counts = TreeWalkCounts()
  /// Whether entries that vanish are kept for the end of the walk, or
  /// counted at once (by the walker that looks at them at the end).
  let keepsVanished: Bool
  /// What vanished on the way, for the end of the walk.
  var vanishedEntries: [VanishedEntry] = []
  /// At most this many per walker are kept (one descriptor each); past
  /// that, a vanished entry is counted at once, as before.
  static let vanishedEntriesKept = 256

  /// The bytes of the current path, NUL-terminated.
  var path = PathBuffer()
  /// The open directories from the one handed to this walker down to the
  /// one being read.
  var frames = FrameStack()

  static var directoryFlags: CInt { O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK }

  init(
    options: TreeWalkOptions, rootDevice: dev_t, visitor: any TreeVisitor, sharing: WorkSharing?,
    startsHelpers: Bool, keepsVanished: Bool = true
  ) {
    self.options = options
    self.rootDevice = rootDevice
    self.visitor = visitor
    self.sharing = sharing
    self.startsHelpers = startsHelpers
    self.keepsVanished = keepsVanished
  }

  /// Walks an open directory (the root, or one another walker handed over):
  /// its entries and everything below them.
  mutating func walk(_ task: WorkSharing.Task) {
    path.set(bytes: task.path)
    frames.push(
      descriptor: task.descriptor, pathLength: path.count, depth: task.depth,
      markedAncestorLength: task.markedAncestorLength)
    while let top = frames.top {
      if options.isStopped {
        while frames.top != nil { frames.pop() }
        return
      }
      guard let record = nextRecord(top) else {
        frames.pop()
        continue
      }
      if record.isDotOrDotDot { continue }
      handle(record, in: top.pointee)
    }
  }

  /// The next record of the deepest open directory, or `nil` at its end.
  mutating func nextRecord(_ frame: UnsafeMutablePointer<Frame>) -> DirectoryEntry? {
    if let record = frame.pointee.nextBufferedRecord() { return record }
    if options.wholeListings { return readWholeListing(frame) }
    switch frames.read(into: frame) {
    case .success(true):
      return frame.pointee.nextBufferedRecord()
    case .success(false):
      return nil
    case .failure(let errno):
      path.truncate(to: frame.pointee.pathLength)
      visitor.walkFailed(SkipBackupError(.getdents64, errno, path: path.filePath))
      return nil
    }
  }

  /// With `wholeListings`: reads all of the directory's records, shows the
  /// listing to the visitor, and returns the first; on a failure, reports it
  /// and visits none of the entries (a part of a listing would hide a
  /// sentinel).
  mutating func readWholeListing(_ frame: UnsafeMutablePointer<Frame>) -> DirectoryEntry? {
    guard !frame.pointee.isListed else { return nil }
    frame.pointee.isListed = true
    let result = frames.readWhole(into: frame)
    path.truncate(to: frame.pointee.pathLength)
    switch result {
    case .success(let listing):
      visitor.enterDirectory(listing, path: path.bytes, depth: frame.pointee.depth)
      return frame.pointee.nextBufferedRecord()
    case .failure(let errno):
      visitor.walkFailed(SkipBackupError(.getdents64, errno, path: path.filePath))
      return nil
    }
  }

  mutating func handle(_ record: DirectoryEntry, in parent: Frame) {
    path.truncate(to: parent.pathLength)
    path.appendComponent(record.name, length: record.nameLength)

    var type = Self.fileType(record.type)
    var otherFilesystem = false
    if type == nil || (type!.isDirectory && options.oneFileSystem) {
      // The listing did not say, or the directory may be a mount point: ask.
      var status = stat()
      let result = valueOrErrno {
        // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
        // raw calls)
        system_fstatat(parent.descriptor, record.name, &status, AT_SYMLINK_NOFOLLOW)
      }
      switch result {
      case .success:
        type = FileType(rawValue: status.st_mode & S_IFMT)
        otherFilesystem =
          options.oneFileSystem && type!.isDirectory && status.st_dev != rootDevice
      case .failure(.noSuchFileOrDirectory):
        vanish(record.name, in: parent, visited: false, parent.markedAncestorLength)
        return
      case .failure(let errno):
        visitor.walkFailed(SkipBackupError(.fstatat, errno, path: path.filePath))
        return
      }
    }
    let decision = visitor.visit(
      TreeEntry(
        type: type!, depth: parent.depth, isOnOtherFilesystem: otherFilesystem,
        item: FileItem(borrowingEntry: record.name, in: parent.descriptor), inode: record.inode,
        pathBytes: path.bytes, nameLength: record.nameLength,
        markedAncestorLength: parent.markedAncestorLength))
    if startsHelpers {
      visited += 1
      if visited == sharing!.threshold {
        sharing!.startHelpers()
        startsHelpers = false
      }
    }
    if decision == .vanished {
      vanish(record.name, in: parent, visited: false, parent.markedAncestorLength)
      return
    }
    guard decision != .skipChildren, type!.isDirectory, !otherFilesystem else { return }

    let markedAncestorLength =
      decision == .descendMarked ? path.count : parent.markedAncestorLength
    let opened = valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_openat(parent.descriptor, record.name, Self.directoryFlags, 0)
    }
    switch opened {
    case .success(let descriptor):
      // An idle walker takes the directory; otherwise this one goes down into it.
      if let sharing, sharing.wantsWork,
        sharing.offer(
          WorkSharing.Task(
            descriptor: descriptor, path: Array(path.bytes), depth: parent.depth + 1,
            markedAncestorLength: markedAncestorLength))
      {
        return
      }
      frames.push(
        descriptor: descriptor, pathLength: path.count, depth: parent.depth + 1,
        markedAncestorLength: markedAncestorLength)
    case .failure(.noSuchFileOrDirectory), .failure(.notDirectory),
      .failure(.tooManySymbolicLinkLevels):
      // Gone, or replaced by a file or a symbolic link since it was listed.
      vanish(record.name, in: parent, visited: true, markedAncestorLength)
    case .failure(let errno):
      visitor.walkFailed(SkipBackupError(.openat, errno, path: path.filePath))
    }
  }

  /// Keeps the entry `name` of `parent` (whose path is the current path)
  /// for the end of the walk, or counts it vanished.
  mutating func vanish(
    _ name: UnsafePointer<CChar>, in parent: Frame, visited: Bool, _ markedAncestorLength: Int?
  ) {
    // With `wholeListings` a visit comes with its parent's listing, which is
    // gone by the end of the walk: an entry not visited yet is counted now.
    // (One visited but not opened is still walked at the end: its own
    // listing is read then.)
    guard keepsVanished, visited || !options.wholeListings,
      vanishedEntries.count < Self.vanishedEntriesKept,
      let entry = VanishedEntry(
        name: name, in: parent.descriptor, path: path.bytes, depth: parent.depth,
        visited: visited, markedAncestorLength: markedAncestorLength)
    else {
      counts.vanished += 1
      return
    }
    vanishedEntries.append(entry)
  }

  /// Looks `entry` up again in its parent at the end of the walk: when its
  /// name is there again, visits it (unless it was visited) and walks what
  /// is in it. Returns `false` when it is still gone.
  mutating func revisit(_ entry: VanishedEntry) -> Bool {
    var status = stat()
    let looked = valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_fstatat(entry.parent, entry.name, &status, AT_SYMLINK_NOFOLLOW)
    }
    guard case .success = looked else { return false }
    let type = FileType(rawValue: status.st_mode & S_IFMT)
    path.set(bytes: entry.path)
    var markedAncestorLength = entry.markedAncestorLength
    if !entry.visited {
      let otherFilesystem =
        options.oneFileSystem && type.isDirectory && status.st_dev != rootDevice
      let decision = entry.name.withUnsafeBufferPointer { name in
        visitor.visit(
          TreeEntry(
            type: type, depth: entry.depth, isOnOtherFilesystem: otherFilesystem,
            item: FileItem(borrowingEntry: name.baseAddress!, in: entry.parent),
            inode: UInt64(status.st_ino), pathBytes: path.bytes, nameLength: name.count - 1,
            markedAncestorLength: entry.markedAncestorLength))
      }
      if decision == .vanished { return false }
      guard decision != .skipChildren, type.isDirectory, !otherFilesystem else { return true }
      if decision == .descendMarked { markedAncestorLength = path.count }
    } else if !type.isDirectory {
      return false  // what was walked as a directory is not one now
    }
    let opened = valueOrErrno {
      // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the walk's
      // raw calls)
      system_openat(entry.parent, entry.name, Self.directoryFlags, 0)
    }
    guard case .success(let descriptor) = opened else { return false }
    walk(
      WorkSharing.Task(
        descriptor: descriptor, path: entry.path, depth: entry.depth + 1,
        markedAncestorLength: markedAncestorLength))
    return true
  }

  /// The type a directory record's `d_type` says, or `nil` when it says
  /// nothing (`DT_UNKNOWN`). All by the values of <sys/stat.h>
  /// (FileType+Kinds.swift says why): with swift-system's names for the
  /// five rare types, `status -R` of mkhome.py's projects spent 4.3M user
  /// instructions in this function (callgrind) instead of it being inlined.
  static func fileType(_ type: UInt8) -> FileType? {
    switch Int32(type) {
    case Int32(DT_REG): FileType(rawValue: FileType.regularBits)
    case Int32(DT_DIR): FileType(rawValue: FileType.directoryBits)
    case Int32(DT_LNK): FileType(rawValue: 0o120000)  // S_IFLNK
    case Int32(DT_FIFO): FileType(rawValue: 0o010000)  // S_IFIFO
    case Int32(DT_SOCK): FileType(rawValue: 0o140000)  // S_IFSOCK
    case Int32(DT_CHR): FileType(rawValue: 0o020000)  // S_IFCHR
    case Int32(DT_BLK): FileType(rawValue: 0o060000)  // S_IFBLK
    default: nil
    }
  }
}

/// Lets a walk keep one directory open per level of a deep tree.
private func raiseOpenFileLimit() {
  var limit = rlimit()
  // Raw: no path and no descriptor: a thread, a limit or a count
  guard system_getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max
  else { return }
  limit.rlim_cur = limit.rlim_max
  // Raw: no path and no descriptor: a thread, a limit or a count
  _ = system_setrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
}
