import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// Recursion: deeper than PATH_MAX, never through a symbolic link, -x, items
  /// that vanish during the walk, and the progress line.
  @Suite struct RecursionTests {
    // MARK: - Deeper than PATH_MAX

    /// Builds `levels` directories of 200-byte names below `root` with
    /// mkdirat, one step at a time (no path that long could be used), and a
    /// file `leaf` at the bottom with the legacy mark, set through its
    /// descriptor.
    private static let buildDeepTree = """
      import os, sys
      root, levels = sys.argv[1], int(sys.argv[2])
      fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
      for _ in range(levels):
          os.mkdir("d" * 200, dir_fd=fd)
          child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
          os.close(fd)
          fd = child
      leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
      os.write(leaf, b"x")
      os.setxattr(leaf, "user.com.apple.MobileBackup", b"\\x01")
      os.close(leaf)
      """

    /// Walks the deep tree through descriptors and prints, for every
    /// directory and the leaf, the user attributes it has and their values in
    /// hex: `name=hex,name=hex` a line, the root first.
    private static let readDeepTree = """
      import os, sys
      fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
      def attributes(fd):
          names = sorted(n for n in os.listxattr(fd) if n.startswith("user."))
          return ",".join(n + "=" + os.getxattr(fd, n).hex() for n in names)
      while True:
          print(attributes(fd))
          names = os.listdir(fd)
          if names == ["leaf"]:
              leaf = os.open("leaf", os.O_RDONLY, dir_fd=fd)
              print(attributes(leaf))
              break
          child = os.open(names[0], os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
          os.close(fd)
          fd = child
      """

    @Test func aTreeDeeperThanPathMax() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      // `rm -rf` removes a tree of any depth; do not rely on Foundation for it.
      defer { _ = run(["rm", "-rf", Argument(root)]) }
      let levels = 25
      let built = python(Self.buildDeepTree, [Argument(root), Argument("\(levels)")])
      try #require(built.status == 0, "\(built)")
      let directories = (0...levels).map { depth in
        root + String(repeating: "/" + String(repeating: "d", count: 200), count: depth)
      }
      let leaf = directories.last! + "/leaf"
      #expect(leaf.utf8.count > 4096 + 900, "well past PATH_MAX")

      let list = skipbackup("list", Argument(root))
      #expect(list.status == 0, "\(list.errors)")
      #expect(list.output == leaf + "\n")

      let included = skipbackup("list", "--included", "-0", Argument(root))
      #expect(included.status == 0, "\(included.errors)")
      #expect(included.nulSeparated == directories.map(\.bytes))

      let status = skipbackup("status", "-R", Argument(root))
      #expect(status.status == 0, "\(status.errors)")
      #expect(status.standardError.isEmpty)
      #expect(
        status.lines == directories.map { "[Included]    " + $0 } + ["[Excluded]    " + leaf])
      let json = skipbackup("status", "-R", "--format", "json", Argument(root))
      #expect(jsonObjects(json).compactMap { $0["path"] as? String } == directories + [leaf])

      let mark = skipbackup("mark", "-R", "-v", Argument(root))
      #expect(mark.status == 0, "\(mark.errors)")
      #expect(
        mark.errors
          == "skipbackup: marked \(levels + 2), already marked 0, skipped 0 (symbolic links, devices, FIFOs and sockets), errors 0\n"
      )
      let resource = Names.resource + "=" + Names.resourceValueHex
      let legacy = Names.legacy + "=01"
      let marked = python(Self.readDeepTree, [Argument(root)])
      #expect(marked.status == 0, "\(marked)")
      #expect(
        marked.lines == Array(repeating: resource, count: levels + 1) + [legacy + "," + resource])
      #expect(skipbackup("list", Argument(root)).output == root + "\n")

      let clear = skipbackup("clear", "-R", Argument(root))
      #expect(clear.status == 0, "\(clear.errors)")
      #expect(
        python(Self.readDeepTree, [Argument(root)]).lines == Array(repeating: "", count: levels + 2)
      )
    }

    // MARK: - Symbolic links

    @Test func recursionNeverFollowsALinkOutOfTheTree() throws {
      let tree = try TemporaryDirectory()
      let outside = tree.directory("outside")
      let outsideFile = tree.file("outside/file")
      let root = tree.directory("root")
      let inside = tree.file("root/inside")
      tree.symlink("root/escape", to: "../outside")
      tree.symlink("root/file-link", to: "../outside/file")
      tree.symlink("root/absolute", to: outside)

      let mark = skipbackup("mark", "-R", "-v", "-m", "all", Argument(root))
      #expect(mark.status == 0, "\(mark)")
      #expect(Set(mark.lines) == ["marked \(root)", "marked \(inside)"])
      #expect(mark.errors.contains("skipped 3 (symbolic links"), "\(mark)")
      #expect(peerMarks(outside).isEmpty && peerMarks(outsideFile).isEmpty)

      let status = skipbackup("status", "-R", Argument(root))
      #expect(status.lines.count == 5, "\(status)")
      #expect(!status.output.contains("escape/") && !status.output.contains("absolute/"))

      // Marks outside stay when the tree is cleared.
      for path in [outside, outsideFile] { setfattr(path, .legacy) }
      #expect(skipbackup("clear", "-R", Argument(root)).status == 0)
      #expect(peerMarks(outside) == [.legacy] && peerMarks(outsideFile) == [.legacy])
      let list = skipbackup("list", "--included", Argument(root))
      #expect(
        Set(list.lines) == [
          root, inside, root + "/escape", root + "/file-link", root + "/absolute",
        ])
    }

    // MARK: - -x, --one-file-system

    /// Whether this process may mount a tmpfs (root in CI; not everywhere).
    static let canMount: Bool = {
      guard let tree = try? TemporaryDirectory(prefix: "skipbackup-mount") else { return false }
      let point = tree.directory("point")
      guard run(["mount", "-t", "tmpfs", "tmpfs", Argument(point)]).status == 0 else {
        return false
      }
      _ = run(["umount", Argument(point)])
      return true
    }()

    @Test(.enabled(if: canMount, "mounting a tmpfs needs root"))
    func oneFileSystemStaysOnTheRootsFilesystem() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let file = tree.file("root/a/file")
      let mountPoint = tree.directory("root/mnt")
      try #require(run(["mount", "-t", "tmpfs", "tmpfs", Argument(mountPoint)]).status == 0)
      defer { _ = run(["umount", "-l", Argument(mountPoint)]) }
      let onOther = tree.file("root/mnt/inner/file")

      let list = skipbackup("list", "--included", "-x", Argument(root))
      #expect(list.status == 0, "\(list)")
      #expect(Set(list.lines) == [root, root + "/a", file, mountPoint], "\(list)")
      let listEverywhere = skipbackup("list", "--included", Argument(root))
      #expect(Set(listEverywhere.lines).contains(onOther))

      let mark = skipbackup("mark", "-R", "-x", "-v", Argument(root))
      #expect(mark.status == 0, "\(mark)")
      #expect(Set(mark.lines) == ["marked \(root)", "marked \(root)/a", "marked \(file)"])
      #expect(mark.errors.contains("not entered 1 (other filesystems)"), "\(mark)")
      #expect(peerMarks(mountPoint).isEmpty && peerMarks(onOther).isEmpty)

      let status = skipbackup("status", "-R", "--one-file-system", Argument(root))
      #expect(status.status == 0, "\(status)")
      #expect(status.output.contains("    \(mountPoint)\n"), "the mount point is reported")
      #expect(!status.output.contains(onOther), "but not entered")

      // Without -x the walk goes on into the other filesystem.
      let everywhere = skipbackup("mark", "-R", Argument(root))
      #expect(everywhere.status == 0, "\(everywhere)")
      #expect(peerMarks(onOther) == [.resource])
      withExtendedLifetime(tree) {}
    }

    // MARK: - Items that vanish or are swapped during the walk

    /// Runs the tool on a directory of many entries with stdout on a pipe that
    /// nobody reads until the tool blocks writing to it, mid-walk, with the
    /// rest of a directory listing read but not yet visited. Then changes the
    /// directory, drains the pipe, and prints the exit status, the number of
    /// lines the tool printed, and its standard error.
    ///
    /// `delete`: 6,000 files, all deleted. `swap`: 3,000 directories, each
    /// moved out of the tree and replaced by a symbolic link to OUTSIDE. Each
    /// entry has the xdg mark when the tool clears, so that it prints them.
    ///
    /// Nothing here depends on timing: the tool cannot go on until the pipe is
    /// drained, and the change is made before it is.
    ///
    ///     python3 -c SCRIPT delete|swap DIRECTORY OUTSIDE TOOL ARGUMENTS...
    private static let changeDuringWalk = """
      import array, fcntl, os, subprocess, sys, termios, time
      mode, directory, outside, arguments = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
      names = []
      for i in range(6000 if mode == "delete" else 3000):
          name = "entry-%05d-" % i + "x" * 80
          names.append(name)
          path = os.path.join(directory, name)
          if mode == "delete":
              open(path, "w").close()
          else:
              os.mkdir(path)
          if "clear" in arguments:
              os.setxattr(path, "user.xdg.robots.backup", b"false")
      read_end, write_end = os.pipe()
      tool = subprocess.Popen(arguments, stdout=write_end, stderr=subprocess.PIPE)
      os.close(write_end)
      def pending():
          count = array.array("i", [0])
          fcntl.ioctl(read_end, termios.FIONREAD, count, True)
          return count[0]
      def state():
          with open("/proc/%d/stat" % tool.pid) as stat:
              fields = stat.read().rsplit(")", 1)[1].split()
          return fields[0], int(fields[11]) + int(fields[12])
      deadline = time.time() + 60
      while pending() < 65536 and tool.poll() is None and time.time() < deadline:
          time.sleep(0.01)
      # Full pipe: wait until the tool sleeps without using CPU, blocked in write.
      last = None
      while time.time() < deadline:
          time.sleep(0.05)
          now = state()
          if now == last and now[0] == "S":
              break
          last = now
      if tool.poll() is not None:
          sys.exit("the tool ended before it blocked")
      if mode == "delete":
          for name in names:
              os.unlink(os.path.join(directory, name))
      else:
          moved = os.path.join(os.path.dirname(outside), "moved")
          os.mkdir(moved)
          for name in names:
              os.rename(os.path.join(directory, name), os.path.join(moved, name))
              os.symlink(outside, os.path.join(directory, name))
      output = 0
      while True:
          chunk = os.read(read_end, 65536)
          if not chunk:
              break
          output += chunk.count(b"\\n")
      errors = tool.stderr.read().decode()
      print(tool.wait())
      print(output)
      sys.stdout.write(errors)
      """

    /// Runs `changeDuringWalk`; returns the tool's exit status, how many
    /// lines it printed, and its standard error's lines.
    private func changeDuringWalk(
      _ mode: String, _ command: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (status: String, printed: Int, errors: [String], outside: String) {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let directory = tree.directory("root/entries")
      let outside = tree.directory("outside")
      tree.file("outside/file")
      if command[0] == "clear" { setfattr(directory, .xdg) }
      let result = python(
        Self.changeDuringWalk,
        [Argument(mode), Argument(directory), Argument(outside), Argument(skipbackupPath)]
          + command.map { Argument($0) } + [Argument(root)])
      try #require(result.status == 0, "\(result)", sourceLocation: sourceLocation)
      let lines = result.lines
      let printed = Int(lines[1]) ?? 0
      #expect(printed > 0, "\(result)", sourceLocation: sourceLocation)
      // Whatever happened, nothing outside the tree was marked.
      #expect(peerMarks(outside).isEmpty, sourceLocation: sourceLocation)
      #expect(peerMarks(outside + "/file").isEmpty, sourceLocation: sourceLocation)
      return (lines[0], printed, Array(lines.dropFirst(2)), outside)
    }

    @Test(arguments: [
      ["mark", "-R", "-v"], ["status", "-R"], ["list", "--included"],
      ["clear", "-R", "-v", "-m", "xdg"],
    ])
    func filesDeletedDuringTheWalkAreNoError(command: [String]) throws {
      let run = try changeDuringWalk("delete", command)
      #expect(run.status == "0", "\(run)")
      #expect(run.printed < 6000, "the deletion came part way through the walk: \(run)")
      if command.contains("-v") {
        // The summary counts the files that were listed but gone when visited.
        #expect(run.errors.count == 1, "\(run)")
        let summary = try #require(run.errors.first)
        #expect(summary.contains(", vanished "), "\(summary)")
        #expect(summary.hasSuffix(", errors 0"), "\(summary)")
      } else {
        #expect(run.errors.isEmpty, "\(run)")
      }
    }

    @Test(arguments: [
      ["mark", "-R", "-v"], ["status", "-R"], ["list", "--included"], ["clear", "-R", "-v"],
      // Nodump and cachedir reported such a link as an error.
      ["mark", "-R", "-v", "-m", "nodump,cachedir"],
    ])
    func directoriesSwappedForLinksDuringTheWalkAreNeitherFollowedNorErrors(command: [String])
      throws
    {
      // Entries listed as directories, then replaced by links out of the tree
      // before the walk reaches them: skipped as links met on the way are.
      let run = try changeDuringWalk("swap", command)
      #expect(run.status == "0", "\(run)")
      if command.contains("-v") {
        #expect(run.errors.count == 1, "\(run)")
        let summary = try #require(run.errors.first)
        #expect(summary.hasSuffix(", errors 0"), "\(summary)")
      } else {
        #expect(run.errors.isEmpty, "\(run)")
      }
    }

    // MARK: - Progress

    /// Runs the tool with standard error on a terminal (or a pipe) and feeds
    /// `--files-from -` a directory of 1,500 files twice, 1.2 s apart: the
    /// run passes a second, and the second pass crosses the 2,048 items at
    /// which the tool looks at the clock. Prints the exit status, then what
    /// the tool wrote to standard error, as Python's repr.
    private static let slowRun = """
      import os, pty, select, subprocess, sys, time
      on_terminal, directory, arguments = sys.argv[1] == "tty", sys.argv[2], sys.argv[3:]
      # 6,000 entries: the walk's helper joins after 1,000 items, and a thread
      # hands its count to the progress line every 1,024, so one of the two
      # threads surely hands it over in the second walk, 1.2 s after the start.
      for i in range(6000):
          open(os.path.join(directory, "f%05d" % i), "w").close()
      if on_terminal:
          reader, writer = pty.openpty()
      else:
          reader, writer = os.pipe()
      tool = subprocess.Popen(
          arguments, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=writer)
      os.close(writer)
      for _ in range(2):
          tool.stdin.write(directory.encode() + b"\\n")
          tool.stdin.flush()
          time.sleep(1.2)
      tool.stdin.close()
      seen = b""
      while True:
          ready, _, _ = select.select([reader], [], [], 10)
          if not ready:
              break
          try:
              chunk = os.read(reader, 4096)
          except OSError:
              break
          if not chunk:
              break
          seen += chunk
      print(tool.wait())
      print(repr(seen))
      """

    private func slowRun(
      terminal: Bool, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (status: String, standardError: String) {
      let tree = try TemporaryDirectory()
      let directory = tree.directory("many")
      let result = python(
        Self.slowRun,
        [Argument(terminal ? "tty" : "pipe"), Argument(directory), Argument(skipbackupPath)]
          + arguments.map { Argument($0) } + ["--files-from", "-"])
      try #require(result.lines.count == 2, "\(result)", sourceLocation: sourceLocation)
      return (result.lines[0], result.lines[1])
    }

    @Test func aLongRunOnATerminalShowsAProgressLineAndErasesIt() throws {
      let run = try slowRun(terminal: true, ["status", "-R"])
      #expect(run.status == "0")
      // Drawn with a carriage return, erased to the end of the line at the end.
      #expect(run.standardError.hasPrefix(#"b'\rskipbackup: "#), "\(run)")
      #expect(run.standardError.contains(#" items, "#), "\(run)")
      #expect(run.standardError.contains(#" items/s\x1b[K"#), "\(run)")
      #expect(run.standardError.hasSuffix(#"\r\x1b[K'"#), "\(run)")
    }

    @Test(arguments: [["status", "-R"], ["mark", "-R"], ["clear", "-R"]])
    func noProgressLineWhenStandardErrorIsNoTerminal(command: [String]) throws {
      let run = try slowRun(terminal: false, command)
      #expect(run.status == "0")
      #expect(run.standardError == "b''")
    }

    @Test(arguments: [["status", "-R", "-q"], ["mark", "-R", "--quiet"]])
    func noProgressLineWithQuiet(command: [String]) throws {
      let run = try slowRun(terminal: true, command)
      #expect(run.status == "0")
      #expect(run.standardError == "b''")
    }

    @Test func aBigRunWritesNothingToAPipedStandardError() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      for directory in 0..<20 {
        let path = tree.directory("root/\(directory)")
        for file in 0..<250 {
          _ = FileManager.default.createFile(atPath: "\(path)/\(file)", contents: nil)
        }
      }
      for arguments: [Argument] in [
        ["mark", "-R", Argument(root)], ["status", "-R", Argument(root)],
        ["list", "--included", Argument(root)], ["clear", "-R", Argument(root)],
      ] {
        let result = skipbackup(arguments: arguments)
        #expect(result.status == 0)
        #expect(
          result.standardError.isEmpty,
          "\(arguments.map { String(decoding: $0.bytes, as: UTF8.self) })")
      }
    }
  }
}
