import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Files, directories and bytes on one side (included or excluded).
package struct UsageCounts {
  package var files = 0
  package var directories = 0
  package var bytes: Int64 = 0

  package static func += (lhs: inout UsageCounts, rhs: UsageCounts) {
    lhs.files += rhs.files
    lhs.directories += rhs.directories
    lhs.bytes += rhs.bytes
  }
}

/// A path and the bytes below it, for the top lists.
package struct SizedPath {
  package var path: [UInt8]
  package var bytes: Int64

  /// Larger first; equal sizes by path, so that a run prints the same list
  /// whatever order the threads met the items in.
  package static func ranksBefore(_ a: SizedPath, _ b: SizedPath) -> Bool {
    a.bytes != b.bytes ? a.bytes > b.bytes : a.path.lexicographicallyPrecedes(b.path)
  }
}

/// The `limit` largest paths offered: a sorted array, which for the few
/// places a report prints is cheaper than a heap.
package struct TopPaths {
  package let limit: Int
  package private(set) var items: [SizedPath] = []

  package init(limit: Int) { self.limit = limit }

  /// Whether a path of `bytes` could enter the list: checked before its
  /// path is copied.
  package func admits(_ bytes: Int64) -> Bool {
    limit > 0 && (items.count < limit || bytes >= items[items.count - 1].bytes)
  }

  package mutating func offer(_ item: SizedPath) {
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
package struct DiskUsage {
  package var root: [UInt8]
  package var included = UsageCounts()
  package var excluded = UsageCounts()
  /// Bytes excluded by each mechanism of the run, in the set's order.
  package var byMechanism: [Int64]
  /// Bytes excluded by each sweep rule, where a sweep made the mark.
  package var byRule: [String: Int64] = [:]
  package var topExcluded: [SizedPath] = []
  package var topIncludedDirectories: [SizedPath] = []

  package init(root: [UInt8], mechanisms: Int) {
    self.root = root
    self.byMechanism = Array(repeating: 0, count: mechanisms)
  }
}

/// What is known of the ROOT before the walk: whether a marked directory
/// above it excludes it as a whole, by which marks and which rule.
package struct RootExclusion {
  package var bits: MechanismSet
  package var rule: String?

  package init(bits: MechanismSet, rule: String?) {
    self.bits = bits
    self.rule = rule
  }
}
