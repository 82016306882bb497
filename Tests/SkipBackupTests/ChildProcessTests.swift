import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The programs the library runs (git, for sweep's gitignore rule): found
/// on `PATH` by its bytes, and every call that starts and waits for them
/// one that a forced errno reaches.
@Suite(.onTestThreads) struct ChildProcessTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  /// A `PATH` entry is a path, bytes that need not be UTF-8: decoded as
  /// text, `bin\xff` became `bin\u{FFFD}`, a directory that is not there.
  @Test func aProgramIsFoundInADirectoryWhoseNameIsNotUTF8() throws {
    let directory = Array(tree.path.utf8) + Array("/bin".utf8) + [0xFF]
    let program = directory + Array("/hello".utf8)
    // Foundation's paths are Strings: the tree is made with the C calls.
    #expect(FilePath(bytes: directory).withPlatformString { mkdir($0, 0o755) } == 0)
    let script = Array("#!/bin/sh\necho hello\n".utf8)
    // Close-on-exec: a program another test starts meanwhile would hold the
    // descriptor open for writing, and exec of the script fail with ETXTBSY.
    let descriptor = FilePath(bytes: program).withPlatformString {
      open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    }
    #expect(descriptor >= 0)
    #expect(script.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == script.count)
    close(descriptor)
    let search = Array("/nonexistent-skipbackup:".utf8) + directory + Array(":/usr/bin".utf8)
    #expect(findProgram(Array("hello".utf8), searching: search) == FilePath(bytes: program))
    #expect(
      findProgram(Array("hello".utf8), searching: Array("/nonexistent-skipbackup".utf8)) == nil)
    let ran = try runProgram(FilePath(bytes: program), arguments: [], environment: [])
    #expect(ran.status == 0)
    #expect(ran.output == Array("hello\n".utf8))
  }

  #if ENABLE_MOCKING
    /// Starting the program, and waiting for it, fail as the kernel's
    /// refusal would: an error naming the program and the call.
    @Test(arguments: [
      SystemCall.pipe2, .posixSpawnFileActionsInit, .posixSpawnFileActionsAddopen,
      .posixSpawnFileActionsAdddup2, .posixSpawn, .waitpid,
    ])
    func aFailureToStartOrWaitNamesTheCall(_ call: SystemCall) {
      let result = MockingDriver.withMocking { driver in
        driver.force(.ioError, on: call, times: 1)
        return Result { () throws(SkipBackupError) in
          try runProgram("/bin/true", arguments: [], environment: [])
        }
      }
      guard case .failure(let error) = result else {
        Issue.record("\(call): the program ran: \(result)")
        return
      }
      #expect(error.cause == .failed(call, .ioError))
      #expect(error.path == "/bin/true")
    }
  #endif
}
