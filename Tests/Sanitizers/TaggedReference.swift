// The evidence for OutputFile's shape (Sources/SkipBackupExport/OutputFile.swift):
// a class instance held only in an enum of two payloads, or only in an
// optional, while the process exits. Built with -sanitize=address by
// Tests/Sanitizers/tagged-reference.
import Glibc

final class Payload { var bytes = [UInt8](repeating: 1, count: 300) }
enum TwoWays {
  case number(CInt)
  case object(Payload)
}

@inline(never) func end(_ inEnum: TwoWays, _ inOptional: Payload?) -> Never { exit(0) }

@inline(never) func hold(_ kind: String) {
  let inEnum: TwoWays = kind == "enum" ? .object(Payload()) : .number(3)
  let inOptional: Payload? = kind == "optional" ? Payload() : nil
  end(inEnum, inOptional)
}

hold(CommandLine.arguments.dropFirst().first ?? "enum")
