import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Runs each test of a suite on one of the test threads (``TestThreads``)
/// rather than on Swift's cooperative pool.
///
/// The pool has one thread a core, and the tests are synchronous: a test
/// waiting on a program (nearly all of them wait on restic, borg, a shell
/// or the tool itself) or sleeping (a progress line's second, a rename
/// loop's pauses) held one of this machine's two threads, and no other test
/// ran there meanwhile. A toy suite of sixteen two-second sleeps took 16 s
/// on the pool and 2 s on threads of their own.
public struct OnTestThreads: SuiteTrait, TestTrait, TestScoping {
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    // The suite itself only starts its tests: it stays where it is.
    guard testCase != nil else { return try await function() }
    try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
  }
}

extension Trait where Self == OnTestThreads {
  /// Each test on one of the test threads: see ``OnTestThreads``.
  public static var onTestThreads: Self { OnTestThreads() }
}

/// A fixed set of threads that run the tests' jobs, the most recently
/// queued first.
///
/// Most recent first because a serialized suite queues its next test only
/// when the last one ends: first in, first out put it behind every test not
/// yet started, and the serialized suites, the longest, ran one test at a
/// time at the end of the run. Four threads on two cores: the tests spend
/// about a third of their time waiting rather than computing (suite CPU
/// time against wall time times cores).
public final class TestThreads: TaskExecutor, @unchecked Sendable {
  public static let shared = TestThreads(count: 6)

  private var jobs: [UnownedJob] = []
  private var lock = pthread_mutex_t()
  private var queued = pthread_cond_t()

  private init(count: Int) {
    pthread_mutex_init(&lock, nil)
    pthread_cond_init(&queued, nil)
    for _ in 0..<count {
      var thread = pthread_t()
      let context = Unmanaged.passRetained(self).toOpaque()
      let created = pthread_create(
        &thread, nil,
        { context in
          let threads = Unmanaged<TestThreads>.fromOpaque(context!).takeRetainedValue()
          threads.work()
        }, context)
      precondition(created == 0, "pthread_create: \(created)")
      pthread_detach(thread)
    }
  }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pthread_mutex_lock(&lock)
    jobs.append(job)
    pthread_cond_signal(&queued)
    pthread_mutex_unlock(&lock)
  }

  private func work() -> Never {
    while true {
      pthread_mutex_lock(&lock)
      while jobs.isEmpty { pthread_cond_wait(&queued, &lock) }
      let job = jobs.removeLast()
      pthread_mutex_unlock(&lock)
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
