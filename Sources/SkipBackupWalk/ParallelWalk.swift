import SkipBackupMarks
import SkipBackupSystem
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The coordination of a parallel walk: directories handed from busy
/// walkers to idle ones, and when to stop. An idle walker blocks on a
/// condition variable until a directory is offered or the walk is over.
final class WorkSharing: @unchecked Sendable {
  /// A directory opened by one walker for another to walk.
  struct Task {
    let descriptor: CInt
    let path: [UInt8]
    let depth: Int
    let markedAncestorLength: Int?
  }

  /// Items the calling thread visits alone before the helpers start.
  let threshold: Int
  /// The root's filesystem, for `oneFileSystem`.
  let rootDevice: dev_t
  private let visitors: [any TreeVisitor]
  private let options: TreeWalkOptions
  private let lock = ConditionLock()
  /// Guarded by `lock`: directories waiting, walkers running and waiting,
  /// whether the walk is over, and the helpers' counts.
  private var tasks: [Task] = []
  private var running = 1
  private var idle = 0
  private var done = false
  private var counts = TreeWalkCounts()
  /// Guarded by `lock`: what vanished on the helpers' way, for the end of the walk.
  private var helpersVanished: [VanishedEntry] = []
  /// `idle`, `tasks.count` and whether the helpers have started, read
  /// without the lock on every directory a walker enters.
  private let hungry = Atomic<Int>(0)
  private let queued = Atomic<Int>(0)
  private let started = Atomic<Bool>(false)
  private var threads: [pthread_t] = []
  private var limit: Int { 2 * visitors.count }

  init(visitors: [any TreeVisitor], options: TreeWalkOptions, rootDevice: dev_t, threshold: Int) {
    self.visitors = visitors
    self.options = options
    self.rootDevice = rootDevice
    self.threshold = threshold
  }

  /// Whether a directory about to be entered should be queued instead:
  /// some walker is waiting for one, or, once the helpers run, the queue is
  /// empty. Keeping one directory queued lets a walker that runs out take
  /// the next without sleeping: on the 200,000-file tree, handing over only
  /// to a walker already asleep cost a `futex` wake and a wake-up latency
  /// on each of some 800 hand-overs.
  var wantsWork: Bool {
    hungry.load(ordering: .relaxed) > 0
      || (queued.load(ordering: .relaxed) == 0 && started.load(ordering: .relaxed))
  }

  /// Queues `task` for an idle walker; `false` when the queue is full.
  func offer(_ task: Task) -> Bool {
    lock.withLock {
      guard tasks.count < limit, !done, !options.isStopped else { return false }
      tasks.append(task)
      queued.store(tasks.count, ordering: .relaxed)
      if idle > 0 { lock.signal() }
      return true
    }
  }

  /// The next directory to walk, or `nil` when every walker is idle and
  /// nothing is queued: the walk is over.
  func take() -> Task? {
    lock.withLock {
      idle += 1
      hungry.store(idle, ordering: .relaxed)
      defer {
        idle -= 1
        hungry.store(idle, ordering: .relaxed)
      }
      while true {
        if options.isStopped {
          // Asked to stop: what is queued is closed, not walked.
          // Raw: the walk's own descriptors, a call once an entry (docs/architecture.md, the
          // walk's raw calls)
          for task in tasks { _ = system_close(task.descriptor) }
          tasks.removeAll()
          queued.store(0, ordering: .relaxed)
          done = true
          lock.broadcast()
          return nil
        }
        if let task = tasks.popLast() {
          queued.store(tasks.count, ordering: .relaxed)
          return task
        }
        if done { return nil }
        if idle == running {
          done = true
          lock.broadcast()
          return nil
        }
        lock.wait()
      }
    }
  }

  /// Starts a walker thread for each visitor but the first.
  func startHelpers() {
    lock.withLock { running = visitors.count }
    started.store(true, ordering: .relaxed)
    for index in 1..<visitors.count {
      let context = Unmanaged.passRetained(HelperContext(sharing: self, visitor: visitors[index]))
      var thread = pthread_t()
      // Raw: no path and no descriptor: a thread, a limit or a count
      if system_pthread_create(&thread, startHelper, context.toOpaque()) == 0 {
        threads.append(thread)
      } else {
        context.release()
        lock.withLock {
          running -= 1
          lock.broadcast()  // the walkers waiting may be all there are now
        }
      }
    }
  }

  /// One helper's life: take directories until the walk is over.
  fileprivate func walkAsHelper(_ visitor: any TreeVisitor) {
    var walker = TreeWalker(
      options: options, rootDevice: rootDevice, visitor: visitor, sharing: self,
      startsHelpers: false)
    while let task = take() { walker.walk(task) }
    let vanished = walker.counts.vanished
    let entries = walker.vanishedEntries
    lock.withLock {
      counts.vanished += vanished
      helpersVanished += entries
    }
  }

  /// What vanished on the helpers' way; after ``finish(adding:)``.
  var vanishedEntries: [VanishedEntry] { lock.withLock { helpersVanished } }

  /// Waits for the helpers; the counts of every walker.
  func finish(adding counts: TreeWalkCounts) -> TreeWalkCounts {
    // Raw: no path and no descriptor: a thread, a limit or a count
    for thread in threads { _ = system_pthread_join(thread) }
    return lock.withLock {
      var total = self.counts
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

/// A mutex with a condition variable: what ``Locked`` lacks.
final class ConditionLock: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  init() {
    _ = system_pthread_mutex_init(mutex)
    _ = system_pthread_cond_init(condition)
  }

  deinit {
    _ = system_pthread_cond_destroy(condition)
    _ = system_pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  func withLock<R>(_ body: () -> R) -> R {
    _ = system_pthread_mutex_lock(mutex)
    defer { _ = system_pthread_mutex_unlock(mutex) }
    return body()
  }

  /// Waits, with the lock held, until another thread signals.
  func wait() { _ = system_pthread_cond_wait(condition, mutex) }
  /// Wakes one waiting thread; call with the lock held.
  func signal() { _ = system_pthread_cond_signal(condition) }
  /// Wakes every waiting thread; call with the lock held.
  func broadcast() { _ = system_pthread_cond_broadcast(condition) }
}

/// How many threads a walk may use: the processors this process may run on.
package var walkThreads: Int {
  // Raw: no path and no descriptor: a thread, a limit or a count
  max(1, min(system_sysconf(CInt(_SC_NPROCESSORS_ONLN)), 8))
}
