import ArgumentParser
import SkipBackupCore
import SkipBackupReport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let arguments = RawArguments.parserArguments
installMockingFromEnvironment()

// `check PATH...` in a shell loop skips the parser's start-up cost.
if let status = CheckCommand.fastExitStatus(arguments) {
  system_exit(status)
}

do {
  var command = try SkipBackupCommand.parseAsRoot(arguments)
  try command.run()
} catch let failure as ReportedFailure {
  // An engine's failure: reported already, line by line; only the status is left.
  system_exit(failure.status)
} catch {
  // check's contract is 2 for any error, a usage error too.
  if arguments.first == "check", SkipBackupCommand.exitCode(for: error) == .validationFailure {
    _ = OutputDescriptor.writeAll(
      SkipBackupCommand.fullMessage(for: error) + "\n", to: STDERR_FILENO)
    system_exit(2)
  }
  // Help, the version and a completion script: ArgumentParser would print
  // them through stdio and exit 0 even when they could not be written
  // (`--help >/dev/full`). They go through writeAll, and a failed write
  // ends the run as any other output failure does, with exit 1.
  if SkipBackupCommand.exitCode(for: error) == .success {
    // As print writes it: the message and a newline; none for a command
    // that ends with its status alone (`check`'s ExitCode(0)), whose
    // message is empty.
    let message = SkipBackupCommand.fullMessage(for: error)
    if !message.isEmpty,
      case .failure(let errno) = OutputDescriptor.writeAll(message + "\n", to: STDOUT_FILENO)
    {
      OutputFailure.end(errno)
    }
    system_exit(0)
  }
  // A usage error, on standard error as the parser would print it. A value
  // that is not UTF-8 reached the parser as a placeholder: displayed()
  // shows its bytes, escaped, instead, and leaves any other text as it is.
  let message = SkipBackupCommand.fullMessage(for: error)
  if !message.isEmpty {
    _ = OutputDescriptor.writeAll(RawArguments.displayed(message) + "\n", to: STDERR_FILENO)
  }
  system_exit(SkipBackupCommand.exitCode(for: error).rawValue)
}
