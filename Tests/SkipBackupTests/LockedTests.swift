// Locked, the lock of every value this package's threads share: under
// scripts/test-sanitizers thread, a lock whose hand-over TSan cannot see
// (Synchronization.Mutex's contended path, Tests/Sanitizers/mutex-race)
// makes this test's run report a race; in every build, a lost update
// makes the total short.

import Dispatch
import SkipBackupCore
import Testing

@Suite struct LockedTests {
  @Test func threadsContendingForOneValueLoseNoUpdate() {
    let threads = 4
    let rounds = 50_000
    let counter = Locked(0)
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      for _ in 0..<rounds { counter.withLock { $0 += 1 } }
    }
    #expect(counter.withLock { $0 } == threads * rounds)
  }

  @Test func aThrowingBodyLeavesTheLockFree() {
    struct Stop: Error {}
    let value = Locked([1])
    #expect(throws: Stop.self) {
      try value.withLock { (values: inout [Int]) throws(Stop) in
        values.append(2)
        throw Stop()
      }
    }
    // Taken again at once: the lock was given back when the body threw.
    #expect(value.withLock { $0 } == [1, 2])
  }
}
