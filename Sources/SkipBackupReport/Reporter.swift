import SkipBackupCore
import SystemPackage

/// What every visitor of a walk reports through: one per walk thread, with
/// that thread's output buffer and progress count, and the run's one
/// ``Diagnostics``. A failure is written after what the thread's buffer
/// holds, so that a message comes after the lines it follows.
///
/// The progress count is kept here, not in the shared ``Progress``: a visit
/// ticks it through a `let`, and without a terminal to show it on, no
/// access to a mutable property is made at all.
package final class Reporter {
  package let output: Output
  package let diagnostics: Diagnostics
  // Usable from the inlined tick(): each engine is a module of its own,
  // and a call across modules per entry costs 2 % of list's instructions
  // (docs/performance.md).
  @usableFromInline let progress: Progress
  @usableFromInline var pending = 0

  /// A reporter whose `output` is, unless given, a buffer of its own on the
  /// run's output (the sink of `diagnostics`).
  package init(output: Output? = nil, diagnostics: Diagnostics, progress: Progress) {
    self.output = output ?? Output(sink: diagnostics.outputSink)
    self.diagnostics = diagnostics
    self.progress = progress
  }

  /// Counts one item for the progress line, handed over every 1,024.
  @inlinable @inline(__always)
  package func tick() {
    guard progress.isEnabled else { return }
    pending += 1
    if pending == 1024 {
      progress.add(pending)
      pending = 0
    }
  }

  /// Where the walk reads a tree that users know at another path (`run
  /// --snapshot` walks the snapshot of ROOT): a failure names the item at
  /// the path users know, not in the snapshot, which is gone by then.
  package var shownRoot: (read: [UInt8], shown: [UInt8])?

  /// `path`, at the path users know it by.
  package func shown(_ path: FilePath) -> FilePath {
    guard let (read, shown) = shownRoot, path.bytes.starts(with: read),
      path.bytes.count == read.count || path.bytes[read.count] == UInt8(ascii: "/")
    else { return path }
    let rest = path.bytes[read.count...]
    if shown == [UInt8(ascii: "/")] { return FilePath(bytes: rest.isEmpty ? shown : Array(rest)) }
    return FilePath(bytes: shown + rest)
  }

  private func shown(_ error: SkipBackupError) -> SkipBackupError {
    guard shownRoot != nil else { return error }
    var error = error
    error.path = shown(error.path)
    return error
  }

  /// Reports a failure of the run's own, such as a ROOT that cannot be read.
  package func report(_ error: SkipBackupError) {
    diagnostics.report(shown(error), after: output)
  }

  /// Reports a failure on `entry`: one below the root is named by its
  /// path in the walk.
  package func report(_ error: SkipBackupError, at entry: borrowing TreeEntry) {
    diagnostics.report(shown(entry.depth > 0 ? entry.located(error) : error), after: output)
  }

  /// Reports a failure that is not a file error.
  package func report(_ message: String) {
    diagnostics.report(message, after: output)
  }

  /// Which of `mechanisms` mark `entry`: none for a symbolic link or
  /// special file, which keep no user attributes.
  @inlinable @inline(__always)
  package func marks(
    _ mechanisms: MechanismSet, of entry: borrowing TreeEntry
  ) throws(SkipBackupError) -> MechanismSet {
    var ownNames = false
    return try marks(mechanisms, of: entry, holdsOwnNames: &ownNames)
  }

  /// ``marks(_:of:)``, and whether the entry may hold a name in
  /// skipbackup's own namespace, such as a sweep's record (see
  /// ``MechanismSet/marks(on:holdsOwnNames:)``).
  @inlinable @inline(__always)
  package func marks(
    _ mechanisms: MechanismSet, of entry: borrowing TreeEntry, holdsOwnNames: inout Bool
  ) throws(SkipBackupError) -> MechanismSet {
    try entry.marks(mechanisms, holdsOwnNames: &holdsOwnNames)
  }

  /// What a visitor says of an entry it could not read, the same in every
  /// command: ``TreeVisit/vanished`` when the entry is gone since its
  /// directory was listed (the walk looks it up again at its end, and
  /// counts it if it is still gone), else ``TreeVisit/skipChildren``, with
  /// the failure reported.
  package func unreadable(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> TreeVisit {
    if isVanished(error, at: entry) { return .vanished }
    report(error, at: entry)
    return .skipChildren
  }

  /// Whether `error` says the entry is gone since its directory was listed:
  /// ``unreadable(_:at:)``'s policy, for `browse`, which shows the other
  /// failures on its screen rather than reporting them. ROOT gone is a
  /// failure, not an entry to look for again.
  package func isVanished(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> Bool {
    entry.isVanished(by: error)
  }
}

/// A visitor that reports through a ``Reporter``: what the walk itself
/// cannot read goes there too.
package protocol ReportingVisitor: TreeVisitor {
  var reporter: Reporter { get }
}

extension ReportingVisitor {
  package func walkFailed(_ error: SkipBackupError) {
    reporter.report(error)
  }
}
