import SkipBackupCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The inodes of a btrfs snapshot that a judgement of marks must look at:
/// those that hold an extended attribute, have the nodump flag, or are a
/// character device. Read from the subvolume's tree
/// (`BTRFS_IOC_TREE_SEARCH_V2`), which brings no inode into memory: once the
/// search has ended, every other file of the snapshot is shown as it is
/// without a call.
///
/// A snapshot is a new subvolume, whose inodes the kernel builds in memory
/// on the first look at each, though its blocks are the live tree's and in
/// the page cache: on a fresh snapshot of the 200,000-file tree (202,101
/// entries), a `find` that stats each took 1.2 to 1.5 s against 0.27 s on
/// the live tree (about 5 µs an entry, with 200,000 inodes cached; more
/// with more, as each lookup walks the kernel's inode hash chains), while
/// the search read all 1,028,446 items of the subvolume in 0.19 s. The
/// search is exact here as on no live tree: the snapshot is read-only.
/// ``SnapshotWarming`` then makes those first looks beside COMMAND.
///
/// The search reads the whole subvolume, which may hold far more than a
/// ROOT inside it. For a subvolume's root it runs before the walk
/// (``search(threads:)``); for a ROOT inside, the walk starts looking at
/// every entry, and the walker that has looked at an eighth as many entries
/// as the subvolume may hold runs the search there and then, while the
/// other walkers go on: by then the walk has spent about what the whole
/// search costs (on the tree above, 1 µs an inode of the subvolume to
/// search, against about 8 µs of CPU an entry to look at), so a ROOT much
/// smaller than its subvolume never pays for a search, and a large one pays
/// at most about twice the cheaper way.
package final class SnapshotInodes: @unchecked Sendable {
  // `inodes` is written once, by the search, before `ready` is set with
  // release ordering; readers read it only after seeing `ready`.
  private var inodes: [UInt64] = []
  private let ready = Atomic<Bool>(false)
  /// The snapshot's root, opened for the ioctl (an `O_PATH` descriptor
  /// takes none).
  private let descriptor: CInt
  /// Entries looked at before the search ended, and how many start it.
  private let looked = Atomic<Int>(0)
  private let startAfter: Int
  /// The greatest inode number of the subvolume.
  private let highest: UInt64

  /// The search of the subvolume whose root is open as `descriptor`, or
  /// `nil` when the kernel does not say: the search needs CAP_SYS_ADMIN,
  /// which an ordinary user's namespace does not give. Then the walk looks
  /// at every entry, as on a live tree. Any other failure leaves the walk
  /// as it is too: this only spares calls.
  package init?(ofSubvolume descriptor: CInt) {
    let opened = system_openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    guard opened >= 0 else { return nil }
    var highest: CUnsignedLongLong = 0
    guard system_btrfsHighestInode(opened, &highest) == 0 else {
      _ = system_close(opened)
      return nil
    }
    self.descriptor = opened
    self.highest = UInt64(highest)
    // btrfs numbers a subvolume's inodes upwards from 256
    // (BTRFS_FIRST_FREE_OBJECTID).
    let inodes = highest > 255 ? Int(clamping: highest - 255) : 1
    startAfter = max(1, inodes / 8)
  }

  deinit {
    _ = system_close(descriptor)
  }

  /// Reads the subvolume's tree to its end; whether it got there. `threads`
  /// 2 searches the upper half of the inode numbers on a thread of its own:
  /// the search is the kernel's CPU, 0.19 s on one core for the 1,028,446
  /// items of the tree above, 0.10 to 0.12 s on two.
  @discardableResult
  package func search(threads: Int = 1) -> Bool {
    if ready.load(ordering: .acquiring) { return true }
    var found: [UInt64]?
    if threads > 1, highest > 512 {
      let upper = RangeSearch(self, from: highest / 2 + 1, to: .max)
      var started = pthread_t()
      let context = Unmanaged.passUnretained(upper).toOpaque()
      if system_pthread_create(&started, searchRangeOnThread, context) == 0 {
        let lower = inodes(from: 0, to: highest / 2)
        _ = system_pthread_join(started)
        if let lower, let higher = upper.found { found = lower + higher }
      } else {
        found = inodes(from: 0, to: .max)
      }
    } else {
      found = inodes(from: 0, to: .max)
    }
    guard let found else { return false }
    inodes = found
    ready.store(true, ordering: .releasing)
    return true
  }

  /// The inodes that may matter among the objectids `first` to `last`,
  /// ascending, or `nil` when the search failed.
  fileprivate func inodes(from first: UInt64, to last: UInt64) -> [UInt64]? {
    let state = system_btrfsInodeSearchNew(first, last)
    defer { system_btrfsInodeSearchFree(state) }
    let room = UnsafeMutablePointer<CUnsignedLongLong>.allocate(capacity: btrfsInodeSearchMost)
    defer { room.deallocate() }
    var found: [UInt64] = []
    var done: CInt = 0
    while done == 0 {
      let count = system_btrfsInodeSearchStep(descriptor, state, room, &done)
      guard count >= 0 else { return nil }
      for index in 0..<count where found.last != UInt64(room[index]) {
        found.append(UInt64(room[index]))
      }
    }
    return found
  }

  /// Whether the search has ended, so that the walk may have shown files
  /// it never looked at.
  package var isReady: Bool { ready.load(ordering: .acquiring) }

  /// Whether the inode `inode` may carry a mark, or be a whiteout to
  /// overlayfs: always, until the search has ended. Counts the entries
  /// looked at meanwhile; the call that reaches the count the search waits
  /// for runs it, on two threads, before it answers.
  package func mayMatter(_ inode: UInt64) -> Bool {
    guard ready.load(ordering: .acquiring) else {
      if looked.add(1, ordering: .relaxed).newValue == startAfter {
        search(threads: 2)
        return mayMatter(inode)
      }
      return true
    }
    var (low, high) = (0, inodes.count)
    while low < high {
      let middle = (low + high) / 2
      if inodes[middle] < inode { low = middle + 1 } else { high = middle }
    }
    return low < inodes.count && inodes[low] == inode
  }
}

/// One range of a search on a thread of its own.
private final class RangeSearch {
  let owner: SnapshotInodes
  let first: UInt64
  let last: UInt64
  var found: [UInt64]?
  init(_ owner: SnapshotInodes, from first: UInt64, to last: UInt64) {
    (self.owner, self.first, self.last) = (owner, first, last)
  }
}

private func searchRangeOnThread(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  let range = Unmanaged<RangeSearch>.fromOpaque(argument!).takeUnretainedValue()
  range.found = range.owner.inodes(from: range.first, to: range.last)
  return nil
}
