import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where a run writes: `output`, what the command prints (a listing, a
/// report, an exclusion file), and `errors`, its diagnostics and progress
/// line. Descriptors the run writes to and never closes; a test gives a
/// file, a pipe or a pseudo-terminal of its own.
///
/// Whether each is a terminal is asked once, here: a terminal gets names
/// escaped (``Output/escapesNames``) and, on `errors`, the progress line.
package struct Streams: Sendable, Equatable {
  package let output: CInt
  package let errors: CInt
  package let outputIsTerminal: Bool
  package let errorsAreTerminal: Bool

  package init(output: CInt = STDOUT_FILENO, errors: CInt = STDERR_FILENO) {
    self.output = output
    self.errors = errors
    outputIsTerminal = system_isatty(output) == 1
    errorsAreTerminal = system_isatty(errors) == 1
  }

  /// The process's standard output and standard error.
  package static var standard: Streams { Streams() }

  /// These streams with the output on `descriptor` instead (`export -o`).
  package func writingOutput(to descriptor: CInt) -> Streams {
    Streams(
      output: descriptor, errors: errors, outputIsTerminal: system_isatty(descriptor) == 1,
      errorsAreTerminal: errorsAreTerminal)
  }

  private init(output: CInt, errors: CInt, outputIsTerminal: Bool, errorsAreTerminal: Bool) {
    self.output = output
    self.errors = errors
    self.outputIsTerminal = outputIsTerminal
    self.errorsAreTerminal = errorsAreTerminal
  }
}
