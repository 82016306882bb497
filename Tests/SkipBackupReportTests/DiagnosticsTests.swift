// Messages for a person, in process: one line a failure naming the path,
// with the kernel's reason as Python's os.strerror gives it, counted for
// the exit status; after the output they follow; the progress line erased
// first on a terminal.

import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupReport

@Suite(.onTestThreads) struct DiagnosticsTests {
  /// Each failure is one line, `skipbackup: PATH: reason`, the path escaped
  /// and the errno's text Python's `os.strerror`; a symbolic link refused
  /// says how to act on its target. Failures are counted, notes are not,
  /// and the summary of `-v` ends with the count.
  @Test func aFailureIsOneLineNamingThePathAndIsCounted() throws {
    let tree = try TemporaryDirectory()
    let missing = FilePath(tree.path + "/gone\u{1b}[2J")
    let link = FilePath(tree.path + "/link")
    try #require(symlink("gone", link.string) == 0)
    let captured = try CapturedStreams()
    let diagnostics = Diagnostics(
      streams: Streams(output: captured.output, errors: captured.errors))

    let gone = try #require(throws: SkipBackupError.self) { try FileItem(path: missing).status() }
    diagnostics.report(gone)
    diagnostics.report(
      SkipBackupError(refusing: .symbolicLinkNotFollowed, path: link, fileType: .symbolicLink))
    diagnostics.note("a note")
    diagnostics.summarize(["marked 2"], notEntered: 1, vanished: 3)
    #expect(diagnostics.failures == 2)

    let reason = python("import os; print(os.strerror(2))", []).first!
    let lines = captured.errorLines
    #expect(lines.count == 4, "\(captured.description)")
    #expect(lines.first?.hasPrefix("skipbackup: \(tree.path)/gone\\x1b[2J: ") == true)
    #expect(lines.first?.hasSuffix(": \(reason))") == true, "\(lines)")
    #expect(
      lines.dropFirst().first
        == "skipbackup: \(tree.path)/link: Linux keeps no user extended attributes on symbolic "
        + "links; -L (--dereference) acts on the link's target")
    #expect(
      Array(lines.dropFirst(2))
        == [
          "skipbackup: a note",
          "skipbackup: marked 2, not entered 1 (other filesystems), vanished 3, errors 2",
        ])
    #expect(captured.outputBytes == [])
  }

  /// A message reported after output comes after it where both go to one
  /// place (`2>&1`): what the buffer holds is written first.
  @Test func aMessageComesAfterTheOutputItFollows() throws {
    let captured = try CapturedStreams()
    let both = Streams(output: captured.output, errors: captured.output)
    let diagnostics = Diagnostics(streams: both)
    let output = Output(sink: diagnostics.outputSink)
    output.write("first\n")
    output.endRecord()
    diagnostics.report("the failure", after: output)
    output.write("second\n")
    output.flush()
    #expect(captured.outputLines == ["first", "skipbackup: the failure", "second"])
  }

  /// On a terminal, a long run's progress line (after a second) is erased
  /// before a message, so that the message starts its own line; on a file
  /// there is no progress line at all.
  @Test func theProgressLineIsErasedBeforeAMessage() throws {
    let captured = try CapturedStreams()
    #expect(!Progress(enabled: true, streams: Streams(errors: captured.errors)).isEnabled)
    let terminal = PseudoTerminal()
    let streams = Streams(output: captured.output, errors: terminal.terminal)
    let progress = Progress(enabled: true, streams: streams)
    #expect(progress.isEnabled)
    #expect(!Progress(enabled: false, streams: streams).isEnabled)
    let diagnostics = Diagnostics(streams: streams, progress: progress)
    // The line appears only once the run has taken a second.
    progress.add(1000)
    usleep(1_100_000)
    progress.add(1234)
    diagnostics.report("the failure")
    progress.erase()
    let screen = String(decoding: terminal.read(), as: UTF8.self)
    let drawn = try #require(
      screen.wholeMatch(
        of: /\rskipbackup: 2,234 items, ([0-9,]+) items\/s\e\[K\r\e\[Kskipbackup: the failure\n/),
      "\(screen.debugDescription)")
    #expect(Int(drawn.1.filter { $0 != "," })! > 0)
  }
}
