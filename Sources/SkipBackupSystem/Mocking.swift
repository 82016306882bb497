// Debug-only mocking of the system calls, in the manner of swift-system's
// MockingDriver: a test installs a driver on its thread, tells it which call
// to fail with which errno, and every `system_*` wrapper asks it first. This
// reaches the error paths a kernel will not produce on demand (ENOSYS from
// the *xattrat calls, EINTR, ERANGE, EIO, ENOSPC). Release builds compile
// all of it out, so the wrappers cost nothing more there.

import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

#if ENABLE_MOCKING

  /// Forces errors on system calls made by the thread it is installed on.
  ///
  ///     MockingDriver.withMocking { driver in
  ///       driver.force(.interrupted, on: .getxattr, times: 1)
  ///       try attributes.value(of: name)  // EINTR once, retried
  ///       driver.calls[.getxattr]  // 2
  ///     }
  ///
  /// Only the installing thread is affected: a parallel walk's helper
  /// threads make their calls unmocked.
  package final class MockingDriver {
    private struct Forced {
      var errno: Errno
      /// Failures left; `nil` fails every call.
      var remaining: Int?
    }

    private var forced: [SystemCall: Forced] = [:]
    /// What to do just before a numbered call is made, by call and number.
    private var actions: [SystemCall: [Int: () -> Void]] = [:]
    /// How many times each call was made (forced failures included).
    package private(set) var calls: [SystemCall: Int] = [:]
    /// Whether the `*xattrat` calls answered `ENOSYS`, kept per driver rather
    /// than for the process, so that a forced `ENOSYS` does not send every
    /// later test down the fallback.
    package var xattrAtIsMissing = false

    private init() {}

    /// Makes `call` fail with `errno`: the next `times` calls, or every call
    /// when `times` is `nil`.
    package func force(_ errno: Errno, on call: SystemCall, times: Int? = nil) {
      forced[call] = Forced(errno: errno, remaining: times)
    }

    /// Runs `action` just before the `number`th call of `call` (counting
    /// from 1, forced failures included) is made, or forced to fail: a
    /// test's way to change the filesystem at one exact point of a run, as
    /// a racing process might, without a timed wait. The action's own calls
    /// should bypass the `system_*` wrappers (or are counted too).
    package func perform(before call: SystemCall, number: Int, _ action: @escaping () -> Void) {
      actions[call, default: [:]][number] = action
    }

    /// Stops forcing errors on `call`.
    package func stopForcing(_ call: SystemCall) {
      forced[call] = nil
    }

    /// Records a call; the errno to fail it with, if one is forced.
    fileprivate func intercept(_ call: SystemCall) -> Errno? {
      calls[call, default: 0] += 1
      if let action = actions[call]?.removeValue(forKey: calls[call]!) { action() }
      guard var entry = forced[call] else { return nil }
      if let remaining = entry.remaining {
        entry.remaining = remaining - 1
        forced[call] = remaining > 1 ? entry : nil
      }
      return entry.errno
    }

    /// The driver installed on the current thread, if any.
    package static var current: MockingDriver? {
      guard let pointer = pthread_getspecific(mockingKey) else { return nil }
      return Unmanaged<MockingDriver>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with a fresh driver installed on the current thread;
    /// drivers nest, the innermost one acting.
    package static func withMocking<R, E: Error>(
      _ body: (MockingDriver) throws(E) -> R
    ) throws(E) -> R {
      let driver = MockingDriver()
      let previous = pthread_getspecific(mockingKey)
      pthread_setspecific(mockingKey, Unmanaged.passUnretained(driver).toOpaque())
      defer { pthread_setspecific(mockingKey, previous) }
      return try withExtendedLifetime(driver) { () throws(E) -> R in try body(driver) }
    }
  }

  extension MockingDriver {
    /// Installs, for the rest of the process and on every thread, a driver
    /// that forces what `SKIPBACKUP_FORCE_ERRNO` names: a comma-
    /// separated list of `CALL:ERRNO[:FROM[:TIMES]]`, ERRNO a number or one
    /// of the names below, failing from the FROMth call on (1 when not
    /// given), TIMES times (every time when not given), as
    /// `unshare:EPERM,fsconfig:EINVAL:4:1`. Debug builds only: it is
    /// how the tests of the tool reach the kernel's refusals of `run`
    /// (no user namespaces, an overlay that refuses its layer), which a
    /// test cannot make the kernel give.
    /// A malformed entry stops the process: a test whose forced error or
    /// race was never installed must not pass.
    package static func installFromEnvironment() {
      let forced = environmentValue("SKIPBACKUP_FORCE_ERRNO").map {
        String(decoding: $0, as: UTF8.self)
      }
      let races = environmentValue("SKIPBACKUP_RACE").map { String(decoding: $0, as: UTF8.self) }
      guard forced != nil || races != nil else { return }
      let driver = MockingDriver()
      let names: [String: Errno] = [
        "EPERM": .notPermitted, "EINVAL": .invalidArgument, "ENOSPC": .noSpace,
        "ENOSYS": .noFunction, "EOPNOTSUPP": .notSupported, "EACCES": .permissionDenied,
        "ENODEV": .operationNotSupportedByDevice, "ENOENT": .noSuchFileOrDirectory,
        "EIO": .ioError, "ELOOP": .tooManySymbolicLinkLevels,
        "EROFS": .readOnlyFileSystem, "EBUSY": .resourceBusy, "EXDEV": .improperLink,
        "ETXTBSY": .textFileBusy,
      ]
      for item in (forced ?? "").split(separator: ",") {
        let parts = item.split(separator: ":")
        guard parts.count >= 2, parts.count <= 4, let call = SystemCall(rawValue: String(parts[0])),
          let errno = names[String(parts[1])] ?? Int32(parts[1]).map(Errno.init(rawValue:)),
          let from = parts.count > 2 ? Int(parts[2]) : 1,
          let times = parts.count > 3 ? Int(parts[3]) : Optional<Int?>.some(nil)
        else { fatalError("SKIPBACKUP_FORCE_ERRNO: cannot read '\(item)'") }
        driver.perform(before: call, number: from) { driver.force(errno, on: call, times: times) }
      }
      if let races { driver.performRaces(races) }
      processDriver = driver
    }

    /// Runs what `SKIPBACKUP_RACE` names: a comma-separated list of
    /// `CALL:NUMBER:SCRIPT`, each SCRIPT run by `/bin/sh` (with this
    /// process's `PATH` and nothing else of its environment) just before
    /// the NUMBERth call of CALL, and waited for: a test's racing process
    /// at one exact point (a person's `mark` between the sweep's record and
    /// its marks, a link swapped in between the listing and the write),
    /// which a timed race hits a few times in 100,000.
    /// A SCRIPT that fails stops the run, so that a race that did not
    /// happen cannot pass. By `sh`, not executed itself: a test writes the
    /// script just before, and a child another thread of the test forks
    /// meanwhile can still hold it open for writing, which makes `execve`
    /// of the script fail with `ETXTBSY` (2 runs of the whole suite in
    /// about 10).
    fileprivate func performRaces(_ value: String) {
      let path = Array("PATH=".utf8) + (environmentValue("PATH") ?? Array("/usr/bin:/bin".utf8))
      for item in value.split(separator: ",") {
        let parts = item.split(separator: ":", maxSplits: 2)
        guard parts.count == 3, let call = SystemCall(rawValue: String(parts[0])),
          let number = Int(parts[1])
        else { fatalError("SKIPBACKUP_RACE: cannot read '\(item)'") }
        let script = String(parts[2])
        perform(before: call, number: number) {
          let result = Result { () throws(SkipBackupError) in
            try runProgram(
              "/bin/sh", arguments: [Array(script.utf8)], environment: [path])
          }
          switch result {
          case .success(let ran) where ran.status == 0: break
          case .success(let ran):
            fatalError(
              "SKIPBACKUP_RACE: \(script) exited \(ran.status): "
                + String(decoding: ran.errorOutput, as: UTF8.self))
          case .failure(let error): fatalError("SKIPBACKUP_RACE: \(script): \(error)")
          }
        }
      }
    }
  }

  private let mockingKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0)
    return key
  }()

  /// The driver `SKIPBACKUP_FORCE_ERRNO` or `SKIPBACKUP_RACE` installed,
  /// which every thread asks: a sweep marks from the walk's helper threads
  /// too. Set once at start-up, before any thread is started.
  nonisolated(unsafe) private var processDriver: MockingDriver?

  /// Serialises the threads' calls through ``processDriver``, a race's
  /// program included, so that the walk's other threads wait while it
  /// runs. Recursive, because that program is started through the
  /// `system_*` wrappers, which ask the driver again. Raw `pthread_mutex_*`
  /// calls: their wrappers would ask the driver too.
  nonisolated(unsafe) private let processDriverLock: UnsafeMutablePointer<pthread_mutex_t> = {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, CInt(PTHREAD_MUTEX_RECURSIVE))
    precondition(pthread_mutex_init(mutex, &attributes) == 0)
    pthread_mutexattr_destroy(&attributes)
    return mutex
  }()

  /// The errno forced on `call` by the current thread's driver, or else
  /// the process's, if any.
  @inline(__always)
  internal func mockedErrno(_ call: SystemCall) -> Errno? {
    if let driver = MockingDriver.current { return driver.intercept(call) }
    guard let driver = processDriver else { return nil }
    pthread_mutex_lock(processDriverLock)
    defer { pthread_mutex_unlock(processDriverLock) }
    return driver.intercept(call)
  }
#endif

/// In a debug build, forces the errors `SKIPBACKUP_FORCE_ERRNO` names on
/// the calling thread (``MockingDriver/installFromEnvironment()``); does
/// nothing in a release build.
package func installMockingFromEnvironment() {
  #if ENABLE_MOCKING
    MockingDriver.installFromEnvironment()
  #endif
}

/// Makes the raw call `body` for `call`; in a debug build under a
/// ``MockingDriver`` that forces an errno on `call`, returns -1 with that
/// errno set instead. Release builds inline it to `body()`.
@inline(__always)
internal func mocked<I: FixedWidthInteger>(_ call: SystemCall, _ body: () -> I) -> I {
  #if ENABLE_MOCKING
    if let forced = mockedErrno(call) {
      Glibc.errno = forced.rawValue
      return -1
    }
  #endif
  return body()
}

/// ``mocked(_:_:)`` for a call that returns its error number rather than
/// setting `errno` (`posix_spawn`, the `pthread` calls): under a driver that
/// forces an errno on `call`, that number.
@inline(__always)
internal func mockedReturningErrno(_ call: SystemCall, _ body: () -> CInt) -> CInt {
  #if ENABLE_MOCKING
    if let forced = mockedErrno(call) { return forced.rawValue }
  #endif
  return body()
}

/// ``mocked(_:_:)`` for a call that returns a pointer and `NULL` on failure
/// (`realpath`, `getcwd`): under a driver that forces an errno, `nil` with
/// that errno set.
@inline(__always)
internal func mocked<P>(
  _ call: SystemCall, _ body: () -> UnsafeMutablePointer<P>?
) -> UnsafeMutablePointer<P>? {
  #if ENABLE_MOCKING
    if let forced = mockedErrno(call) {
      Glibc.errno = forced.rawValue
      return nil
    }
  #endif
  return body()
}
