import ArgumentParser
import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let arguments = RawArguments.parserArguments
installMockingFromEnvironment()

// `check` in a shell loop: the common spellings skip the parser's start-up cost.
if let status = CheckCommand.fastExitStatus(arguments) {
  exit(status)
}

do {
  var command = try SkipBackupCommand.parseAsRoot(arguments)
  try command.run()
} catch {
  // check's contract is 2 for any error, a usage error too.
  if arguments.first == "check", SkipBackupCommand.exitCode(for: error) == .validationFailure {
    _ = OutputDescriptor.writeAll(
      SkipBackupCommand.fullMessage(for: error) + "\n", to: STDERR_FILENO)
    exit(2)
  }
  SkipBackupCommand.exit(withError: error)
}
