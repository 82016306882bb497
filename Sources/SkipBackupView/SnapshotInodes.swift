import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The inodes of a btrfs snapshot that a judgement of marks must look at:
/// those that hold an extended attribute, have the nodump flag, or are a
/// character device. Read from the subvolume's tree
/// (`BTRFS_IOC_TREE_SEARCH_V2`), which brings no inode into memory, so that
/// every other file of the snapshot is shown as it is without a call.
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
/// The tree is read a window of 64 inode numbers at a time, the first time
/// the walk meets an entry in it: btrfs numbers inodes in the order they
/// were made, so a directory's files mostly share a window or two, and the
/// search reads about what the walk reaches. A ROOT inside a larger
/// subvolume, or a home whose caches the view hides, never pays for the
/// rest of the subvolume; each walker reads its own windows on its own
/// core. One call a window costs a descent of the tree: 3,584 calls for the
/// 202,101 entries above (3,160 windows, a few read by both walkers), where
/// the set-up of a view of the whole snapshot took as long as before, with
/// the search of the whole subvolume first, and a ROOT inside took 0.47 s
/// instead of 1.31 s (medians of 20 runs each).
///
/// One walker's: each keeps its own windows and buffer.
package final class SnapshotInodes {
  /// The snapshot's root, opened for the ioctl (an `O_PATH` descriptor
  /// takes none).
  private let descriptor: Descriptor
  private let search: OpaquePointer
  private let room: UnsafeMutablePointer<CUnsignedLongLong>
  /// For each window read, a bit for each of its inode numbers that may
  /// matter; every bit set where the search failed.
  private var windows: [UInt64: UInt64] = [:]
  /// Whether an entry was shown without a look, which ``SnapshotWarming``
  /// then makes.
  package private(set) var spared = false
  /// The entries asked about, and the searches made for windows.
  private var asked = 0
  private var searches = 0

  /// The reading of windows stops while it has made more searches than
  /// looking at every entry asked about would have cost, past a first
  /// allowance, and starts again once the looks have paid for the next
  /// window: at worst about twice what looking at every entry costs. It
  /// counts calls, not time, so that which entries are looked at does not
  /// depend on the machine's load. A first look costs about 5 µs; a search
  /// (512 items at most) about 60 µs on the 200,000-file tree, made in
  /// order, where one window answers for about 56 entries: a search counts
  /// as 12 looks. For a directory of 3,000 files each made among 63
  /// others, one file a window, reading every window took `run --snapshot
  /// -- true` 0.104 s where looking at every entry took 0.046 s; bounded,
  /// 0.062 s (medians of 8 runs, the bound then timed by the clock).
  private static let looksPerSearch = 12
  private static let allowedSearches = 32

  /// The search of the subvolume whose root is open as `descriptor`, or
  /// `nil` when the kernel does not say: the search needs CAP_SYS_ADMIN,
  /// which an ordinary user's namespace does not give. Then the walk looks
  /// at every entry, as on a live tree.
  init?(ofSubvolume descriptor: borrowing Descriptor) {
    let opened: Descriptor
    do throws(SkipBackupError) {
      opened = try descriptor.open(".", [.directory])
    } catch {
      return nil
    }
    guard opened.maySearchSubvolume() else { return nil }
    self.descriptor = opened
    search = system_btrfs_inode_search_new()
    room = .allocate(capacity: btrfsInodeSearchMost)
  }

  deinit {
    room.deallocate()
    system_btrfs_inode_search_free(search)
  }

  /// Whether the inode `inode` may carry a mark, or be a whiteout to
  /// overlayfs.
  package func mayMatter(_ inode: UInt64) -> Bool {
    asked += 1
    let index = inode / 64
    let window: UInt64
    if let known = windows[index] {
      window = known
    } else if searches > Self.allowedSearches + asked / Self.looksPerSearch {
      return true
    } else {
      // A window that cannot be read is looked at, entry by entry.
      window = read(window: index) ?? .max
      windows[index] = window
    }
    let matters = window & (1 << (inode % 64)) != 0
    if !matters { spared = true }
    return matters
  }

  /// The bits of the window `index` that may matter, or `nil` when the
  /// search failed.
  private func read(window index: UInt64) -> UInt64? {
    let first = index * 64
    system_btrfs_inode_search_start(search, first, first + 63)
    var bits: UInt64 = 0
    var done: CInt = 0
    while done == 0 {
      searches += 1
      guard let count = descriptor.searchSubvolume(search, into: room, done: &done) else {
        return nil
      }
      for slot in 0..<count { bits |= 1 << (UInt64(room[slot]) - first) }
    }
    return bits
  }
}
