// The evidence for Locked's rule that its value has a size
// (Sources/SkipBackupSystem/Locked.swift): two threads each take a
// pthread mutex 100,000 times in a generic class shaped like Locked that
// holds `()` (`empty`) or an Int they add 1 to (`int`), and print the total.
// Built unspecialized (-Onone, as `swift build` builds the tests) with
// -sanitize=thread by Tests/Sanitizers/empty-value.
import Glibc

final class Guarded<Value>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
    let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(m, nil)
    return m
  }()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func withLock<R>(_ body: (inout Value) -> R) -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body(&value)
  }
}
let empty = CommandLine.arguments.dropFirst().first == "empty"
let nothing = Guarded(())
let counter = Guarded(0)
let rounds = 100_000
func work(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  for _ in 0..<rounds {
    if empty { nothing.withLock { _ in } } else { counter.withLock { $0 += 1 } }
  }
  return nil
}
var threads = [pthread_t(), pthread_t()]
for i in 0..<2 { pthread_create(&threads[i], nil, work, nil) }
for i in 0..<2 { pthread_join(threads[i], nil) }
let total = counter.withLock { $0 }
print(empty ? "Guarded<()>" : "Guarded<Int>", empty || total == 2 * rounds ? "exact" : "LOST")
