// The output every command prints through, in process: escaping on a
// terminal (a pseudo-terminal the kernel says is one) against Python's own
// reading of the bytes, whole records from threads that share a
// descriptor, few writes, and the end of a run whose output fails.

import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupReport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct OutputTests {
  /// Names that write the clipboard (OSC 52), retitle the window (OSC 0,
  /// and its C1 form), clear the screen, and generated ones.
  static let names: [[UInt8]] = {
    var generator = ByteStringGenerator(state: 29)
    let hostile = [
      "clip\u{1b}]52;c;cHduZWQ=\u{07}", "title\u{1b}]0;pwned\u{07}", "c1\u{9d}0;pwned\u{9c}",
      "clear\u{1b}[2J", "tab\tnl\ncr\r", "del\u{7f}", "\u{e9}t\u{e9} \u{65e5}\u{672c}",
    ].map { Array($0.utf8) }
    // No slash: a FilePath makes `a//b` `a/b`.
    return hostile
      + (0..<400).map { _ in generator.bytes(slash: false) }.filter {
        !$0.isEmpty && !$0.contains(0)
      }
  }()

  /// Python's reading of a name for a terminal, written without this
  /// project's code: UTF-8 kept, each byte that is not UTF-8 as `\xNN`,
  /// `\n`, `\t`, `\r`, the other C0 controls and DEL as `\xNN`, and a C1
  /// control as its two bytes.
  static let pythonEscape = #"""
    import sys, base64
    for line in sys.stdin:
        text = base64.b64decode(line).decode("utf-8", "surrogateescape")
        shown = ""
        for c in text:
            o = ord(c)
            if 0xDC80 <= o <= 0xDCFF: shown += "\\x%02x" % (o - 0xDC00)
            elif c == "\n": shown += "\\n"
            elif c == "\t": shown += "\\t"
            elif c == "\r": shown += "\\r"
            elif o < 0x20 or o == 0x7F: shown += "\\x%02x" % o
            elif 0x80 <= o <= 0x9F: shown += "\\xc2\\x%02x" % o
            else: shown += c
        print(base64.b64encode(shown.encode("utf-8", "surrogateescape")).decode())
    """#

  /// On a terminal each name is shown as Python's reading escapes it, so
  /// that no control character reaches the screen; NUL-ended records
  /// (`-0`) are for programs and keep their bytes there too. On a file
  /// every record is its bytes.
  @Test func namesAreEscapedOnATerminalAndByteExactElsewhere() throws {
    let terminal = PseudoTerminal()
    let shown = Output(streams: Streams(output: terminal.terminal))
    #expect(shown.escapesNames)
    for name in Self.names {
      shown.writeName(name)
      shown.write(UInt8(ascii: "\n"))
      shown.endRecord()
    }
    shown.flush()
    let screen = terminal.read()
    let expected = python(Self.pythonEscape, Self.names).map { base64Decoded($0[...])! }
    let lines = screen.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    #expect(lines.count == expected.count + 1)
    let wrong = zip(lines, expected).filter { Array($0) != $1 }.map {
      String(decoding: $0.0, as: UTF8.self).debugDescription
    }
    #expect(wrong.isEmpty, "\(wrong.count) names shown otherwise, as \(wrong.prefix(3))")
    #expect(!screen.contains(0x1B) && !screen.contains(0x07))

    for name in Self.names {
      shown.write(FilePath(bytes: name), terminator: 0)
    }
    shown.flush()
    #expect(terminal.read() == Array(Self.names.map { $0 + [0] }.joined()), "-0 on a terminal")

    let captured = try CapturedStreams()
    let piped = Output(streams: Streams(output: captured.output))
    #expect(!piped.escapesNames)
    for name in Self.names {
      piped.write(FilePath(bytes: name), terminator: UInt8(ascii: "\n"))
    }
    piped.flush()
    #expect(captured.outputBytes == Array(Self.names.map { $0 + [10] }.joined()), "on a file")
  }

  /// A buffer goes out once it holds 64 KiB, at the end of the record that
  /// filled it: 200,000 bytes in 100-byte records are four writes, none
  /// before 64 KiB.
  @Test func aBufferGoesOutAtTheEndOfARecordOnceFull() throws {
    let captured = try CapturedStreams()
    let record = [UInt8](repeating: UInt8(ascii: "r"), count: 99) + [10]
    MockingDriver.withMocking { driver in
      let output = Output(streams: Streams(output: captured.output))
      for index in 0..<2000 {
        output.write(record)
        output.endRecord()
        if index == 654 { #expect(driver.calls[.write] == nil, "655 records are 65,500 bytes") }
        if index == 655 { #expect(driver.calls[.write] == 1, "656 are 65,600") }
      }
      output.flush()
      #expect(driver.calls[.write] == 4)
    }
    #expect(captured.outputBytes == Array(repeating: record, count: 2000).joined().map { $0 })
  }

  /// Walk threads each fill their own buffer and share the run's sink: on
  /// a pipe, which takes no more than 4 KiB in one piece, every line read
  /// is whole, one thread's, and every line written is read.
  @Test func threadsSharingASinkNeverMixTheirLines() throws {
    var ends: [CInt] = [0, 0]
    try #require(pipe(&ends) == 0)
    let (reading, writing) = (ends[0], ends[1])
    let sink = OutputSink(Streams(output: writing))
    let collected = Collected()
    let reader = BackgroundThread {
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        collected.append(buffer[..<count])
      }
    }
    let writers = (0..<4).map { thread in
      BackgroundThread {
        let output = Output(sink: sink)
        var generator = ByteStringGenerator(state: UInt64(thread))
        for _ in 0..<300 {
          let length = 1 + generator.below(6000)
          output.write([UInt8](repeating: UInt8(ascii: "a") + UInt8(thread), count: length))
          output.write(UInt8(ascii: "\n"))
          output.endRecord()
        }
        output.flush()
      }
    }
    for writer in writers { writer.wait() }
    close(writing)
    reader.wait()
    close(reading)
    let lines = collected.bytes.split(separator: UInt8(ascii: "\n"))
    #expect(lines.count == 1200)
    let mixed = lines.filter { line in line.contains { $0 != line.first } }
    #expect(mixed.isEmpty, "\(mixed.count) lines hold two threads' bytes")
  }

  /// A write of the output that fails (EIO here, from the mocking driver;
  /// a full disk or a reader gone away as well) ends the run at once with
  /// exit status 1 and one line on the errors stream: a caller's `&&` must
  /// not go on with a truncated list.
  @Test func aFailedWriteEndsTheProcessWithStatus1AndOneLine() {
    // The probe writes each argument through Output, flushed one by one.
    let written = run([Argument(probePath), "write", "lost", "never written"])
    #expect(written.status == 0 && written.output == "lost\nnever written\n", "\(written)")
    let failed = run(
      [Argument(probePath), "write", "lost", "never written"],
      environment: ["SKIPBACKUP_FORCE_ERRNO": "write:EIO:1:1"])
    #expect(failed.status == 1, "\(failed)")
    #expect(failed.errors == "skipbackup: write error: Input/output error\n")
    #expect(failed.standardOutput.isEmpty, "\(failed)")
  }

}

/// Bytes appended by one thread and read by another.
private final class Collected: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [UInt8] = []

  func append(_ bytes: ArraySlice<UInt8>) {
    lock.lock()
    storage += bytes
    lock.unlock()
  }

  var bytes: [UInt8] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }
}
