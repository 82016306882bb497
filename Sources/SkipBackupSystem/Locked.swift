#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A value that one thread at a time reaches, under a pthread mutex: the
/// lock of every value that threads of this package share.
///
/// Not `Synchronization.Mutex`: when two threads contend for one, its slow
/// path hands the lock over by a futex inside libswiftSynchronization.so,
/// which is not built for ThreadSanitizer, so TSan sees no order between
/// the two holders and reports their accesses to the value as a race. With
/// Swift 6.3.1, two threads that each add 1 under it 200,000 times get a
/// report in every run, and the total is exact (the reproducer is
/// Tests/Sanitizers/mutex-race; docs/testing.md). TSan intercepts
/// `pthread_mutex_lock` and `pthread_mutex_unlock` and sees the order.
///
/// The value must have a size: a stored property of no size (`()`) has the
/// object's own address, so in an unspecialized build TSan takes the
/// modifying access to it for a write to the object's header, which every
/// caller reads (its type) outside the lock, and reports a race that is not
/// there (Tests/Sanitizers/empty-value). Lock the state itself instead.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private var value: Value

  package init(_ value: consuming sending Value) {
    assert(MemoryLayout<Value>.size > 0, "Locked: lock the state itself, not ()")
    self.value = value
    _ = system_pthread_mutex_init(mutex)
  }

  deinit {
    _ = system_pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` on the value with the lock held.
  package func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    _ = system_pthread_mutex_lock(mutex)
    defer { _ = system_pthread_mutex_unlock(mutex) }
    return try body(&value)
  }

  /// Runs `body` on the value if no other thread holds the lock; `nil`
  /// without waiting if one does.
  package func withLockIfAvailable<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result? {
    guard system_pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { _ = system_pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
