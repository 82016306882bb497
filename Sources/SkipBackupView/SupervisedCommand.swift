import SkipBackupCore
import SkipBackupReport
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// COMMAND as a child that skipbackup waits for, when something must be
/// done after COMMAND ends (`run --snapshot` deletes its snapshots then);
/// without that, skipbackup becomes COMMAND (``CommandLaunch``).
///
/// The child enters the private namespace and becomes COMMAND; the parent
/// stays outside it, waits, and ends as COMMAND ended: the same exit
/// status, or the same signal raised on itself, so a shell still reports
/// 128+N. COMMAND keeps the standard streams, the environment, the working
/// directory and the process group (a terminal's ^C, ^\ and ^Z reach it
/// directly). A signal another process sends skipbackup (kill(1), a service
/// manager stopping it) is passed on to COMMAND; one the kernel sent (the
/// terminal, to the whole foreground group, COMMAND included) is not, so
/// that COMMAND gets it once, as sudo(8) decides by `si_code`. COMMAND gets
/// SIGKILL when skipbackup dies (PR_SET_PDEATHSIG), so a SIGKILL to the
/// process the caller started ends COMMAND as it did when skipbackup became
/// COMMAND.
package enum SupervisedCommand {
  /// The signals passed on; SIGCHLD tells that COMMAND ended. The stop and
  /// continue signals keep their default actions: the parent stops and
  /// continues with COMMAND's process group.
  package static let passedOn: [CInt] = [
    SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
  ]

  /// Which process returns from ``fork()``.
  package enum Side {
    /// The child, to become COMMAND: every signal as before the fork.
    case command
    /// skipbackup, with COMMAND's process id.
    case supervisor(pid_t)
  }

  /// Forks, with the signals to wait for blocked in the parent before the
  /// child exists, so that none is lost. The child gets the mask before,
  /// or `original` when given (the one before ``SetupSignals`` blocked
  /// its signals).
  package static func fork(restoring original: sigset_t? = nil) throws(SkipBackupError) -> Side {
    var waited = signalSet()
    var previous = sigset_t()
    try check(.sigprocmask, "/") { system_sigprocmask(SIG_BLOCK, &waited, &previous) }
    if let original { previous = original }
    let parent = system_getpid()
    let pid: pid_t
    switch valueOrErrnoOnce({ system_fork() }) {
    case .success(let value): pid = value
    case .failure(let errno):
      _ = system_sigprocmask(SIG_SETMASK, &previous, nil)
      throw SkipBackupError(.fork, errno, path: "/")
    }
    switch pid {
    case 0:
      // The child: dies with the parent, even if the parent died before
      // this call (then its parent is another process already).
      try check(.setParentDeathSignal, "/") { system_set_parent_death_signal(SIGKILL) }
      if system_getppid() != parent { _ = system_kill(system_getpid(), SIGKILL) }
      try check(.sigprocmask, "/") { system_sigprocmask(SIG_SETMASK, &previous, nil) }
      return .command
    default:
      return .supervisor(pid)
    }
  }

  /// Waits for COMMAND, passing signals on; returns its wait status.
  package static func wait(for pid: pid_t) -> CInt {
    var waited = signalSet()
    while true {
      var code: CInt = 0
      guard case .success(let signal) = valueOrErrno({ system_sigwaitinfo(&waited, &code) })
      else { continue }
      if signal == SIGCHLD {
        var status: CInt = 0
        if case .success(let ended) = valueOrErrno({ system_waitpid(pid, &status, WNOHANG) }),
          ended == pid
        {
          return status
        }
        continue
      }
      // SI_USER (kill), SI_QUEUE, SI_TKILL and the other codes of a
      // process are zero or below; the kernel's (SI_KERNEL) are above.
      if code <= 0 { _ = system_kill(pid, signal) }
    }
  }

  /// Ends this process as COMMAND ended (`status`, from ``wait(for:)``):
  /// with its exit status, or killed by the same signal.
  package static func end(as status: CInt) -> Never {
    let signal = status & 0x7F
    guard signal != 0 else { system__exit((status >> 8) & 0xFF) }
    // No core file of skipbackup for COMMAND's crash.
    var none = rlimit(rlim_cur: 0, rlim_max: 0)
    _ = system_setrlimit(CInt(RLIMIT_CORE.rawValue), &none)
    var action = sigaction()
    action.__sigaction_handler.sa_handler = SIG_DFL
    _ = system_sigaction(signal, &action, nil)
    var only = sigset_t()
    system_sigemptyset(&only)
    system_sigaddset(&only, signal)
    _ = system_sigprocmask(SIG_UNBLOCK, &only, nil)
    _ = system_kill(system_getpid(), signal)
    system__exit(128 + signal)
  }

  private static func signalSet() -> sigset_t {
    var set = sigset_t()
    system_sigemptyset(&set)
    for signal in passedOn + [SIGCHLD] { system_sigaddset(&set, signal) }
    return set
  }
}

/// TERM, INT, HUP and QUIT from the moment `run --snapshot` starts taking
/// snapshots until COMMAND's supervisor takes them over: each deletes the
/// snapshots taken so far and ends the run with 128+N, where the default
/// action left each snapshot, a copy of the whole subvolume, until the
/// next run on that filesystem (`systemctl stop` sends TERM; a terminal's
/// ^C, INT). SIGKILL cannot be caught: its leftovers are still deleted by
/// the next run (``SnapshotDirectory``).
///
/// The signals are blocked from the start (the walk's threads, started
/// later, inherit the mask) and waited for by one thread in sigwaitinfo(2),
/// never polled. That thread deletes the snapshots under the same lock
/// that the run holds while it takes them and while it deletes them
/// itself, so a snapshot half taken is finished, and then deleted, and
/// none is deleted twice. At ``handOver()`` the thread is woken by SIGURG
/// (default action: ignored; never sent by a terminal or a service
/// manager), sent to it alone, and ends; a signal that came before still
/// ends the run there; one that comes after is the supervisor's, which
/// passes it on to COMMAND.
package final class SetupSignals: @unchecked Sendable {
  /// The signals that end the set-up.
  package static let ending: [CInt] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM]
  private static let wake = SIGURG

  private let lock = Mutex<Held>(Held())
  private var thread: pthread_t?
  /// What is waited for: ``ending`` but those ignored (`nohup`, or a
  /// shell's background job without job control, which ignores INT and
  /// QUIT), which end nothing, and the wake-up.
  private var waited: sigset_t
  /// The mask before: the one COMMAND gets.
  package private(set) var original = sigset_t()

  private struct Held: ~Copyable {
    var snapshots: [SnapshotSet] = []
    var handedOver = false
    /// A signal the thread took after ``handOver()`` began, before its
    /// wake-up: it came before COMMAND, and ends the run there.
    var late: CInt? = nil
  }

  /// Blocks the signals in this thread and starts the thread that waits
  /// for them. Without that thread (pthread_create failed) the signals are
  /// left as they were: the run goes on as before, without the clean-up.
  package init() throws(SkipBackupError) {
    var set = sigset_t()
    system_sigemptyset(&set)
    for signal in Self.ending + [Self.wake] {
      var old = sigaction()
      try check(.sigaction, "/") { system_sigaction(signal, nil, &old) }
      // SIG_IGN is the handler 1 (<signal.h>).
      if let handler = old.__sigaction_handler.sa_handler,
        unsafeBitCast(handler, to: Int.self) == 1, signal != Self.wake
      {
        continue
      }
      system_sigaddset(&set, signal)
    }
    waited = set
    var blocked = set
    try check(.sigprocmask, "/") { system_sigprocmask(SIG_BLOCK, &blocked, &original) }
    // Unretained: deinit ends the thread before the object goes.
    let context = Unmanaged.passUnretained(self)
    var started = pthread_t()
    if system_pthread_create(&started, waitForSignals, context.toOpaque()) == 0 {
      thread = started
    } else {
      _ = system_sigprocmask(SIG_SETMASK, &original, nil)
    }
  }

  /// Runs `take` (which takes snapshots) with the lock held, and keeps
  /// what it returns to delete on a signal.
  package func taking(_ take: () throws(SkipBackupError) -> SnapshotSet)
    throws(SkipBackupError) -> SnapshotSet
  {
    try lock.withLock { held throws(SkipBackupError) in
      let snapshots = try take()
      held.snapshots.append(snapshots)
      return snapshots
    }
  }

  /// Deletes `snapshots` (through `delete`) with the lock held, so that a
  /// signal meanwhile does not delete them too.
  package func deleting(_ snapshots: SnapshotSet, _ delete: (SnapshotSet) -> Void) {
    lock.withLock { held in
      held.snapshots.removeAll { $0 === snapshots }
      delete(snapshots)
    }
  }

  /// Stops waiting: from here on the supervisor (or the process's end)
  /// answers the signals. Returns the mask COMMAND is to get. A signal
  /// that came before still ends the run here, whether the thread took it
  /// after the hand-over began or had not run since it came (a loaded
  /// machine: the kernel gives sigwaitinfo(2) the wake-up, sent to the
  /// thread alone, before a signal pending for the process, so it is
  /// looked for once more here, pending, after the thread ended).
  package func handOver() -> sigset_t {
    lock.withLock { held in held.handedOver = true }
    guard let thread else { return original }
    _ = system_pthread_kill(thread, Self.wake)
    _ = system_pthread_join(thread)
    self.thread = nil
    if let late = lock.withLock({ held in held.late }) { end(by: late) }
    var pending = sigset_t()
    var ready = sigset_t()
    system_sigemptyset(&ready)
    var any = false
    if system_sigpending(&pending) == 0 {
      for signal in Self.ending
      where system_sigismember(&pending, signal) && system_sigismember(&waited, signal) {
        system_sigaddset(&ready, signal)
        any = true
      }
    }
    // Pending, so taken at once: no wait.
    var code: CInt = 0
    if any, case .success(let signal) = valueOrErrno({ system_sigwaitinfo(&ready, &code) }) {
      end(by: signal)
    }
    return original
  }

  /// Deletes the snapshots taken, says so in one line, and ends the run
  /// with 128+`signal`.
  private func end(by signal: CInt) -> Never {
    lock.withLock { held in
      for snapshots in held.snapshots { snapshots.delete(Diagnostics(streams: .standard)) }
      let erase = TerminalLineOnScreen.flag.load(ordering: .relaxed) ? "\r\u{1B}[K" : ""
      let line =
        Array(
          "\(erase)skipbackup: \(Self.names[signal] ?? "signal \(signal)") before COMMAND "
            .utf8) + Array("started: the snapshots taken were deleted; nothing was run\n".utf8)
      _ = line.withUnsafeBytes { system_write(STDERR_FILENO, $0.baseAddress, $0.count) }
      system__exit(128 + signal)
    }
  }

  deinit {
    // A run that ends before COMMAND (a refusal) ends the thread too.
    if thread != nil {
      _ = handOver()
      _ = system_sigprocmask(SIG_SETMASK, &original, nil)
    }
  }

  fileprivate func waitLoop() {
    var set = waited
    while true {
      var code: CInt = 0
      guard case .success(let signal) = valueOrErrno({ system_sigwaitinfo(&set, &code) })
      else { continue }
      let ending = lock.withLock { held -> Bool in
        if signal == Self.wake { return false }
        if held.handedOver {
          held.late = held.late ?? signal
          return false
        }
        return true
      }
      if ending { end(by: signal) }
      if signal == Self.wake, lock.withLock({ held in held.handedOver }) { return }
    }
  }

  private static let names: [CInt: String] = [
    SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGTERM: "SIGTERM",
  ]
}

private func waitForSignals(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  Unmanaged<SetupSignals>.fromOpaque(argument!).takeUnretainedValue().waitLoop()
  return nil
}
