import SkipBackupCore

/// The inodes with several links a run has met so far, on every thread and
/// under every ROOT, so that each counts once, on the side and under the
/// ROOT where it is met first (GNU du counts a hard-linked file once, too,
/// across all its arguments).
package final class SharedLinks: Sendable {
  private struct Inode: Hashable {
    let device: UInt64
    let number: UInt64
  }
  private let seen = Locked(Set<Inode>())

  package init() {}

  /// `true` the first time the inode is met. The set holds only inodes
  /// with several links, which are few.
  package func firstVisit(device: UInt64, inode: UInt64) -> Bool {
    seen.withLock { $0.insert(Inode(device: device, number: inode)).inserted }
  }
}
