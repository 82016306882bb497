import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// Bad input: every failure is a line `skipbackup: PATH: reason` on standard
  /// error, the other items are still handled, and the exit status says so
  /// (0, 1, 64; check: 0, 1, 2).
  @Suite struct BadInputTests {
    @Test(arguments: ["mark", "clear", "status"])
    func aMissingPathFailsAndTheOthersAreStillHandled(command: String) throws {
      let tree = try TemporaryDirectory()
      let missing = tree.path + "/missing"
      let first = tree.file("first")
      let last = tree.file("last")
      for mark in PeerMark.allCases where command == "clear" { setfattr(last, mark) }
      let result = skipbackup(Argument(command), Argument(first), Argument(missing), Argument(last))
      #expect(result.status == 1, "\(result)")
      #expect(
        diagnostic(result, naming: missing)?.hasPrefix("no such file or directory") == true,
        "\(result)")
      #expect(result.errors.split(separator: "\n").count == 1, "\(result)")
      switch command {
      case "mark":
        #expect(peerMarks(first) == [.resource] && peerMarks(last) == [.resource])
      case "clear":
        #expect(peerMarks(last).isEmpty)
      default:
        #expect(result.lines == ["[Included]    \(first)", "[Included]    \(last)"])
      }
    }

    @Test func messagesComeInOrderWithTheOutput() throws {
      // Standard output is buffered; a message must not overtake what was
      // printed before it when both go to one log.
      let tree = try TemporaryDirectory()
      for name in ["m1", "m2", "s1", "s2", "l1", "l2"] { tree.file(name) }
      for (command, expected) in [
        (
          "mark -v m1 gone m2",
          ["marked m1", "skipbackup: gone: no such file", "marked m2", "skipbackup: marked 2,"]
        ),
        (
          "status s1 gone s2",
          ["[Included]    s1", "skipbackup: gone: no such file", "[Included]    s2"]
        ),
        ("list --included l1 gone l2", ["l1", "skipbackup: gone: no such file", "l2"]),
      ] {
        let result = shell("\"$SKIPBACKUP\" \(command) 2>&1", directory: tree.path)
        #expect(result.status == 1, "\(result)")
        #expect(result.lines.count == expected.count, "\(command): \(result)")
        for (line, prefix) in zip(result.lines, expected) {
          #expect(line.hasPrefix(prefix), "\(command): \(result)")
        }
      }
    }

    @Test func aMissingRootOfAListFails() throws {
      let tree = try TemporaryDirectory()
      let missing = tree.path + "/missing"
      let marked = tree.directory("marked")
      setfattr(marked, .xdg)
      let result = skipbackup("list", Argument(missing), Argument(tree.path))
      #expect(result.status == 1, "\(result)")
      #expect(diagnostic(result, naming: missing)?.hasPrefix("no such file or directory") == true)
      #expect(result.lines == [marked])
    }

    @Test(arguments: ["mark", "clear"])
    func aSymbolicLinkIsRefusedWithoutDereference(command: String) throws {
      let tree = try TemporaryDirectory()
      let target = tree.file("target")
      let directory = tree.directory("directory")
      let link = tree.symlink("link", to: "target")
      let directoryLink = tree.symlink("directory-link", to: "directory")
      let other = tree.file("other")
      if command == "clear" {
        for path in [target, directory, other] { setfattr(path, .resource) }
      }
      let result = skipbackup(
        Argument(command), Argument(link), Argument(other), Argument(directoryLink))
      #expect(result.status == 1, "\(result)")
      for path in [link, directoryLink] {
        let reason = diagnostic(result, naming: path)
        #expect(
          reason?.hasPrefix("Linux keeps no user extended attributes on symbolic links") == true,
          "\(result)")
        #expect(reason?.hasSuffix("-L (--dereference) acts on the link's target") == true)
      }
      // The targets are untouched, and the other item was handled.
      let targetMarks: Set<PeerMark> = command == "mark" ? [] : [.resource]
      #expect(peerMarks(target) == targetMarks && peerMarks(directory) == targetMarks)
      #expect(peerMarks(other) == (command == "mark" ? [.resource] : []))

      // The same with -R: the root is a link, and it is not followed.
      let recursive = skipbackup(Argument(command), "-R", Argument(directoryLink))
      #expect(recursive.status == 1, "\(recursive)")
      #expect(
        diagnostic(recursive, naming: directoryLink)?.contains("-L (--dereference)") == true,
        "\(recursive)")
      #expect(peerMarks(directory) == targetMarks)
    }

    @Test(arguments: [["mark"], ["mark", "-R"], ["mark", "-R", "-v"]])
    func aFIFOOrSocketGivenAsAPathFailsWithWhatItIs(command: [String]) throws {
      // -R skips special files met on the way, but one given as PATH fails as without -R.
      let tree = try TemporaryDirectory()
      let fifo = tree.fifo("fifo")
      let socket = tree.socket("socket")
      let file = tree.file("file")
      let result = skipbackup(
        arguments: command.map { Argument($0) } + [
          Argument(fifo), Argument(socket), Argument(file),
        ])
      #expect(result.status == 1, "\(result)")
      let refusal =
        "Linux keeps user extended attributes only on regular files and directories, and this is "
      #expect(diagnostic(result, naming: fifo)?.hasPrefix(refusal + "a FIFO") == true, "\(result)")
      #expect(
        diagnostic(result, naming: socket)?.hasPrefix(refusal + "a socket") == true, "\(result)")
      #expect(peerMarks(file) == [.resource])
      if command.contains("-v") {
        #expect(
          result.errors.hasSuffix(
            "skipped 0 (symbolic links, devices, FIFOs and sockets), errors 2\n"))
      }
    }

    @Test func procKeepsNoUserAttributes() throws {
      let tree = try TemporaryDirectory()
      let other = tree.file("other")
      let proc = "/proc/self/comm"
      let mark = skipbackup("mark", Argument(proc), Argument(other))
      #expect(mark.status == 1, "\(mark)")
      #expect(
        diagnostic(mark, naming: proc)?.hasPrefix(
          "the filesystem here keeps no user extended attributes (a pseudo-filesystem such as /proc"
        ) == true, "\(mark)")
      #expect(peerMarks(other) == [.resource])

      // Nothing there can carry a mark: it reads as included, and clearing
      // it has nothing to do.
      let status = skipbackup("status", Argument(proc))
      #expect(status.status == 0, "\(status)")
      #expect(status.output == "[Included]    \(proc)\n")
      let clear = skipbackup("clear", Argument(proc))
      #expect(clear.status == 0, "\(clear)")
      #expect(clear.standardError.isEmpty)
      #expect(skipbackup("check", Argument(proc)).status == 1)
    }

    @Test func permissionDeniedForAnUnprivilegedUser() throws {
      let tree = try TemporaryDirectory()
      // Root's file, mode 0644: nobody may read it but not change its attributes.
      let rootsFile = tree.file("roots-file")
      chmod(rootsFile, 0o644)
      // nobody's own file: nobody may mark it.
      let ownFile = tree.file("own-file")
      chown(ownFile, 65534, 65534)
      let result = skipbackup("mark", Argument(rootsFile), Argument(ownFile), asNobody: true)
      #expect(result.status == 1, "\(result)")
      #expect(
        diagnostic(result, naming: rootsFile)?.hasPrefix(
          "permission denied: changing its attributes needs write permission on it") == true,
        "\(result)")
      #expect(result.errors.contains("Permission denied"), "the errno is named too: \(result)")
      #expect(peerMarks(rootsFile).isEmpty)
      #expect(peerMarks(ownFile) == [.resource])

      // Reading is allowed: status and check work for nobody.
      setfattr(rootsFile, .legacy)
      let status = skipbackup("status", Argument(rootsFile), Argument(ownFile), asNobody: true)
      #expect(status.status == 0, "\(status)")
      #expect(status.lines == ["[Excluded]    \(rootsFile)", "[Excluded]    \(ownFile)"])
      #expect(skipbackup("check", Argument(rootsFile), asNobody: true).status == 0)

      // Clearing root's mark is refused just the same.
      let clear = skipbackup("clear", Argument(rootsFile), asNobody: true)
      #expect(clear.status == 1, "\(clear)")
      #expect(diagnostic(clear, naming: rootsFile)?.hasPrefix("permission denied") == true)
      #expect(peerMarks(rootsFile) == [.legacy])
    }

    @Test func anUnreadableDirectoryInAWalkFailsAndTheWalkGoesOn() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let locked = tree.directory("root/locked")
      tree.file("root/locked/hidden")
      let open = tree.directory("root/open")
      chown(open, 65534, 65534)
      let visible = tree.file("root/open/visible")
      chown(visible, 65534, 65534)
      chmod(locked, 0o700)

      let status = skipbackup("status", "-R", Argument(root), asNobody: true)
      #expect(status.status == 1, "\(status)")
      #expect(
        diagnostic(status, naming: locked)?.hasPrefix("permission denied") == true, "\(status)")
      #expect(
        Set(status.lines) == [
          "[Included]    \(root)", "[Included]    \(locked)", "[Included]    \(open)",
          "[Included]    \(visible)",
        ])

      let list = skipbackup("list", "--included", Argument(root), asNobody: true)
      #expect(list.status == 1, "\(list)")
      #expect(diagnostic(list, naming: locked)?.hasPrefix("permission denied") == true, "\(list)")
      #expect(Set(list.lines) == [root, locked, open, visible])

      let mark = skipbackup("mark", "-R", Argument(open), Argument(locked), asNobody: true)
      #expect(mark.status == 1, "\(mark)")
      #expect(peerMarks(visible) == [.resource] && peerMarks(open) == [.resource])
    }

    @Test(arguments: [
      ["mark"], ["clear"], ["status"], ["list"],
      ["mark", "--bogus", "x"], ["status", "--format", "yaml", "x"], ["mark", "-0", "x"],
      ["list", "--excluded", "--included", "x"], ["clear", "-v", "-q", "x"], ["bogus"],
      ["mark", "--files-from"],
    ])
    func usageErrorsExit64(arguments: [String]) throws {
      let tree = try TemporaryDirectory()
      let result = skipbackup(arguments: arguments.map { Argument($0) }, directory: tree.path)
      #expect(result.status == 64, "\(arguments): \(result)")
      #expect(result.standardOutput.isEmpty)
      #expect(result.errors.contains("Error: "), "\(result)")
      #expect(result.errors.contains("Usage: skipbackup"), "\(result)")
      #expect(getfattrDump(tree.path).isEmpty)
    }

    @Test func aNameStartingWithADashNeedsTheDoubleDash() throws {
      let tree = try TemporaryDirectory()
      tree.file("-n")
      tree.file("-rf")
      let without = skipbackup("mark", "-rf", directory: tree.path)
      #expect(without.status == 64, "\(without)")
      #expect(peerMarks(tree.path + "/-rf").isEmpty)
      // Without "--", "-n" is --dry-run, not a name: no PATH is given.
      let dryRun = skipbackup("mark", "-n", directory: tree.path)
      #expect(dryRun.status == 64, "\(dryRun)")
      #expect(peerMarks(tree.path + "/-n").isEmpty)

      let with = skipbackup("mark", "--", "-n", "-rf", directory: tree.path)
      #expect(with.status == 0, "\(with)")
      #expect(peerMarks(tree.path + "/-n") == [.resource])
      #expect(peerMarks(tree.path + "/-rf") == [.resource])
      let status = skipbackup("status", "--", "-n", directory: tree.path)
      #expect(status.output == "[Excluded]    -n\n")
      #expect(skipbackup("check", "--", "-rf", "-n", directory: tree.path).status == 0)
      let list = skipbackup("list", "--", ".", directory: tree.path)
      #expect(Set(list.lines) == ["./-n", "./-rf"])
      #expect(skipbackup("clear", "-v", "--", "-n", directory: tree.path).output == "cleared -n\n")
    }
  }
}
