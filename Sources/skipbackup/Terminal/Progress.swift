#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A one-line display of a long recursive run, on standard error: items seen
/// and the rate. It appears only when standard error is a terminal, only
/// once the run has taken about a second, and it is erased when the run ends.
final class Progress {
  private let enabled: Bool
  private let start: Double
  private var items = 0
  private var nextCheck = 1024
  private var lastDrawn: Double = 0
  private var shown = false

  init(enabled: Bool) {
    self.enabled = enabled && isatty(STDERR_FILENO) == 1
    self.start = Self.now()
  }

  /// Counts one item; now and then looks at the clock and redraws.
  @inline(__always)
  func tick() {
    items += 1
    guard enabled, items >= nextCheck else { return }
    nextCheck = items + 1024
    let now = Self.now()
    guard now - start >= 1, now - lastDrawn >= 0.2 else { return }
    lastDrawn = now
    shown = true
    let rate = Int(Double(items) / (now - start))
    draw("\rskipbackup: \(Self.grouped(items)) items, \(Self.grouped(rate)) items/s\u{1B}[K")
  }

  /// Erases the line, if it was drawn.
  func erase() {
    guard shown else { return }
    shown = false
    draw("\r\u{1B}[K")
  }

  private func draw(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
  }

  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// `1234567` as `1,234,567`.
  static func grouped(_ number: Int) -> String {
    let digits = Array(String(number))
    var result = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
      result.append(digit)
    }
    return result
  }
}
