import SkipBackupMarks
import SkipBackupSystem
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// What `list` and `status -R` answer, and the Swift sequences that answer
// the same (SkipBackup's `MechanismSet.excludedItems(under:)` and
// `statuses(under:)`): the rules by which an entry of a walk is read and
// judged, kept here, below both, so that the two never disagree.

extension TreeEntry {
  /// Which of `mechanisms` mark the entry: none for a symbolic link or
  /// special file, which keep no user attributes (not even listed).
  @inlinable @inline(__always)
  package func marks(
    _ mechanisms: MechanismSet, holdsOwnNames: inout Bool
  ) throws(SkipBackupError) -> MechanismSet {
    holdsOwnNames = false
    guard type.isRegularOrDirectory else { return [] }
    return try mechanisms.marks(on: item, holdsOwnNames: &holdsOwnNames)
  }

  /// Whether `error`, met reading the entry, says it is gone since its
  /// directory was listed: the walk looks it up again at its end. The root
  /// gone is a failure, not an entry to look for again.
  package func isVanished(by error: SkipBackupError) -> Bool {
    error.isNoSuchFile && depth > 0
  }

  /// The nearest marked directory above the entry: one the walk met
  /// (``markedAncestorLength``), else `above`, the one above the walk's root.
  package func inheritedFrom(above: [UInt8]?) -> [UInt8]? {
    markedAncestorLength.map { Array(pathBytes[..<$0]) } ?? above
  }
}

/// What `list --excluded` does with an entry whose marks are `marks`:
/// whether it is one of the topmost excluded items, and where the walk goes
/// next (never below an excluded directory: what is below it is not
/// topmost).
package func excludedItemDecision(marks: MechanismSet) -> (isExcluded: Bool, visit: TreeVisit) {
  marks.isEmpty ? (false, .descend) : (true, .skipChildren)
}

/// What `status -R` does next after an entry whose marks are `marks`: its
/// entries inherit a mark.
package func statusDecision(marks: MechanismSet) -> TreeVisit {
  marks.isEmpty ? .descend : .descendMarked
}

/// One item a tree query found: its path from the root as given, its own
/// marks, and the nearest marked directory above it.
package struct QueriedItem: Sendable {
  package var path: FilePath
  package var marks: MechanismSet
  package var inheritedFrom: FilePath?
}

/// A tree query: the parallel walk of `list --excluded` or `status -R` on
/// threads of its own, its items handed in batches to one asynchronous
/// consumer.
///
/// Memory is bounded whatever the tree: each walk thread fills a batch of
/// ``batchSize`` items, and at most ``batchesQueued`` wait for the
/// consumer; a walker with a full batch and a full queue waits on a
/// condition variable until the consumer takes one (or stops). The consumer
/// never blocks a thread: when nothing is queued it suspends, and the next
/// batch resumes it.
///
/// ``close()`` (the iterator's end) stops the walk: every walker closes its
/// directories at its next entry, and the call returns once the walk's
/// threads are joined, so that no descriptor outlives it.
package final class TreeQuery: @unchecked Sendable {
  /// What the query answers.
  package enum Kind: Sendable {
    /// The topmost excluded items, as `list --excluded` prints them.
    case excludedItems
    /// Every item with its state, as `status -R` prints it.
    case statuses
  }

  /// Items a walk thread hands over at once: a lock, and at times a
  /// consumer's resumption, for every batch rather than every item.
  package static let batchSize = 256
  /// Batches waiting for the consumer before walkers wait.
  static let batchesQueued = 8

  let stop = WalkStop()
  private let lock = ConditionLock()
  /// Guarded by `lock`: the batches waiting, in the order they were handed
  /// over; the waiting consumer (only when none waits); whether the walk
  /// ended or the consumer stopped; what could not be read.
  private var batches: [[QueriedItem]] = []
  private var consumer: UnsafeContinuation<[QueriedItem]?, Never>?
  private var ended = false
  private var stopped = false
  private var unread: [SkipBackupError] = []
  /// The walk's thread, once started; only the consumer touches it.
  private var thread: pthread_t?

  package init() {}

  /// Starts the walk of `root` for `kind` on a thread of its own. A thread
  /// that cannot be started is the query's one failure.
  package func start(
    _ kind: Kind, root: FilePath, mechanisms: MechanismSet, oneFileSystem: Bool
  ) {
    let options = TreeWalkOptions(oneFileSystem: oneFileSystem, stop: stop)
    let context = Unmanaged.passRetained(
      QueryContext(query: self, kind: kind, root: root, mechanisms: mechanisms, options: options))
    var thread = pthread_t()
    // Raw: no path and no descriptor: a thread, a limit or a count
    let started = system_pthread_create(&thread, startQuery, context.toOpaque())
    if started == 0 {
      self.thread = thread
    } else {
      context.release()
      end(unread: [SkipBackupError(.pthreadCreate, Errno(rawValue: started), path: root)])
    }
  }

  /// The next batch, in the order the walkers handed them over; `nil` once
  /// the walk has ended, or the consumer stopped it (a cancelled task).
  package func next() async -> [QueriedItem]? {
    await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<[QueriedItem]?, Never>) in
        let ready: [QueriedItem]?? = lock.withLock {
          if !batches.isEmpty {
            let batch = batches.removeFirst()
            lock.broadcast()  // a walker may wait for room
            return .some(batch)
          }
          if ended || stopped { return .some(nil) }
          consumer = continuation
          return .none
        }
        if let ready { continuation.resume(returning: ready) }
      }
    } onCancel: {
      cancel()
    }
  }

  /// What could not be read, once ``next()`` returned `nil` for the walk's
  /// end; nothing when the consumer stopped it.
  package var unreadItems: [SkipBackupError] {
    lock.withLock { stopped ? [] : unread }
  }

  /// Stops the walk (the consumer's task was cancelled): a waiting walker
  /// or consumer wakes, and the walkers close their directories.
  package func cancel() {
    stop.request()
    let waiting = lock.withLock {
      stopped = true
      lock.broadcast()
      defer { consumer = nil }
      return consumer
    }
    waiting?.resume(returning: nil)
  }

  /// Stops the walk unless it has ended, and waits for its threads: the
  /// consumer's end, early or not.
  package func close() {
    cancel()
    if let thread {
      // Raw: no path and no descriptor: a thread, a limit or a count
      _ = system_pthread_join(thread)
      self.thread = nil
    }
  }

  /// Hands `batch` to the consumer, waiting while the queue is full;
  /// `false` when the consumer stopped, and the batch is dropped.
  func send(_ batch: [QueriedItem]) -> Bool {
    var handed = true
    let waiting: UnsafeContinuation<[QueriedItem]?, Never>? = lock.withLock {
      while batches.count >= Self.batchesQueued && !stopped { lock.wait() }
      if stopped {
        handed = false
        return nil
      }
      // A waiting consumer means nothing is queued: handing it the batch
      // keeps the order.
      if let consumer {
        self.consumer = nil
        return consumer
      }
      batches.append(batch)
      return nil
    }
    waiting?.resume(returning: batch)
    return handed
  }

  /// The walk's end: what could not be read, for the consumer after the
  /// last batch.
  func end(unread: [SkipBackupError]) {
    let waiting = lock.withLock {
      ended = true
      self.unread = unread
      // A waiting consumer means nothing is queued.
      defer { consumer = nil }
      return consumer
    }
    waiting?.resume(returning: nil)
  }
}

/// What the query's thread needs: the walk's root, what it answers, and
/// the query to hand items to.
private final class QueryContext {
  let query: TreeQuery
  let kind: TreeQuery.Kind
  let root: FilePath
  let mechanisms: MechanismSet
  let options: TreeWalkOptions

  init(
    query: TreeQuery, kind: TreeQuery.Kind, root: FilePath, mechanisms: MechanismSet,
    options: TreeWalkOptions
  ) {
    self.query = query
    self.kind = kind
    self.root = root
    self.mechanisms = mechanisms
    self.options = options
  }

  /// The query's walk, as `list` and `status -R` run theirs: first the
  /// marked directory above the root, if any, then the walk.
  func run() {
    var unread: [SkipBackupError] = []
    let above: FilePath?
    do throws(SkipBackupError) {
      above = try mechanisms.markedAncestor(of: root)
    } catch {
      query.end(unread: [error])
      return
    }
    let visitors = (0..<walkThreads).map { _ in
      QueryVisitor(
        query: query, kind: kind, mechanisms: mechanisms, above: above?.bytes)
    }
    _ = walkTree(root: root, options: options, visitors: visitors)
    for visitor in visitors {
      visitor.flush()
      unread += visitor.unread
    }
    query.end(unread: unread)
  }
}

private func startQuery(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  Unmanaged<QueryContext>.fromOpaque(argument!).takeRetainedValue().run()
  return nil
}

/// One walk thread's part of a tree query: its batch, and what it could
/// not read.
private final class QueryVisitor: TreeVisitor {
  let query: TreeQuery
  let kind: TreeQuery.Kind
  let mechanisms: MechanismSet
  /// The marked directory above the root (`status -R`'s inheritance; for
  /// `list`, a root excluded as a whole).
  let above: [UInt8]?
  private(set) var unread: [SkipBackupError] = []
  private var batch: [QueriedItem] = []

  init(query: TreeQuery, kind: TreeQuery.Kind, mechanisms: MechanismSet, above: [UInt8]?) {
    self.query = query
    self.kind = kind
    self.mechanisms = mechanisms
    self.above = above
    batch.reserveCapacity(TreeQuery.batchSize)
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    if query.stop.isRequested { return .skipChildren }
    let marks: MechanismSet
    do throws(SkipBackupError) {
      var ownNames = false
      marks = try entry.marks(mechanisms, holdsOwnNames: &ownNames)
    } catch {
      if entry.isVanished(by: error) { return .vanished }
      unread.append(entry.depth > 0 ? entry.located(error) : error)
      return .skipChildren
    }
    switch kind {
    case .excludedItems:
      // A root below a marked directory is excluded as a whole, as `list`
      // prints it: the topmost excluded item, whatever its own marks.
      if entry.depth == 0 && above != nil {
        emit(
          QueriedItem(
            path: entry.path, marks: marks, inheritedFrom: above.map(FilePath.init(bytes:))))
        return .skipChildren
      }
      let (isExcluded, next) = excludedItemDecision(marks: marks)
      if isExcluded { emit(QueriedItem(path: entry.path, marks: marks, inheritedFrom: nil)) }
      return next
    case .statuses:
      let inheritedFrom = entry.inheritedFrom(above: above).map(FilePath.init(bytes:))
      emit(QueriedItem(path: entry.path, marks: marks, inheritedFrom: inheritedFrom))
      return statusDecision(marks: marks)
    }
  }

  func walkFailed(_ error: SkipBackupError) {
    unread.append(error)
  }

  private func emit(_ item: QueriedItem) {
    batch.append(item)
    if batch.count == TreeQuery.batchSize { flush() }
  }

  /// Hands the batch over (on the walk's end, what is left of it).
  func flush() {
    guard !batch.isEmpty else { return }
    _ = query.send(batch)
    batch.removeAll(keepingCapacity: true)
  }
}
