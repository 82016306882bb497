import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// What a user sees when a run is cut short, and what the tool promises
  /// about the files it does not mark.
  @Suite struct ReliabilityTests {
    /// The progress line is drawn on a terminal only: a pseudo-terminal
    /// stands in for one. `--files-from -` keeps the run alive between two
    /// walks, so the line is on screen when the signal comes.
    static let progressUnderASignal = #"""
      import os, select, signal, subprocess, sys, time
      tool, tree, number = sys.argv[1], sys.argv[2], int(sys.argv[3])
      master, slave = os.openpty()
      reader, writer = os.pipe()
      def as_from_a_shell():
          # The test runner may ignore or block these; a terminal's shell does not.
          for number_ in (signal.SIGINT, signal.SIGTERM):
              signal.signal(number_, signal.SIG_DFL)
          signal.pthread_sigmask(signal.SIG_SETMASK, [])
      process = subprocess.Popen(
          [tool, "mark", "-R", "--files-from", "-"],
          stdin=reader, stdout=subprocess.DEVNULL, stderr=slave, preexec_fn=as_from_a_shell)
      os.close(slave)
      os.close(reader)
      os.write(writer, (tree + "\n").encode())
      time.sleep(1.2)
      os.write(writer, (tree + "\n").encode())
      screen = b""
      deadline = time.time() + 60
      while b"items/s" not in screen and time.time() < deadline:
          if select.select([master], [], [], 0.5)[0]:
              screen += os.read(master, 4096)
      process.send_signal(number)
      process.wait(60)
      while select.select([master], [], [], 0.5)[0]:
          try:
              chunk = os.read(master, 4096)
          except OSError:
              break
          if not chunk:
              break
          screen += chunk
      print(process.returncode)
      print(repr(screen[screen.rfind(b"items/s"):]))
      """#

    @Test(arguments: [SIGINT, SIGTERM])
    func theProgressLineIsErasedWhenASignalEndsTheRun(signal: Int32) throws {
      let tree = try TemporaryDirectory()
      for index in 0..<4000 { tree.file("d\(index % 10)/f\(index)") }
      let result = python(
        Self.progressUnderASignal,
        [Argument(skipbackupPath), Argument(tree.path), Argument("\(signal)")])
      // Still dead by the signal, and the line drawn last is erased: "\r" and "erase line".
      #expect(result.lines.first == "\(-signal)", "\(result)")
      #expect(result.lines.last == #"b'items/s\x1b[K\r\x1b[K'"#, "\(result)")
    }

    /// The one exception to "modification times never change": cachedir
    /// adds an entry to the directory. It is stated wherever the promise is.
    @Test func markingCachedirChangesTheDirectorysModificationTimeAsDocumented() throws {
      let tree = try TemporaryDirectory()
      let cache = tree.directory("cache")
      let before = times(cache).modification
      letTheClockTick()
      #expect(skipbackup("mark", "-m", "cachedir", Argument(cache)).status == 0)
      #expect(times(cache).modification != before, "CACHEDIR.TAG is a new entry")
      let exception = "except that -m cachedir adds CACHEDIR.TAG, a new entry"
      let help = skipbackup("mark", "--help").output.split(whereSeparator: \.isWhitespace)
      #expect(help.joined(separator: " ").contains(exception))
      let root = HelpTests.packageRoot
      let guide = try String(
        contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
      let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
      for document in [guide, readme] {
        #expect(
          document.replacingOccurrences(of: "\n", with: " ").contains(
            "cachedir, which adds CACHEDIR.TAG to the directory and so changes its"))
      }
    }
  }
}
