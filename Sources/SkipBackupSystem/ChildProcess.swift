// swift-format-ignore-file: AlwaysUseLowerCamelCase
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

/// The first file called `name` on `PATH` that this process may execute,
/// as a shell finds it; `nil` when there is none.
///
/// The corresponding C function is `access(2)`.
package func findProgram(_ name: String) -> FilePath? {
  guard let variable = system_getenv("PATH") else { return nil }
  let path = String(cString: variable)
  for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
    let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
    if candidate.withCString({ system_access($0, X_OK) }) == 0 {
      var status = stat()
      if candidate.withCString({ system_stat($0, &status) }) == 0,
        status.st_mode & S_IFMT == S_IFREG
      {
        return FilePath(candidate)
      }
    }
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
  func failure(_ call: SystemCall) -> SkipBackupError {
    SkipBackupError(call, Errno.current, path: program)
  }
  var outPipe: [CInt] = [-1, -1]
  var errPipe: [CInt] = [-1, -1]
  guard system_pipe2(&outPipe, O_CLOEXEC) == 0 else { throw failure(.pipe2) }
  defer { for fd in outPipe where fd >= 0 { _ = system_close(fd) } }
  guard system_pipe2(&errPipe, O_CLOEXEC) == 0 else { throw failure(.pipe2) }
  defer { for fd in errPipe where fd >= 0 { _ = system_close(fd) } }

  var actions = posix_spawn_file_actions_t()
  _ = system_posix_spawn_file_actions_init(&actions)
  defer { _ = system_posix_spawn_file_actions_destroy(&actions) }
  _ = system_posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  _ = system_posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
  _ = system_posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

  let programBytes = program.withCString {
    Array(UnsafeBufferPointer(start: $0, count: strlen($0) + 1))
  }
  var argv: [UnsafeMutablePointer<CChar>?] = []
  argv.append(programBytes.withUnsafeBufferPointer { system_strdup($0.baseAddress!) })
  argv += arguments.map(cStringCopy)
  argv.append(nil)
  defer { for pointer in argv { system_free(pointer) } }
  var envp = environment.map(cStringCopy)
  envp.append(nil)
  defer { for pointer in envp { system_free(pointer) } }

  var pid = pid_t()
  let spawned = programBytes.withUnsafeBufferPointer { path in
    envp.withUnsafeMutableBufferPointer { envp in
      system_posix_spawn(&pid, path.baseAddress!, &actions, argv, envp.baseAddress)
    }
  }
  guard spawned == 0 else {
    throw SkipBackupError(.posixSpawn, Errno(returned: spawned), path: program)
  }
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
    let ready = system_poll(&fds, 2, -1)
    if ready < 0 {
      if Errno.current == .interrupted { continue }
      break
    }
    for index in 0..<2 where open[index] && fds[index].revents != 0 {
      let count = buffer.withUnsafeMutableBytes {
        system_read(fds[index].fd, $0.baseAddress, $0.count)
      }
      if count > 0 {
        if index == 0 {
          result.output += buffer[..<count]
        } else {
          result.errorOutput += buffer[..<count]
        }
      } else if count == 0 || Errno.current != .interrupted {
        open[index] = false
      }
    }
  }
  var status: CInt = 0
  while system_waitpid(pid, &status, 0) < 0 {
    if Errno.current != .interrupted { throw failure(.waitpid) }
  }
  // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
  if status & 0x7F == 0 {
    result.status = (status >> 8) & 0xFF
  } else {
    result.status = 128 + (status & 0x7F)
  }
  return result
}

/// A C string holding `bytes`, to give back with ``system_free(_:)``.
package func cStringCopy(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
  (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
    system_strdup($0.baseAddress!)
  }
}

// MARK: - The raw calls (kept beside their one user, out of Syscalls.swift's way)

/// The corresponding C function is `strdup(3)`.
internal func system_strdup(_ string: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? {
  strdup(string)
}

/// The corresponding C function is `free(3)`.
package func system_free(_ pointer: UnsafeMutableRawPointer?) {
  free(pointer)
}

/// The corresponding C function is `access(2)`.
internal func system_access(_ path: UnsafePointer<CChar>, _ mode: CInt) -> CInt {
  access(path, mode)
}

/// The corresponding C function is `stat(2)`.
internal func system_stat(_ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<stat>)
  -> CInt
{
  stat(path, buffer)
}

/// The corresponding C function is `waitpid(2)`.
package func system_waitpid(_ pid: pid_t, _ status: UnsafeMutablePointer<CInt>, _ options: CInt)
  -> pid_t
{
  waitpid(pid, status, options)
}

/// The corresponding C function is `posix_spawn(3)`.
internal func system_posix_spawn(
  _ pid: UnsafeMutablePointer<pid_t>, _ path: UnsafePointer<CChar>,
  _ actions: UnsafePointer<posix_spawn_file_actions_t>,
  _ argv: [UnsafeMutablePointer<CChar>?],
  _ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  var argv = argv
  return posix_spawn(pid, path, actions, nil, &argv, environment)
}

/// The corresponding C function is `posix_spawn_file_actions_init(3)`.
internal func system_posix_spawn_file_actions_init(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>
) -> CInt {
  posix_spawn_file_actions_init(actions)
}

/// The corresponding C function is `posix_spawn_file_actions_destroy(3)`.
internal func system_posix_spawn_file_actions_destroy(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>
) -> CInt {
  posix_spawn_file_actions_destroy(actions)
}

/// The corresponding C function is `posix_spawn_file_actions_addopen(3)`.
internal func system_posix_spawn_file_actions_addopen(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: CInt,
  _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t
) -> CInt {
  posix_spawn_file_actions_addopen(actions, fd, path, flags, mode)
}

/// The corresponding C function is `posix_spawn_file_actions_adddup2(3)`.
internal func system_posix_spawn_file_actions_adddup2(
  _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: CInt, _ target: CInt
) -> CInt {
  posix_spawn_file_actions_adddup2(actions, fd, target)
}
