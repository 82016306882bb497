import SkipBackupCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Files, directories and bytes on one side (included or excluded).
struct UsageCounts {
  var files = 0
  var directories = 0
  var bytes: Int64 = 0

  static func += (lhs: inout UsageCounts, rhs: UsageCounts) {
    lhs.files += rhs.files
    lhs.directories += rhs.directories
    lhs.bytes += rhs.bytes
  }
}

/// A path and the bytes below it, for the top lists.
struct SizedPath {
  var path: [UInt8]
  var bytes: Int64

  /// Larger first; equal sizes by path, so that a run prints the same list
  /// whatever order the threads met the items in.
  static func ranksBefore(_ a: SizedPath, _ b: SizedPath) -> Bool {
    a.bytes != b.bytes ? a.bytes > b.bytes : a.path.lexicographicallyPrecedes(b.path)
  }
}

/// The `limit` largest paths offered: a sorted array, which for the few
/// places a report prints is cheaper than a heap.
struct TopPaths {
  let limit: Int
  private(set) var items: [SizedPath] = []

  init(limit: Int) { self.limit = limit }

  /// Whether a path of `bytes` could enter the list: checked before its
  /// path is copied.
  func admits(_ bytes: Int64) -> Bool {
    limit > 0 && (items.count < limit || bytes >= items[items.count - 1].bytes)
  }

  mutating func offer(_ item: SizedPath) {
    guard limit > 0 else { return }
    if items.count == limit {
      guard SizedPath.ranksBefore(item, items[limit - 1]) else { return }
      items.removeLast()
    }
    let index = items.firstIndex { SizedPath.ranksBefore(item, $0) } ?? items.count
    items.insert(item, at: index)
  }
}

/// One ROOT's disk usage, as `du` prints it.
struct DiskUsage {
  var root: [UInt8]
  var included = UsageCounts()
  var excluded = UsageCounts()
  /// Bytes excluded by each mechanism of the run, in the set's order.
  var byMechanism: [Int64]
  /// Bytes excluded by each sweep rule, where a sweep made the mark.
  var byRule: [String: Int64] = [:]
  var topExcluded: [SizedPath] = []
  var topIncludedDirectories: [SizedPath] = []

  init(root: [UInt8], mechanisms: Int) {
    self.root = root
    self.byMechanism = Array(repeating: 0, count: mechanisms)
  }
}

/// What is known of the ROOT before the walk: whether a marked directory
/// above it excludes it as a whole, by which marks and which rule.
struct RootExclusion {
  var bits: MechanismSet
  var rule: String?
}

/// The state every thread of a `du` run shares: the inodes with several
/// links met so far, in every ROOT, so that each counts once, on the side
/// and under the ROOT where it is met first (GNU du counts a hard-linked
/// file once, too, across all its arguments).
final class SharedLinks: Sendable {
  private struct Inode: Hashable {
    let device: UInt64
    let number: UInt64
  }
  private let seen = Mutex(Set<Inode>())

  /// `true` the first time the inode is met.
  func firstVisit(device: UInt64, inode: UInt64) -> Bool {
    seen.withLock { $0.insert(Inode(device: device, number: inode)).inserted }
  }
}
