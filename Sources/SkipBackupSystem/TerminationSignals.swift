import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A line on the terminal (the progress line) to erase when SIGINT or
/// SIGTERM ends the process, which then still dies by the signal, so that
/// its status says so.
///
/// The handler makes its three calls (`write(2)`, `signal(2)`, `raise(3)`)
/// raw, not through their `system_*` wrappers: a signal handler may call
/// only async-signal-safe functions (signal-safety(7)), and in a debug build
/// a wrapper first asks the mocking driver, which reads thread-specific
/// data and takes a mutex. Nor may it take a lock of its own: whether the
/// line is on the screen is one atomic flag.
package enum TerminalLineOnScreen {
  /// Whether the line is on the screen now.
  package static let flag = Atomic<Bool>(false)
  private static let erase: StaticString = "\r\u{1B}[K"

  /// Installs the handler, except for a signal that is ignored (`nohup`).
  ///
  /// The corresponding C functions are `sigaction(2)` and `sigemptyset(3)`.
  package static func eraseOnTermination() {
    // Both initialized here, never first in the handler.
    _ = flag.load(ordering: .relaxed)
    _ = erase.utf8CodeUnitCount
    for signal in [SIGINT, SIGTERM] {
      var old = sigaction()
      guard system_sigaction(signal, nil, &old) == 0, old.__sigaction_handler.sa_handler == nil  // SIG_DFL
      else { continue }
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { signal in
        if TerminalLineOnScreen.flag.load(ordering: .relaxed) {
          let erase = TerminalLineOnScreen.erase
          _ = write(STDERR_FILENO, erase.utf8Start, erase.utf8CodeUnitCount)
        }
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
      }
      system_sigemptyset(&action.sa_mask)
      _ = system_sigaction(signal, &action, nil)
    }
  }
}
