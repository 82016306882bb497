import SkipBackupCore
import SkipBackupReport
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
  package static func fork(restoring original: SignalSet? = nil) throws(SkipBackupError) -> Side {
    var previous = try signalSet().block()
    if let original { previous = original }
    let parent = system_getpid()
    let pid: pid_t
    do {
      pid = try ProcessCalls.fork()
    } catch {
      try? previous.setAsMask()
      throw error
    }
    switch pid {
    case 0:
      // The child: dies with the parent, even if the parent died before
      // this call (then its parent is another process already).
      try ProcessCalls.dieWithParent(by: SIGKILL)
      if system_getppid() != parent { try? ProcessCalls.send(SIGKILL, to: system_getpid()) }
      try previous.setAsMask()
      return .command
    default:
      return .supervisor(pid)
    }
  }

  /// Waits for COMMAND, passing signals on; returns its wait status.
  package static func wait(for pid: pid_t) -> CInt {
    let waited = signalSet()
    while true {
      guard let (signal, code) = try? waited.wait() else { continue }
      if signal == SIGCHLD {
        if let status = try? ProcessCalls.ended(pid) { return status }
        continue
      }
      // SI_USER (kill), SI_QUEUE, SI_TKILL and the other codes of a
      // process are zero or below; the kernel's (SI_KERNEL) are above.
      if code <= 0 { try? ProcessCalls.send(signal, to: pid) }
    }
  }

  /// Ends this process as COMMAND ended (`status`, from ``wait(for:)``):
  /// with its exit status, or killed by the same signal.
  package static func end(as status: CInt) -> Never {
    let signal = status & 0x7F
    guard signal != 0 else { system__exit((status >> 8) & 0xFF) }
    // No core file of skipbackup for COMMAND's crash.
    try? ProcessCalls.leaveNoCoreFile()
    try? SignalSet.restoreDefaultAction(signal)
    try? SignalSet([signal]).unblock()
    try? ProcessCalls.send(signal, to: system_getpid())
    system__exit(128 + signal)
  }

  private static func signalSet() -> SignalSet {
    SignalSet(passedOn + [SIGCHLD])
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

  private let lock = Locked<Held>(Held())
  private var thread: pthread_t?
  /// What is waited for: ``ending`` but those ignored (`nohup`, or a
  /// shell's background job without job control, which ignores INT and
  /// QUIT), which end nothing, and the wake-up.
  private let waited: SignalSet
  /// The mask before: the one COMMAND gets.
  package private(set) var original = SignalSet()

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
    var set = SignalSet()
    for signal in Self.ending + [Self.wake] {
      if signal != Self.wake, try SignalSet.isIgnored(signal) { continue }
      set.insert(signal)
    }
    waited = set
    original = try set.block()
    // Unretained: deinit ends the thread before the object goes.
    let context = Unmanaged.passUnretained(self)
    do {
      thread = try ProcessCalls.startThread(waitForSignals, context.toOpaque())
    } catch {
      try? original.setAsMask()
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
  package func handOver() -> SignalSet {
    lock.withLock { held in held.handedOver = true }
    guard let thread else { return original }
    try? ProcessCalls.send(Self.wake, toThread: thread)
    try? ProcessCalls.join(thread)
    self.thread = nil
    if let late = lock.withLock({ held in held.late }) { end(by: late) }
    var ready = SignalSet()
    var any = false
    if let pending = try? SignalSet.pending() {
      for signal in Self.ending where pending.contains(signal) && waited.contains(signal) {
        ready.insert(signal)
        any = true
      }
    }
    // Pending, so taken at once: no wait.
    if any, let (signal, _) = try? ready.wait() {
      end(by: signal)
    }
    return original
  }

  /// Deletes the snapshots taken, says so in one line, and ends the run
  /// with 128+`signal`. The run's other threads, which may still be
  /// walking the snapshots, write to standard error no more.
  private func end(by signal: CInt) -> Never {
    do {
      // Never released: the run ends in `end(by:errors:)`.
      let saved = try OutputDescriptor.silenceStandardError()
      end(by: signal, errors: saved.rawValue)
    } catch {
      end(by: signal, errors: STDERR_FILENO)
    }
  }

  private func end(by signal: CInt, errors: CInt) -> Never {
    lock.withLock { held in
      let streams = Streams(errors: errors)
      for snapshots in held.snapshots { snapshots.delete(Diagnostics(streams: streams)) }
      let erase = TerminalLineOnScreen.flag.load(ordering: .relaxed) ? "\r\u{1B}[K" : ""
      let line =
        Array(
          "\(erase)skipbackup: \(Self.names[signal] ?? "signal \(signal)") before COMMAND "
            .utf8) + Array("started: the snapshots taken were deleted; nothing was run\n".utf8)
      _ = OutputDescriptor.writeAll(line, to: errors)
      system__exit(128 + signal)
    }
  }

  deinit {
    // A run that ends before COMMAND (a refusal) ends the thread too.
    if thread != nil {
      _ = handOver()
      try? original.setAsMask()
    }
  }

  fileprivate func waitLoop() {
    while true {
      guard let (signal, _) = try? waited.wait() else { continue }
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
