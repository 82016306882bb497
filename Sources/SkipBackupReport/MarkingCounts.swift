/// What a run that writes marks (mark, clear, sweep) did, counted by each
/// walk thread for itself and added up when the walk is over.
package struct MarkingCounts {
  /// Items marked, and items already marked.
  package var marked = 0
  package var alreadyMarked = 0
  /// What the items sweep marked hold on disk, in bytes (worked out only
  /// where it is shown, with `--dry-run` or `-v`).
  package var bytes: Int64 = 0
  /// Items cleared (by clear, or by sweep taking its marks back), and items
  /// clear found without a mark.
  package var cleared = 0
  package var notMarked = 0
  /// Items passed over, mount points not entered (`-x`), and items gone
  /// before they could be handled.
  package var skipped = 0
  package var otherFilesystem = 0
  package var vanished = 0

  /// Nothing done yet.
  package init() {}

  package static func + (lhs: Self, rhs: Self) -> Self {
    var sum = lhs
    sum.marked += rhs.marked
    sum.alreadyMarked += rhs.alreadyMarked
    sum.bytes += rhs.bytes
    sum.cleared += rhs.cleared
    sum.notMarked += rhs.notMarked
    sum.skipped += rhs.skipped
    sum.otherFilesystem += rhs.otherFilesystem
    sum.vanished += rhs.vanished
    return sum
  }
}
