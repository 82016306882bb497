import SkipBackupCore
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
  /// child exists, so that none is lost.
  package static func fork() throws(SkipBackupError) -> Side {
    var waited = signalSet()
    var previous = sigset_t()
    try check(.sigprocmask, "/") { system_sigprocmask(SIG_BLOCK, &waited, &previous) }
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
      try check(.setParentDeathSignal, "/") { system_setParentDeathSignal(SIGKILL) }
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
