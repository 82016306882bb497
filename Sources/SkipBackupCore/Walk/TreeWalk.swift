import CXattr
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One item met by a tree walk, valid only during the visit it is passed to.
package struct TreeEntry {
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
  /// The path from the root as given, NUL-terminated: bytes, not text.
  package let pathBytes: UnsafeBufferPointer<UInt8>
  /// The nearest directory above the entry, within the walk, that the
  /// visitor said is marked (``TreeVisit/descendMarked``): the first this
  /// many bytes of ``pathBytes``.
  package let markedAncestorLength: Int?

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
  /// without a call per entry. Memory then holds the listing of each open
  /// level, not one batch.
  package var wholeListings = false

  package init(
    oneFileSystem: Bool = false, followRootSymbolicLink: Bool = false, wholeListings: Bool = false
  ) {
    self.oneFileSystem = oneFileSystem
    self.followRootSymbolicLink = followRootSymbolicLink
    self.wholeListings = wholeListings
  }
}

/// What a walk met besides what it visited.
package struct TreeWalkCounts: Sendable {
  /// Entries that were gone, or had been replaced, when the walk reached them.
  package var vanished = 0
}

/// Walks the tree at `root` depth first, relative to open directory
/// descriptors, and calls `visit` for every item: the root, then each entry
/// below it. Symbolic links are visited but never followed (except the root
/// with `followRootSymbolicLink`); entries are reached by name from their open
/// parent, so paths of any length work and a symbolic link swapped in during
/// the walk is refused (`O_NOFOLLOW`), not followed.
///
/// Memory does not grow with the tree: one read buffer, and per level of
/// depth an open descriptor and the unread rest of one batch of entries.
///
/// Failures (a directory that cannot be opened or read) go to `failure`
/// with the whole path; the walk goes on with the other items.
package func walkTree(
  root: FilePath,
  options: TreeWalkOptions = TreeWalkOptions(),
  visit: (TreeEntry) -> TreeVisit,
  failure: (SkipBackupError) -> Void
) -> TreeWalkCounts {
  withoutActuallyEscaping(visit) { visit in
    withoutActuallyEscaping(failure) { failure in
      var walker = TreeWalker(options: options, visit: visit, failure: failure)
      defer { walker.release() }
      walker.walk(root: root)
      return walker.counts
    }
  }
}

struct TreeWalker: ~Copyable {
  let options: TreeWalkOptions
  let visit: (TreeEntry) -> TreeVisit
  let failure: (SkipBackupError) -> Void
  /// With ``TreeWalkOptions/wholeListings``: hears of each directory's
  /// whole listing, its path and its entries' depth, before they are visited.
  var enter: ((DirectoryListing, UnsafeBufferPointer<UInt8>, Int) -> Void)?
  var counts = TreeWalkCounts()

  /// The bytes of the current path, NUL-terminated.
  var path: PathBuffer
  /// The batch of records read last, shared by whichever level reads.
  let batch: UnsafeMutableRawBufferPointer
  var batchRecords = DirentRecords()
  /// The open directories from the root down to the one being read.
  var stack: [Frame] = []
  /// Copies of unread records for levels that were left to descend.
  var spareStashes: [UnsafeMutableRawBufferPointer] = []
  /// Listing buffers of levels that were left, for reuse.
  var spareListings: [UnsafeMutableRawBufferPointer] = []
  var rootDevice: dev_t = 0
  /// Other walkers this one may hand directories to, when the walk is parallel.
  var sharing: WorkSharing?
  /// Entries visited, until other walkers are started.
  var visited = 0

  struct Frame {
    var descriptor: CInt
    var pathLength: Int
    var depth: Int
    /// What the entries of this directory see as their marked ancestor.
    var markedAncestorLength: Int?
    /// Unread records copied out of the shared batch before descending.
    var stash: UnsafeMutableRawBufferPointer?
    var stashRecords = DirentRecords()
    /// Whether the rest of the shared batch is this level's.
    var readsBatch = false
    /// With ``TreeWalkOptions/wholeListings``: every record of the directory.
    var listing: UnsafeMutableRawBufferPointer?
    var listingRecords = DirentRecords()
  }

  static var batchSize: Int { 64 * 1024 }

  init(
    options: TreeWalkOptions, visit: @escaping (TreeEntry) -> TreeVisit,
    failure: @escaping (SkipBackupError) -> Void
  ) {
    self.options = options
    self.visit = visit
    self.failure = failure
    self.path = PathBuffer()
    self.batch = .allocate(byteCount: Self.batchSize, alignment: 8)
  }

  mutating func release() {
    for frame in stack {
      _ = system_close(frame.descriptor)
      frame.listing?.deallocate()
    }
    stack.removeAll()
    for stash in spareStashes { stash.deallocate() }
    for listing in spareListings { listing.deallocate() }
    batch.deallocate()
    path.release()
  }

  mutating func walk(root: FilePath) {
    raiseOpenFileLimit()
    path.set(root)
    let follow = options.followRootSymbolicLink
    let rootItem = FileItem(path: root, followSymbolicLinks: follow)
    let status: stat
    do {
      status = try rootItem.status()
    } catch {
      failure(error)
      return
    }
    rootDevice = status.st_dev
    sharing?.rootDevice = status.st_dev
    let type = FileType(rawValue: status.st_mode & S_IFMT)
    let entry = TreeEntry(
      type: type, depth: 0, isOnOtherFilesystem: false, item: rootItem, pathBytes: path.bytes,
      markedAncestorLength: nil)
    let decision = visit(entry)
    guard decision != .skipChildren, type == .directory else { return }
    let opened = root.withCString { path in
      valueOrErrno {
        system_openat(CXATTR_AT_FDCWD, path, Self.directoryFlags & ~(follow ? O_NOFOLLOW : 0), 0)
      }
    }
    switch opened {
    case .success(let descriptor):
      stack.append(
        Frame(
          descriptor: descriptor, pathLength: path.count, depth: 1,
          markedAncestorLength: decision == .descendMarked ? path.count : nil))
      run()
    case .failure(let errno):
      failure(SkipBackupError(.openat, errno, path: root))
    }
  }

  static var directoryFlags: CInt { O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK }

  /// Walks a directory another walker opened and handed over: its entries
  /// and everything below them.
  mutating func resume(_ task: WorkSharing.Task) {
    path.set(bytes: task.path)
    stack.append(
      Frame(
        descriptor: task.descriptor, pathLength: path.count, depth: task.depth,
        markedAncestorLength: task.markedAncestorLength))
    run()
  }

  /// Walks until every open directory is done.
  mutating func run() {
    while !stack.isEmpty {
      guard let record = nextRecord() else {
        let frame = stack.removeLast()
        _ = system_close(frame.descriptor)
        if let stash = frame.stash { spareStashes.append(stash) }
        if let listing = frame.listing { spareListings.append(listing) }
        continue
      }
      if record.isDotOrDotDot { continue }
      handle(record)
    }
  }

  /// The next record of the deepest open directory, or `nil` at its end.
  mutating func nextRecord() -> DirectoryEntry? {
    let top = stack.count - 1
    if options.wholeListings {
      if stack[top].listing == nil, !readWholeListing(top) { return nil }
      return stack[top].listingRecords.next(in: stack[top].listing!.baseAddress!)
    }
    if let stash = stack[top].stash,
      let record = stack[top].stashRecords.next(in: stash.baseAddress!)
    {
      return record
    }
    if stack[top].readsBatch, let record = batchRecords.next(in: batch.baseAddress!) {
      return record
    }
    switch readDirentBatch(stack[top].descriptor, into: batch) {
    case .success(0):
      return nil
    case .success(let count):
      batchRecords = DirentRecords(offset: 0, end: count)
      stack[top].readsBatch = true
      return batchRecords.next(in: batch.baseAddress!)
    case .failure(let errno):
      path.truncate(to: stack[top].pathLength)
      failure(SkipBackupError(.getdents64, errno, path: path.filePath))
      return nil
    }
  }

  mutating func handle(_ record: DirectoryEntry) {
    let top = stack.count - 1
    let parent = stack[top]
    path.truncate(to: parent.pathLength)
    path.appendComponent(record.name, length: record.nameLength)

    var type = Self.fileType(record.type)
    var otherFilesystem = false
    if type == nil || (type == .directory && options.oneFileSystem) {
      // The listing did not say, or the directory may be a mount point: ask.
      var status = stat()
      let result = valueOrErrno {
        system_fstatat(parent.descriptor, record.name, &status, AT_SYMLINK_NOFOLLOW)
      }
      switch result {
      case .success:
        type = FileType(rawValue: status.st_mode & S_IFMT)
        otherFilesystem = options.oneFileSystem && type == .directory && status.st_dev != rootDevice
      case .failure(.noSuchFileOrDirectory):
        counts.vanished += 1
        return
      case .failure(let errno):
        failure(SkipBackupError(.fstatat, errno, path: path.filePath))
        return
      }
    }
    let item = FileItem(borrowingEntry: record.name, in: parent.descriptor)
    let entry = TreeEntry(
      type: type!, depth: parent.depth, isOnOtherFilesystem: otherFilesystem, item: item,
      pathBytes: path.bytes, markedAncestorLength: parent.markedAncestorLength)
    let decision = visit(entry)
    if let sharing {
      visited += 1
      if visited == sharing.threshold { sharing.startHelpers() }
    }
    guard decision != .skipChildren, type == .directory, !otherFilesystem else { return }

    let opened = valueOrErrno {
      system_openat(parent.descriptor, record.name, Self.directoryFlags, 0)
    }
    switch opened {
    case .success(let descriptor):
      let markedAncestorLength =
        decision == .descendMarked ? path.count : parent.markedAncestorLength
      // An idle walker takes the directory; otherwise this one goes down into it.
      if let sharing, sharing.wantsWork,
        sharing.offer(
          WorkSharing.Task(
            descriptor: descriptor, path: Array(path.bytes), depth: parent.depth + 1,
            markedAncestorLength: markedAncestorLength))
      {
        return
      }
      keepUnreadRecords(of: top)
      stack.append(
        Frame(
          descriptor: descriptor, pathLength: path.count, depth: parent.depth + 1,
          markedAncestorLength: markedAncestorLength))
    case .failure(.noSuchFileOrDirectory), .failure(.notDirectory),
      .failure(.tooManySymbolicLinkLevels):
      counts.vanished += 1  // gone, or replaced by a file or a symbolic link since it was listed
    case .failure(let errno):
      failure(SkipBackupError(.openat, errno, path: path.filePath))
    }
  }

  /// Reads every record of the directory at `index` into its listing
  /// buffer, then tells ``enter``; on a failure, reports it and visits none
  /// of the entries (a part of a listing would hide a sentinel).
  mutating func readWholeListing(_ index: Int) -> Bool {
    var buffer = spareListings.popLast() ?? .allocate(byteCount: 16 * 1024, alignment: 8)
    var count = 0
    while true {
      // Room for at least one record of the longest name.
      if buffer.count - count < 512 {
        let grown = UnsafeMutableRawBufferPointer.allocate(
          byteCount: buffer.count * 2, alignment: 8)
        grown.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: count)
        buffer.deallocate()
        buffer = grown
      }
      let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[count...])
      switch readDirentBatch(stack[index].descriptor, into: rest) {
      case .success(0):
        stack[index].listing = buffer
        stack[index].listingRecords = DirentRecords(offset: 0, end: count)
        path.truncate(to: stack[index].pathLength)
        enter?(
          DirectoryListing(records: UnsafeRawBufferPointer(rebasing: buffer[..<count])),
          path.bytes, stack[index].depth)
        return true
      case .success(let read):
        count += read
      case .failure(let errno):
        spareListings.append(buffer)
        path.truncate(to: stack[index].pathLength)
        failure(SkipBackupError(.getdents64, errno, path: path.filePath))
        return false
      }
    }
  }

  /// Before a deeper level reuses the shared batch, copies the unread rest of
  /// it to the level at `index`.
  mutating func keepUnreadRecords(of index: Int) {
    guard stack[index].readsBatch else { return }
    stack[index].readsBatch = false
    let unread = batchRecords.end - batchRecords.offset
    guard unread > 0 else { return }
    var stash =
      stack[index].stash ?? spareStashes.popLast()
      ?? .allocate(byteCount: Self.batchSize, alignment: 8)
    if stash.count < unread {
      stash.deallocate()
      stash = .allocate(byteCount: Self.batchSize, alignment: 8)
    }
    stash.baseAddress!.copyMemory(from: batch.baseAddress! + batchRecords.offset, byteCount: unread)
    stack[index].stash = stash
    stack[index].stashRecords = DirentRecords(offset: 0, end: unread)
  }

  static func fileType(_ type: UInt8) -> FileType? {
    switch Int32(type) {
    case Int32(DT_REG): .regular
    case Int32(DT_DIR): .directory
    case Int32(DT_LNK): .symbolicLink
    case Int32(DT_FIFO): .fifo
    case Int32(DT_SOCK): .socket
    case Int32(DT_CHR): .characterSpecial
    case Int32(DT_BLK): .blockSpecial
    default: nil
    }
  }
}

/// Lets a walk keep one directory open per level of a deep tree.
private func raiseOpenFileLimit() {
  var limit = rlimit()
  guard system_getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max
  else { return }
  limit.rlim_cur = limit.rlim_max
  _ = system_setrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
}

/// A growable, NUL-terminated byte buffer for the current path.
struct PathBuffer: ~Copyable {
  private var storage: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private(set) var count = 0

  init() {
    capacity = 4096
    storage = .allocate(capacity: capacity)
    storage[0] = 0
  }

  func release() { storage.deallocate() }

  var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

  var filePath: FilePath {
    FilePath(platformString: UnsafeRawPointer(storage).assumingMemoryBound(to: CChar.self))
  }

  /// A path handed over by another walker.
  mutating func set(bytes: [UInt8]) {
    count = 0
    bytes.withUnsafeBytes { append($0.baseAddress!, $0.count) }
  }

  /// The root as given, without trailing slashes (but `/` stays `/`).
  mutating func set(_ root: FilePath) {
    count = 0
    root.withCString { pointer in
      var length = strlen(pointer)
      while length > 1 && pointer[length - 1] == 0x2F { length -= 1 }
      append(UnsafeRawPointer(pointer), length)
    }
  }

  mutating func appendComponent(_ name: UnsafePointer<CChar>, length: Int) {
    if count == 0 || storage[count - 1] != 0x2F {
      var slash: UInt8 = 0x2F
      append(&slash, 1)
    }
    append(UnsafeRawPointer(name), length)
  }

  mutating func truncate(to length: Int) {
    count = length
    storage[count] = 0
  }

  private mutating func append(_ bytes: UnsafeRawPointer, _ length: Int) {
    if count + length + 1 > capacity {
      var newCapacity = capacity * 2
      while count + length + 1 > newCapacity { newCapacity *= 2 }
      let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
      grown.update(from: storage, count: count)
      storage.deallocate()
      storage = grown
      capacity = newCapacity
    }
    (storage + count).update(from: bytes.assumingMemoryBound(to: UInt8.self), count: length)
    count += length
    storage[count] = 0
  }
}
