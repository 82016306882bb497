// The evidence for Locked (Sources/SkipBackupSystem/Locked.swift): two
// threads each add 1 to one counter 200,000 times, under
// Synchronization.Mutex (`swift`) or under a pthread mutex (`pthread`), and
// print the total. Built with -sanitize=thread by Tests/Sanitizers/mutex-race.
import Glibc
import Synchronization

final class Box: @unchecked Sendable {
  let mutex = Mutex<Int>(0)
  var plain = 0
  let pthread: UnsafeMutablePointer<pthread_mutex_t> = {
    let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(m, nil)
    return m
  }()
}
let box = Box()
let useMutex = CommandLine.arguments.dropFirst().first == "swift"
let rounds = 200_000
func work(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  for _ in 0..<rounds {
    if useMutex {
      box.mutex.withLock { $0 += 1 }
    } else {
      pthread_mutex_lock(box.pthread)
      box.plain += 1
      pthread_mutex_unlock(box.pthread)
    }
  }
  return nil
}
var threads = [pthread_t(), pthread_t()]
for i in 0..<2 { pthread_create(&threads[i], nil, work, nil) }
for i in 0..<2 { pthread_join(threads[i], nil) }
let total = useMutex ? box.mutex.withLock { $0 } : box.plain
print(useMutex ? "Synchronization.Mutex" : "pthread_mutex_t", total, total == 2 * rounds ? "exact" : "LOST")
