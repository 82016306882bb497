import SkipBackupCore
import SystemPackage

/// The bytes of everything at and below `path`, as `du -s -B1` counts them
/// (`du -s -B1 -x` with `oneFileSystem`), under the run's `rule`: an inode
/// with several links counts once in the whole run, so that the totals of
/// several items add up to what `du -sc` says of them all. What cannot be
/// read is left out. Walked on the calling thread.
package func subtreeBytes(at path: FilePath, rule: SizeRule, oneFileSystem: Bool) -> Int64 {
  let visitor = SubtreeTotal(rule: rule, rootLength: path.bytes.count)
  _ = walkTree(
    root: path, options: TreeWalkOptions(oneFileSystem: oneFileSystem), visitors: [visitor])
  return visitor.total
}

/// The sized walk that only adds up: every entry's bytes into one total.
private final class SubtreeTotal: TreeVisitor, SizeClassifier {
  private var walk: SizedWalk
  private(set) var total: Int64 = 0

  init(rule: SizeRule, rootLength: Int) {
    walk = SizedWalk(rule: rule)
    walk.reset(rootLength: rootLength)
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit { walk.visit(entry, self) }

  /// A directory that cannot be read adds what could be.
  func walkFailed(_ error: SkipBackupError) {}

  func unreadable(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> TreeVisit {
    .skipChildren
  }

  func classify(_ entry: borrowing TreeEntry, _ item: SizedItem) -> SizedEntry {
    total += item.claim().bytes
    return SizedEntry(visit: item.entersDirectory ? .descend : .skipChildren)
  }

  func rebuilt(
    name: UnsafeBufferPointer<UInt8>, depth: Int, length: Int, markedAncestorLength: Int?
  ) -> Bool {
    false
  }

  func leave(_ frame: SizedFrame, path: UnsafeBufferPointer<UInt8>) {}
}
