import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension Array where Element == UInt8 {
  fileprivate func ends(with suffix: [UInt8]) -> Bool {
    count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
  }
}

/// Two files for an engine's output and errors (its `Streams`), read back
/// after the run: an in-process test's standard output and error.
/// Files, not pipes: a large output never blocks the writer.
public final class CapturedStreams: @unchecked Sendable {
  public let output: CInt
  public let errors: CInt
  private let directory: TemporaryDirectory

  public init() throws {
    directory = try TemporaryDirectory(prefix: "skipbackup-streams")
    output = open(directory.path + "/output", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    errors = open(directory.path + "/errors", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard output >= 0, errors >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
  }

  deinit {
    close(output)
    close(errors)
  }

  /// What was written to the output, byte for byte.
  public var outputBytes: [UInt8] { Self.contents(of: output) }
  public var outputText: String { String(decoding: outputBytes, as: UTF8.self) }
  /// The output's lines, without the empty one after the last newline.
  public var outputLines: [String] { Self.lines(outputBytes) }
  /// The output split at NUL bytes.
  public var outputRecords: [[UInt8]] { outputBytes.split(separator: 0).map(Array.init) }

  public var errorText: String { String(decoding: Self.contents(of: errors), as: UTF8.self) }
  public var errorLines: [String] { Self.lines(Self.contents(of: errors)) }

  /// Both, for a failure message.
  public var description: String { "--- output\n\(outputText)--- errors\n\(errorText)" }

  /// Split as bytes: a String takes `\r\n` for one character, and a name
  /// may end with `\r`.
  private static func lines(_ bytes: [UInt8]) -> [String] {
    bytes.split(separator: 10, omittingEmptySubsequences: false).dropLast().map {
      String(decoding: $0, as: UTF8.self)
    }
  }

  private static func contents(of descriptor: CInt) -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var offset: off_t = 0
    while true {
      let count = buffer.withUnsafeMutableBytes {
        pread(descriptor, $0.baseAddress, $0.count, offset)
      }
      precondition(count >= 0, "cannot read a captured stream: \(errno)")
      if count == 0 { return result }
      result += buffer[..<count]
      offset += off_t(count)
    }
  }
}

/// A pseudo-terminal: `terminal` is the side a program writes to (isatty
/// says yes), `reader` the side that reads what it wrote. Raw, so that the
/// bytes come back as written (no `\n` made `\r\n`).
public final class PseudoTerminal: @unchecked Sendable {
  public let terminal: CInt
  public let reader: CInt

  public init() {
    // posix_openpt, unlockpt and ptsname, spelt as the kernel takes them
    // (Swift's Glibc module leaves the X/Open names out, and the ioctl
    // numbers are macros: <asm-generic/ioctls.h>).
    let (TIOCSPTLCK, TIOCGPTPEER): (UInt, UInt) = (0x4004_5431, 0x5441)
    reader = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    precondition(reader >= 0, "cannot open /dev/ptmx: \(errno)")
    var locked: CInt = 0
    precondition(ioctl(reader, TIOCSPTLCK, &locked) == 0, "TIOCSPTLCK: \(errno)")
    terminal = ioctl(reader, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)
    precondition(terminal >= 0, "TIOCGPTPEER: \(errno)")
    var settings = termios()
    precondition(tcgetattr(terminal, &settings) == 0, "tcgetattr: \(errno)")
    cfmakeraw(&settings)
    precondition(tcsetattr(terminal, TCSANOW, &settings) == 0, "tcsetattr: \(errno)")
  }

  deinit {
    close(terminal)
    close(reader)
  }

  /// What has been written to the terminal and not read yet. The kernel
  /// hands a terminal's bytes to its reader later, from a work queue: an
  /// end marker is written after them, and read for, so that nothing
  /// written before is missed and no wait is timed.
  public func read() -> [UInt8] {
    let marker = Array("\u{0}end of what was written\u{0}".utf8)
    precondition(write(terminal, marker, marker.count) == marker.count, "write: \(errno)")
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while !result.ends(with: marker) {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
      precondition(count > 0, "cannot read the terminal: \(errno)")
      result += buffer[..<count]
    }
    return Array(result.dropLast(marker.count))
  }
}
