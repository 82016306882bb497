import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a program run by ``runProgram(_:arguments:)`` wrote and how it ended.
package struct ProgramResult: Sendable {
  /// The exit status, or 128 plus the signal that ended it.
  package var status: CInt
  package var output: [UInt8]
  package var errorOutput: [UInt8]
}

/// The value of the environment variable `name`, as bytes (a path in it
/// need not be UTF-8); `nil` when it is not set.
///
/// The corresponding C function is `getenv(3)`.
package func environmentValue(_ name: String) -> [UInt8]? {
  system_getenv(name).map { bytes(ofCString: $0) }
}

/// The first file called `name` in the directories of `search` (`PATH`'s
/// value, by default) that this process may execute, as a shell finds it;
/// `nil` when there is none. The entries are bytes, as every path: a
/// directory whose name is not UTF-8 is searched.
///
/// The corresponding C functions are `access(2)` and `fstatat(2)`.
package func findProgram(
  _ name: [UInt8], searching search: [UInt8]? = environmentValue("PATH")
) -> FilePath? {
  guard let path = search else { return nil }
  for directory in path.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
    let candidate =
      (directory.isEmpty ? [UInt8(ascii: ".")] : Array(directory)) + [UInt8(ascii: "/")] + name
    let found = withCString(bytes: candidate) { candidate in
      var status = stat()
      return valueOrErrno { system_access(candidate, X_OK) }.isSuccess
        && valueOrErrno { system_fstatat(AT_FDCWD, candidate, &status, 0) }.isSuccess
        && status.st_mode & S_IFMT == S_IFREG
    }
    if found { return FilePath(bytes: candidate) }
  }
  return nil
}

/// Runs `program` with `arguments`, its standard input `/dev/null`, and
/// collects what it writes on standard output and standard error, both
/// read as they come (a `poll` loop), so that neither pipe fills up.
/// `environment` (`NAME=value` each) is all the program gets: nothing of
/// this process's own environment is passed on.
///
/// The corresponding C functions are `pipe2(2)`, `posix_spawn(3)`,
/// `poll(2)` and `waitpid(2)`.
package func runProgram(
  _ program: FilePath, arguments: [[UInt8]], environment: [[UInt8]]
) throws(SkipBackupError) -> ProgramResult {
  func spawnStep(_ call: SystemCall, _ code: CInt) throws(SkipBackupError) {
    guard code == 0 else { throw SkipBackupError(call, Errno(returned: code), path: program) }
  }
  var outPipe: [CInt] = [-1, -1]
  var errPipe: [CInt] = [-1, -1]
  _ = try valueOrErrno { system_pipe2(&outPipe, O_CLOEXEC) }.get(.pipe2, program)
  defer { for fd in outPipe where fd >= 0 { _ = system_close(fd) } }
  _ = try valueOrErrno { system_pipe2(&errPipe, O_CLOEXEC) }.get(.pipe2, program)
  defer { for fd in errPipe where fd >= 0 { _ = system_close(fd) } }

  var actions = posix_spawn_file_actions_t()
  try spawnStep(.posixSpawnFileActionsInit, system_posix_spawn_file_actions_init(&actions))
  defer { system_posix_spawn_file_actions_destroy(&actions) }
  try spawnStep(
    .posixSpawnFileActionsAddopen,
    system_posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0))
  try spawnStep(
    .posixSpawnFileActionsAdddup2, system_posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1))
  try spawnStep(
    .posixSpawnFileActionsAdddup2, system_posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2))

  let path = program.bytes
  let argv = CStringArray([path] + arguments)
  let envp = CStringArray(environment)
  var pid = pid_t()
  try spawnStep(
    .posixSpawn,
    system_posix_spawn(&pid, argv.pointers[0]!, &actions, argv.pointers, envp.pointers))
  _ = system_close(outPipe[1])
  outPipe[1] = -1
  _ = system_close(errPipe[1])
  errPipe[1] = -1

  var result = ProgramResult(status: 0, output: [], errorOutput: [])
  var open = [true, true]
  var buffer = [UInt8](repeating: 0, count: 64 * 1024)
  while open[0] || open[1] {
    var fds = [
      pollfd(fd: open[0] ? outPipe[0] : -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: open[1] ? errPipe[0] : -1, events: Int16(POLLIN), revents: 0),
    ]
    guard case .success = valueOrErrno({ system_poll(&fds, 2, -1) }) else { break }
    for index in 0..<2 where open[index] && fds[index].revents != 0 {
      let read = buffer.withUnsafeMutableBytes { buffer in
        valueOrErrno { system_read(fds[index].fd, buffer.baseAddress, buffer.count) }
      }
      switch read {
      case .success(let count) where count > 0:
        if index == 0 {
          result.output += buffer[..<count]
        } else {
          result.errorOutput += buffer[..<count]
        }
      case .success, .failure: open[index] = false
      }
    }
  }
  var status: CInt = 0
  if case .failure(let errno) = valueOrErrno({ system_waitpid(pid, &status, 0) }) {
    // A child never waited for stays this process's zombie for as long as
    // it lives, and a caller that waits for any child meets it forever
    // (swift-testing's exit-test monitor spun on one at 100 % CPU): ended
    // and reaped before the failure is reported.
    _ = system_kill(pid, SIGKILL)
    _ = valueOrErrno { system_waitpid(pid, &status, 0) }
    throw SkipBackupError(.waitpid, errno, path: program)
  }
  // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
  if status & 0x7F == 0 {
    result.status = (status >> 8) & 0xFF
  } else {
    result.status = 128 + (status & 0x7F)
  }
  return result
}

/// NUL-terminated copies of byte strings and the `NULL`-terminated array of
/// pointers to them that `posix_spawn(3)` takes as `argv` and `envp`, held
/// in memory of Swift's own for as long as the value lives.
package struct CStringArray: ~Copyable {
  package let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

  package init(_ strings: [[UInt8]]) {
    pointers = .allocate(capacity: strings.count + 1)
    for (index, string) in strings.enumerated() {
      let copy = UnsafeMutablePointer<CChar>.allocate(capacity: string.count + 1)
      string.withUnsafeBytes { bytes in
        guard let start = bytes.baseAddress else { return }
        UnsafeMutableRawPointer(copy).copyMemory(from: start, byteCount: bytes.count)
      }
      copy[string.count] = 0
      pointers[index] = copy
    }
    pointers[strings.count] = nil
  }

  deinit {
    var index = 0
    while let string = pointers[index] {
      string.deallocate()
      index += 1
    }
    pointers.deallocate()
  }
}

/// Calls `body` with `bytes` as a C string.
package func withCString<R>(bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
  (bytes + [0]).withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
}

extension Result {
  /// Whether the call succeeded.
  package var isSuccess: Bool {
    if case .success = self { return true }
    return false
  }
}

extension CStringArray {
  /// Replaces this process with the program its first string names, found
  /// in `PATH` as a shell finds it, given all its strings as arguments
  /// (`execvp(3)`); returns only when that failed, with the reason.
  package func replaceProcess() -> Errno {
    switch valueOrErrno({ system_execvp(pointers[0]!, pointers) }) {
    case .success: return .ioError  // execvp returns only with -1
    case .failure(let errno): return errno
    }
  }
}
