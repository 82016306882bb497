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
  /// Whether the suite's tests go ahead of every test not yet started.
  let startingFirst: Bool

  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    // The suite itself only starts its tests: it stays where it is.
    guard testCase != nil else { return try await function() }
    guard startingFirst else {
      return try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
    // A child task of high priority: the test threads take its jobs first.
    try await withoutActuallyEscaping(function) { function in
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask(executorPreference: TestThreads.shared, priority: .high) {
          try await function()
        }
        try await group.waitForAll()
      }
    }
  }
}

extension Trait where Self == OnTestThreads {
  /// Each test on one of the test threads: see ``OnTestThreads``.
  public static var onTestThreads: Self { OnTestThreads(startingFirst: false) }

  /// Each test on one of the test threads, ahead of the tests of suites
  /// without it. For a serialized suite whose chain of tests is the run's
  /// longest: queued at the start among some four hundred tests, the most
  /// recent first, the rename loops began 67 s into a 126 s run and ended
  /// it.
  public static func onTestThreads(startingFirst: Bool) -> Self {
    OnTestThreads(startingFirst: startingFirst)
  }
}

/// A fixed set of threads that run the tests' jobs: those of the serialized
/// suites first, in the order they came, then the others, the most recently
/// queued first.
///
/// Most recent first because a serialized suite queues its next test only
/// when the last one ends: first in, first out put it behind every test not
/// yet started, and the serialized suites, the longest, ran one test at a
/// time at the end of the run. Six threads on two cores: the tests spend
/// about a third of their time waiting rather than computing (suite CPU
/// time against wall time times cores), and 3, 4, 8 and 12 threads took
/// 173, 160, 153 and 159 s against 149 s for six.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
  public static let shared = TestThreads(count: 6)

  /// Jobs of high priority (``OnTestThreads/onTestThreads(startingFirst:)``)
  /// and the others.
  private var firstJobs: [UnownedJob] = []
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
    let first = job.priority >= JobPriority(TaskPriority.high)
    let job = UnownedJob(job)
    pthread_mutex_lock(&lock)
    if first { firstJobs.append(job) } else { jobs.append(job) }
    pthread_cond_signal(&queued)
    pthread_mutex_unlock(&lock)
  }

  private func work() -> Never {
    while true {
      pthread_mutex_lock(&lock)
      while firstJobs.isEmpty && jobs.isEmpty { pthread_cond_wait(&queued, &lock) }
      // The first lane in order: with more serialized suites (seven) than
      // threads (six), the most recent first would keep one suite's first
      // test waiting until another suite had run all of its tests.
      let job = firstJobs.isEmpty ? jobs.removeLast() : firstJobs.removeFirst()
      pthread_mutex_unlock(&lock)
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
