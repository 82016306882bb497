import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A visitor for a walk on several threads: each thread has its own, and
/// calls it from that thread only.
package protocol TreeVisitor: AnyObject {
  /// Sees one item; says whether to go into it, as the `visit` closure of
  /// ``walkTree(root:options:visit:failure:)``.
  func visit(_ entry: TreeEntry) -> TreeVisit
  /// Hears of a directory that could not be opened or read.
  func walkFailed(_ error: SkipBackupError)
  /// With ``TreeWalkOptions/wholeListings``: sees a directory's whole
  /// listing, its path and its entries' depth, before its entries are
  /// visited (on this visitor's thread).
  func enterDirectory(_ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int)
}

extension TreeVisitor {
  package func enterDirectory(
    _ listing: DirectoryListing, path: UnsafeBufferPointer<UInt8>, depth: Int
  ) {}
}

/// Walks the tree at `root` as ``walkTree(root:options:visit:failure:)``
/// does, on up to `visitors.count` threads, one visitor each.
///
/// The calling thread walks alone, in order, until it has visited
/// `parallelAfter` items: a small tree is walked as a single walk would. Then
/// the other threads start, and a walker that is about to enter a directory
/// hands it to an idle one instead. Directories waiting to be taken are few
/// (twice the threads), so memory stays flat as the tree grows. The order in
/// which subtrees are visited then varies from run to run.
package func walkTree(
  root: FilePath, options: TreeWalkOptions = TreeWalkOptions(), visitors: [any TreeVisitor],
  parallelAfter threshold: Int = 20_000
) -> TreeWalkCounts {
  precondition(!visitors.isEmpty)
  let first = visitors[0]
  var walker = TreeWalker(options: options, visit: first.visit, failure: first.walkFailed)
  if options.wholeListings { walker.enter = first.enterDirectory }
  defer { walker.release() }
  let sharing =
    visitors.count > 1
    ? WorkSharing(visitors: visitors, options: options, threshold: threshold) : nil
  walker.sharing = sharing
  walker.walk(root: root)
  guard let sharing else { return walker.counts }
  while let task = sharing.take() { walker.resume(task) }
  return sharing.finish(adding: walker.counts)
}

/// The coordination of a parallel walk: directories handed from busy
/// walkers to idle ones, and when to stop.
final class WorkSharing: @unchecked Sendable {
  /// A directory opened by one walker for another to walk.
  struct Task {
    let descriptor: CInt
    let path: [UInt8]
    let depth: Int
    let markedAncestorLength: Int?
  }

  private struct State {
    var tasks: [Task] = []
    /// Walkers running, the first among them.
    var running = 1
    /// Walkers waiting for a task.
    var idle = 0
    var done = false
    var counts = TreeWalkCounts()
  }

  let threshold: Int
  /// The root's device, for `oneFileSystem`; set before helpers start.
  var rootDevice: dev_t = 0
  private let visitors: [any TreeVisitor]
  private let options: TreeWalkOptions
  private let state = Mutex(State())
  /// Idle walkers, read without the lock on every directory.
  private let hungry = Atomic<Int>(0)
  private var threads: [pthread_t] = []
  private var limit: Int { 2 * visitors.count }

  init(visitors: [any TreeVisitor], options: TreeWalkOptions, threshold: Int) {
    self.visitors = visitors
    self.options = options
    self.threshold = threshold
  }

  /// Whether some walker is waiting for a directory.
  var wantsWork: Bool { hungry.load(ordering: .relaxed) > 0 }

  /// Queues `task` for an idle walker; `false` when the queue is full.
  func offer(_ task: Task) -> Bool {
    state.withLock { state in
      guard state.tasks.count < limit, !state.done else { return false }
      state.tasks.append(task)
      return true
    }
  }

  /// The next directory to walk, or `nil` when every walker is idle and
  /// nothing is queued: the walk is over.
  func take() -> Task? {
    var waiting = false
    while true {
      let answer: Task?? = state.withLock { state in
        if let task = state.tasks.popLast() {
          if waiting {
            state.idle -= 1
            hungry.subtract(1, ordering: .relaxed)
          }
          return .some(task)
        }
        if state.done { return .some(nil) }
        if !waiting {
          waiting = true
          state.idle += 1
          hungry.add(1, ordering: .relaxed)
        }
        if state.idle == state.running {
          state.done = true
          return .some(nil)
        }
        return nil
      }
      if let answer { return answer }
      _ = system_usleep(50)
    }
  }

  /// Starts a walker thread for each visitor but the first.
  func startHelpers() {
    state.withLock { $0.running = visitors.count }
    for index in 1..<visitors.count {
      let context = Unmanaged.passRetained(HelperContext(sharing: self, visitor: visitors[index]))
      var thread = pthread_t()
      if system_pthread_create(&thread, startHelper, context.toOpaque()) == 0 {
        threads.append(thread)
      } else {
        context.release()
        state.withLock { $0.running -= 1 }
      }
    }
  }

  /// One helper's life: take directories until the walk is over.
  fileprivate func walkAsHelper(_ visitor: any TreeVisitor) {
    var walker = TreeWalker(options: options, visit: visitor.visit, failure: visitor.walkFailed)
    if options.wholeListings { walker.enter = visitor.enterDirectory }
    walker.sharing = self
    walker.rootDevice = rootDevice
    walker.visited = threshold  // helpers never start helpers
    while let task = take() { walker.resume(task) }
    let counts = walker.counts
    walker.release()
    state.withLock { $0.counts.vanished += counts.vanished }
  }

  /// Waits for the helpers; the counts of every walker.
  func finish(adding counts: TreeWalkCounts) -> TreeWalkCounts {
    for thread in threads { _ = system_pthread_join(thread) }
    return state.withLock { state in
      var total = state.counts
      total.vanished += counts.vanished
      return total
    }
  }
}

private final class HelperContext {
  let sharing: WorkSharing
  let visitor: any TreeVisitor

  init(sharing: WorkSharing, visitor: any TreeVisitor) {
    self.sharing = sharing
    self.visitor = visitor
  }
}

private func startHelper(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  let context = Unmanaged<HelperContext>.fromOpaque(argument!).takeRetainedValue()
  context.sharing.walkAsHelper(context.visitor)
  return nil
}

/// How many threads a walk may use: the processors this process may run on.
package var walkThreads: Int {
  max(1, min(system_sysconf(CInt(_SC_NPROCESSORS_ONLN)), 8))
}
