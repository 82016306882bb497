import SkipBackupCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A one-line display of a long recursive run, on standard error (the
/// errors of the run's ``Streams``): items seen
/// and the rate. It appears only when standard error is a terminal, only
/// once the run has taken about a second, and it is erased when the run ends,
/// or when SIGINT or SIGTERM ends it (the process then still dies by the
/// signal, so its status says so).
///
/// Walk threads count in batches through their ``Reporter``, so that
/// counting costs nothing when there is no terminal to show it on.
package final class Progress: Sendable {
  package let isEnabled: Bool
  private let start: Double
  private let items = Atomic<Int>(0)
  private let display = Locked(Display())
  private let errors: CInt

  private struct Display {
    package var lastDrawn: Double = 0
    package var shown = false
  }

  package init(enabled: Bool, streams: Streams = .standard) {
    self.isEnabled = enabled && streams.errorsAreTerminal
    errors = streams.errors
    self.start = Self.now()
    if isEnabled { TerminalLineOnScreen.eraseOnTermination() }
  }

  /// Adds `count` items; redraws when enough time has passed.
  package func add(_ count: Int) {
    let total = items.add(count, ordering: .relaxed).newValue
    let now = Self.now()
    guard now - start >= 1 else { return }
    display.withLockIfAvailable { display in
      guard now - display.lastDrawn >= 0.2 else { return }
      display.lastDrawn = now
      display.shown = true
      TerminalLineOnScreen.flag.store(true, ordering: .relaxed)
      let rate = Int(Double(total) / (now - start))
      draw("\rskipbackup: \(Self.grouped(total)) items, \(Self.grouped(rate)) items/s\u{1B}[K")
    }
  }

  /// Erases the line, if it was drawn.
  package func erase() {
    display.withLock { display in
      guard display.shown else { return }
      display.shown = false
      TerminalLineOnScreen.flag.store(false, ordering: .relaxed)
      draw("\r\u{1B}[K")
    }
  }

  private func draw(_ text: String) {
    _ = OutputDescriptor.writeAll(text, to: errors)
  }

  private static func now() -> Double {
    var time = timespec()
    _ = system_clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// `1234567` as `1,234,567`.
  package static func grouped(_ number: Int) -> String {
    let digits = Array(String(number))
    var result = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
      result.append(digit)
    }
    return result
  }
}
