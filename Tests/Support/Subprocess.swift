import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What a finished process left: its exit status and its output, as bytes.
public struct ProcessResult: Sendable, CustomStringConvertible {
  public var status: Int32
  public var standardOutput: [UInt8]
  public var standardError: [UInt8]

  public var output: String { String(decoding: standardOutput, as: UTF8.self) }
  public var errors: String { String(decoding: standardError, as: UTF8.self) }
  /// Standard output split into lines, without the empty last one.
  public var lines: [String] {
    output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }
  /// Standard output split at NUL bytes, as byte strings.
  public var nulSeparated: [[UInt8]] { standardOutput.split(separator: 0).map(Array.init) }

  public var description: String {
    "exit \(status)\n--- stdout\n\(output)--- stderr\n\(errors)"
  }
}

/// An argument, byte for byte: text or arbitrary bytes.
public struct Argument: ExpressibleByStringLiteral, Sendable {
  public var bytes: [UInt8]
  public init(stringLiteral value: String) { bytes = Array(value.utf8) }
  public init(_ text: String) { bytes = Array(text.utf8) }
  public init(bytes: [UInt8]) { self.bytes = bytes }
}

/// Runs a program found on PATH with exact argument bytes, and waits for it.
///
/// Output goes to files, not pipes, so that a large output never blocks.
/// With `asNobody` the program runs as the unprivileged user nobody, through
/// `setpriv`: root bypasses permission checks, so `EACCES` needs another user.
/// `environment` adds variables to the inherited environment, or replaces
/// them; the program itself is still found on this process's `PATH`.
public func run(
  _ arguments: [Argument], input: [UInt8] = [], asNobody: Bool = false,
  directory: String? = nil, environment: [String: String] = [:]
) -> ProcessResult {
  // The streams are files in memory: a scratch directory in /tmp a call
  // (four inodes made and deleted, some 17,000 times a run) had ext4's
  // inode allocator scan past the recently deleted ones, a tenth of the
  // suite's CPU (perf: find_inode_bit, recently_deleted).
  let standardInput = memoryFile("stdin", holding: input)
  let standardOutput = memoryFile("stdout")
  let standardError = memoryFile("stderr")
  defer { for descriptor in [standardInput, standardOutput, standardError] { close(descriptor) } }
  var argv: [[UInt8]] = arguments.map(\.bytes)
  if asNobody {
    let prefix: [String] = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    argv = prefix.map { Array($0.utf8) } + argv
  }
  // nobody starts in / unless told otherwise: the test's own directory may
  // be closed to others (a clone under `mktemp -d`).
  if let directory = directory ?? (asNobody ? "/" : nil) {
    argv = [Array("env".utf8), Array("-C".utf8), Array(directory.utf8)] + argv
  }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
  posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
  posix_spawn_file_actions_adddup2(&actions, standardError, 2)
  let cStrings = argv.map { bytes in strdup(bytes.map { CChar(bitPattern: $0) } + [0]) }
  defer { for string in cStrings { free(string) } }
  var pointers = cStrings + [nil]
  // Inherited variables are passed as they are, bytes and all; overrides are added.
  var environmentPointers: [UnsafeMutablePointer<CChar>?] = []
  var entry = environ
  while let variable = entry.pointee {
    let name = String(
      decoding: UnsafeRawBufferPointer(start: variable, count: strcspn(variable, "=")),
      as: UTF8.self)
    if environment[name] == nil { environmentPointers.append(variable) }
    entry += 1
  }
  let overrides = environment.map { strdup("\($0.key)=\($0.value)") }
  defer { for pointer in overrides { free(pointer) } }
  environmentPointers += overrides + [nil]
  var pid: pid_t = 0
  let spawned = posix_spawnp(&pid, pointers[0]!, &actions, nil, &pointers, &environmentPointers)
  // A program that is not installed fails the test that runs it, as a
  // shell says so (exit 127), not the whole run.
  guard spawned == 0 else {
    let program = String(decoding: argv[0], as: UTF8.self)
    return ProcessResult(
      status: 127, standardOutput: [],
      standardError: Array("cannot start \(program): \(String(cString: strerror(spawned)))\n".utf8))
  }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  let exited = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  return ProcessResult(
    status: exited, standardOutput: contents(of: standardOutput),
    standardError: contents(of: standardError))
}

/// A file in memory (on /dev/shm's tmpfs, unlinked at once), closed on
/// exec, holding `bytes` and read from its start.
private func memoryFile(_ name: String, holding bytes: [UInt8] = []) -> CInt {
  // O_CLOEXEC at the open itself: another test thread may be starting a
  // program at this instant, which must not inherit the file.
  var descriptor: CInt = -1
  repeat {
    let path = "/dev/shm/skipbackup-test-\(name)-\(UInt64.random(in: 0...UInt64.max))"
    descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    if descriptor >= 0 { unlink(path) }
  } while descriptor < 0 && errno == EEXIST
  precondition(descriptor >= 0, "cannot create a file in /dev/shm: \(errno)")
  var written = 0
  while written < bytes.count {
    let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    precondition(count > 0, "cannot write a memory file: \(errno)")
    written += count
  }
  lseek(descriptor, 0, SEEK_SET)
  return descriptor
}

/// Everything in the memory file `descriptor`, from its start.
private func contents(of descriptor: CInt) -> [UInt8] {
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  var offset: off_t = 0
  while true {
    let count = buffer.withUnsafeMutableBytes {
      pread(descriptor, $0.baseAddress, $0.count, offset)
    }
    guard count > 0 else { break }
    bytes += buffer[..<count]
    offset += off_t(count)
  }
  return bytes
}

/// How many times longer the tool, built beside the test bundle with the
/// same sanitizer, may take than a build without one: a time limit that
/// says a run is linear is multiplied by it. The factors are LLVM's own
/// figures for the slowdown, ThreadSanitizer's "5x-15x" (its upper end)
/// and AddressSanitizer's "2x" (clang.llvm.org/docs); which runtime is
/// linked in is asked of the runtime itself.
public let sanitizerSlowdown: Double =
  if dlsym(nil, "__tsan_init") != nil { 15 } else if dlsym(nil, "__asan_init") != nil { 2 } else {
    1
  }

/// The environment to run the tool in under strace: LeakSanitizer stops
/// the process's threads with ptrace(2) at exit, which a traced process
/// cannot take ("LeakSanitizer has encountered a fatal error", its hint
/// "does not work under ptrace"), so leaks go unchecked there; ASan's other
/// checks stay on.
public var environmentUnderStrace: [String: String] {
  let inherited = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
  return ["ASAN_OPTIONS": inherited + "detect_leaks=0"]
}

/// The skipbackup tool built beside the test bundle.
public let skipbackupPath: String = toolDirectory + "/skipbackup"

/// The library probe built beside the test bundle (Tests/Probe).
public let probePath: String = toolDirectory + "/skipbackup-probe"

/// The directory of the tool and the probe: where they were built, or,
/// when a directory above that one is closed to others (a clone under
/// `mktemp -d`, mode 0700), a copy of both in a directory of their own
/// under /tmp, so that the tests that run them as nobody can.
private let toolDirectory: String = {
  let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  let built = executable.deletingLastPathComponent().path
  precondition(
    FileManager.default.isExecutableFile(atPath: built + "/skipbackup"),
    "build the tool first: swift build --build-tests")
  var directory = built
  while directory != "/" {
    var status = stat()
    guard stat(directory, &status) == 0, status.st_mode & S_IXOTH != 0 else {
      return copyForEveryone(from: built)
    }
    directory = (directory as NSString).deletingLastPathComponent
  }
  return built
}()

private func copyForEveryone(from built: String) -> String {
  let copy = try! TemporaryDirectory(prefix: "skipbackup-tools")
  // By cp, so that no descriptor of ours is open on a copy for writing when
  // another test thread forks: its exec would fail with ETXTBSY.
  let copied = run([
    "cp", Argument(built + "/skipbackup"), Argument(built + "/skipbackup-probe"),
    Argument(copy.path),
  ])
  precondition(copied.status == 0, "cannot copy the tool for nobody: \(copied)")
  toolCopy = copy
  // Removed when the test process ends: a global's deinit never runs.
  atexit { toolCopy = nil }
  return copy.path
}

nonisolated(unsafe) private var toolCopy: TemporaryDirectory?

/// Runs the library probe: one library call in its own process.
public func probe(_ arguments: Argument..., asNobody: Bool = false) -> ProcessResult {
  run([Argument(probePath)] + arguments, asNobody: asNobody)
}

/// Runs the skipbackup tool.
public func skipbackup(
  _ arguments: Argument..., input: [UInt8] = [], asNobody: Bool = false, directory: String? = nil
) -> ProcessResult {
  run(
    [Argument(skipbackupPath)] + arguments, input: input, asNobody: asNobody, directory: directory)
}

/// Runs the skipbackup tool with an argument array.
public func skipbackup(
  arguments: [Argument], input: [UInt8] = [], asNobody: Bool = false, directory: String? = nil
) -> ProcessResult {
  run(
    [Argument(skipbackupPath)] + arguments, input: input, asNobody: asNobody, directory: directory)
}

/// Runs `body` on a thread of its own, outside Swift's cooperative pool, so
/// that it truly runs beside the test; `wait()` joins it.
public final class BackgroundThread: Sendable {
  private let finished = Finished()

  private final class Finished: @unchecked Sendable {
    let condition = NSCondition()
    var done = false
  }

  public init(_ body: @escaping @Sendable () -> Void) {
    let finished = self.finished
    Thread {
      body()
      finished.condition.lock()
      finished.done = true
      finished.condition.signal()
      finished.condition.unlock()
    }.start()
  }

  public func wait() {
    finished.condition.lock()
    while !finished.done { finished.condition.wait() }
    finished.condition.unlock()
  }
}

/// Debian's Python, by its path when it is there. A version manager's shim
/// first on PATH is a shell script that starts a dozen programs: pyenv's took
/// 147 ms a start here against 19 ms for /usr/bin/python3, and CLITests alone
/// start Python about 700 times.
public let python3: Argument =
  FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
