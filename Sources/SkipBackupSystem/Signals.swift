// Signals and processes, typed: each call carries its own SystemCall case
// and throws the one error type, which names `/` (the run as a whole, no
// one item). What run --snapshot's supervisor and its set-up's signal
// thread call (Sources/SkipBackupView/SupervisedCommand.swift).

import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A set of signals (`sigset_t`), and the calls made with one.
package struct SignalSet {
  package var raw = sigset_t()

  /// The set of `signals` (`sigemptyset(3)`, `sigaddset(3)`).
  package init(_ signals: [CInt] = []) {
    system_sigemptyset(&raw)
    for signal in signals { insert(signal) }
  }

  package mutating func insert(_ signal: CInt) {
    system_sigaddset(&raw, signal)
  }

  package func contains(_ signal: CInt) -> Bool {
    withUnsafePointer(to: raw) { system_sigismember($0, signal) }
  }

  /// Blocks these signals in the calling thread (`sigprocmask(2)`,
  /// `SIG_BLOCK`); the mask before.
  package func block() throws(SkipBackupError) -> SignalSet {
    try Self.changeMask(SIG_BLOCK, self)
  }

  /// Unblocks these signals in the calling thread (`SIG_UNBLOCK`).
  package func unblock() throws(SkipBackupError) {
    _ = try Self.changeMask(SIG_UNBLOCK, self)
  }

  /// Makes this the calling thread's mask (`SIG_SETMASK`).
  package func setAsMask() throws(SkipBackupError) {
    _ = try Self.changeMask(SIG_SETMASK, self)
  }

  private static func changeMask(_ how: CInt, _ set: SignalSet) throws(SkipBackupError)
    -> SignalSet
  {
    var previous = SignalSet()
    var given = set.raw
    _ = try valueOrErrno { system_sigprocmask(how, &given, &previous.raw) }.get(.sigprocmask, "/")
    return previous
  }

  /// The signals pending for this thread or the process, blocked
  /// (`sigpending(2)`).
  package static func pending() throws(SkipBackupError) -> SignalSet {
    var set = SignalSet()
    _ = try valueOrErrno { system_sigpending(&set.raw) }.get(.sigpending, "/")
    return set
  }

  /// Waits for one of these signals, blocked (`sigwaitinfo(2)`, made again
  /// after `EINTR`): the signal and its `si_code`, zero or below when a
  /// process sent it (`SI_USER`, `SI_QUEUE`, `SI_TKILL`), above when the
  /// kernel did (a terminal's ^C, `SI_KERNEL`).
  package func wait() throws(SkipBackupError) -> (signal: CInt, code: CInt) {
    var code: CInt = 0
    var set = raw
    let signal = try valueOrErrno { system_sigwaitinfo(&set, &code) }.get(.sigwaitinfo, "/")
    return (signal, code)
  }

  /// Whether `signal`'s action is to be ignored (`SIG_IGN`: `nohup`, or a
  /// shell's background job without job control), `sigaction(2)`.
  package static func isIgnored(_ signal: CInt) throws(SkipBackupError) -> Bool {
    var old = sigaction()
    _ = try valueOrErrno { system_sigaction(signal, nil, &old) }.get(.sigaction, "/")
    // SIG_IGN is the handler 1 (<signal.h>).
    guard let handler = old.__sigaction_handler.sa_handler else { return false }
    return unsafeBitCast(handler, to: Int.self) == 1
  }

  /// Gives `signal` its default action again (`sigaction(2)`, `SIG_DFL`).
  package static func restoreDefaultAction(_ signal: CInt) throws(SkipBackupError) {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = SIG_DFL
    _ = try valueOrErrno { system_sigaction(signal, &action, nil) }.get(.sigaction, "/")
  }
}

/// Calls on processes: this one and its children.
package enum ProcessCalls {
  /// A copy of this process (`fork(2)`): 0 in the child, the child's ID in
  /// the parent. Not made again after `EINTR`: a fork that was interrupted
  /// made no child, and the caller decides.
  package static func fork() throws(SkipBackupError) -> pid_t {
    try valueOrErrnoOnce { system_fork() }.get(.fork, "/")
  }

  /// Sends `signal` to the process `pid` (`kill(2)`).
  package static func send(_ signal: CInt, to pid: pid_t) throws(SkipBackupError) {
    _ = try valueOrErrno { system_kill(pid, signal) }.get(.kill, "/")
  }

  /// Sends `signal` to this process's own thread `thread` (`pthread_kill(3)`).
  package static func send(_ signal: CInt, toThread thread: pthread_t) throws(SkipBackupError) {
    let code = system_pthread_kill(thread, signal)
    if code != 0 { throw SkipBackupError(.pthreadKill, Errno(returned: code), path: "/") }
  }

  /// Starts a thread running `start(argument)` (`pthread_create(3)`).
  package static func startThread(
    _ start: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
    _ argument: UnsafeMutableRawPointer?
  ) throws(SkipBackupError) -> pthread_t {
    var thread = pthread_t()
    let code = system_pthread_create(&thread, start, argument)
    if code != 0 { throw SkipBackupError(.pthreadCreate, Errno(returned: code), path: "/") }
    return thread
  }

  /// Waits for `thread` to end (`pthread_join(3)`).
  package static func join(_ thread: pthread_t) throws(SkipBackupError) {
    let code = system_pthread_join(thread)
    if code != 0 { throw SkipBackupError(.pthreadJoin, Errno(returned: code), path: "/") }
  }

  /// The child `pid`'s wait status if it has ended, or `nil` (`waitpid(2)`
  /// with `WNOHANG`).
  package static func ended(_ pid: pid_t) throws(SkipBackupError) -> CInt? {
    var status: CInt = 0
    let ended = try valueOrErrno { system_waitpid(pid, &status, WNOHANG) }.get(.waitpid, "/")
    return ended == pid ? status : nil
  }

  /// Has the kernel send this process `signal` when its parent ends
  /// (`prctl(2)`, `PR_SET_PDEATHSIG`).
  package static func dieWithParent(by signal: CInt) throws(SkipBackupError) {
    _ = try valueOrErrno { system_set_parent_death_signal(signal) }.get(.setParentDeathSignal, "/")
  }

  /// Makes this process leave no core file (`setrlimit(2)`, `RLIMIT_CORE`
  /// 0).
  package static func leaveNoCoreFile() throws(SkipBackupError) {
    var none = rlimit(rlim_cur: 0, rlim_max: 0)
    _ = try valueOrErrno { system_setrlimit(CInt(RLIMIT_CORE.rawValue), &none) }.get(
      .setrlimit, "/")
  }
}
