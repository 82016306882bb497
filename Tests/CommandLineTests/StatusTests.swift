import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// `skipbackup status`: the tmutil line, -v, JSON Lines, and marks made by
  /// setfattr, not by the tool.
  @Suite struct StatusTests {
    /// Runs the tool on a terminal (a pseudo-terminal, Python's pty) in
    /// `directory`; its output as the terminal got it.
    static let onATerminal = """
      import os, pty, sys
      os.chdir(sys.argv[1])
      pid, fd = pty.fork()
      if pid == 0:
          os.execv(sys.argv[2], sys.argv[2:])
      out = b""
      while True:
          try:
              data = os.read(fd, 65536)
          except OSError:
              break
          if not data:
              break
          out += data
      os.waitpid(pid, 0)
      sys.stdout.buffer.write(out)
      """

    /// A name holding `\e[2J\e[31m` reaches a terminal
    /// escaped from status, list, mark -v, sweep, du and explain (whose
    /// advice quotes it as `ls` does, `$'\033'`, and a name starting with
    /// `-` after `--`); piped text, `-0` and JSON keep the
    /// bytes as they are.
    @Test func namesAreEscapedOnATerminalAndByteExactElsewhere() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let evil = Array("evil\u{1b}[2J\u{1b}[31mred".utf8)
      let evilPath = tree.file(named: evil, in: "root")
      tree.file("root/-v")
      tree.file("root/node_modules/x")
      tree.file("root/package.json")
      func terminal(_ arguments: [String]) -> [UInt8] {
        python(
          Self.onATerminal,
          [Argument(root), Argument(skipbackupPath)] + arguments.map { Argument($0) }
        ).standardOutput
      }
      let escaped = Array("evil\\x1b[2J\\x1b[31mred".utf8)
      let runs: [(arguments: [String], showsName: Bool)] = [
        (["list", "--included", "."], true), (["mark", "-v", "-R", "."], true),
        (["status", "-R", "."], true), (["du", "."], false), (["clear", "-v", "-R", "."], true),
        (["sweep", "-v", "."], false),
      ]
      for (arguments, showsName) in runs {
        let shown = terminal(arguments)
        #expect(!shown.contains(0x1B), "\(arguments): \(String(decoding: shown, as: UTF8.self))")
        if showsName { #expect(shown.firstRange(of: escaped) != nil, "\(arguments)") }
      }
      #expect(skipbackup("clear", "-R", Argument(root)).status == 0)
      let advice = terminal(["explain", "--", String(decoding: evil, as: UTF8.self), "-v"])
      #expect(!advice.contains(0x1B))
      let text = String(decoding: advice, as: UTF8.self)
      #expect(
        text.contains("skipbackup mark -m xdg 'evil'$'\\033''[2J'$'\\033''[31mred'"), "\(text)")
      #expect(text.contains("skipbackup mark -m xdg -- -v"), "\(text)")

      // Piped, -0 and JSON: the name's own bytes (JSON escapes ESC itself).
      #expect(skipbackup("mark", Argument(bytes: evilPath)).status == 0)
      #expect(
        skipbackup("status", Argument(bytes: evilPath)).standardOutput
          == Array("[Excluded]    ".utf8) + evilPath + [10])
      #expect(
        skipbackup("list", "-0", Argument(root)).standardOutput.split(separator: 0)
          .contains { Array($0) == evilPath })
      #expect(
        skipbackup("status", "--format", "json", Argument(bytes: evilPath)).output.contains(
          "evil\\u001b[2J"))
    }

    @Test func textLinesAreTmutilsForm() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.file("marked")
      let unmarked = tree.file("unmarked")
      let directory = tree.directory("directory")
      let inside = tree.file("directory/inside")
      setfattr(marked, .resource)
      setfattr(directory, .legacy)
      let result = skipbackup(
        "status", Argument(marked), Argument(unmarked), Argument(directory), Argument(inside))
      #expect(result.status == 0, "\(result)")
      #expect(
        result.output == """
          [Excluded]    \(marked)
          [Included]    \(unmarked)
          [Excluded]    \(directory)
          [Excluded]    \(inside)

          """)
      #expect(result.standardError.isEmpty)
    }

    @Test func verboseSaysWhichMarksAndWhereAnExclusionComesFrom() throws {
      let tree = try TemporaryDirectory()
      let directory = tree.directory("directory")
      let inside = tree.file("directory/inside")
      let both = tree.file("directory/both")
      let unmarked = tree.file("unmarked")
      setfattr(directory, .resource)
      setfattr(both, .legacy)
      setfattr(both, .xdg)
      let result = skipbackup(
        "status", "-v", Argument(directory), Argument(inside), Argument(both), Argument(unmarked))
      #expect(result.status == 0, "\(result)")
      // Outside a walk, the directory above is named by its canonical path.
      #expect(
        result.lines == [
          "[Excluded]    \(directory)    (marked: resource)",
          "[Excluded]    \(inside)    (inherited from \(directory))",
          "[Excluded]    \(both)    (marked: legacy, xdg; inherited from \(directory))",
          "[Included]    \(unmarked)",
        ])

      // Inside a walk, the path as the walk reached it.
      let walked = skipbackup("status", "--verbose", "-R", "directory", directory: tree.path)
      #expect(
        Set(walked.lines) == [
          "[Excluded]    directory    (marked: resource)",
          "[Excluded]    directory/inside    (inherited from directory)",
          "[Excluded]    directory/both    (marked: legacy, xdg; inherited from directory)",
        ])
    }

    @Test func jsonLinesHaveExactlyTheContractsKeys() throws {
      let tree = try TemporaryDirectory()
      let directory = tree.directory("directory")
      let inside = tree.file("directory/inside")
      let unmarked = tree.file("unmarked")
      let quoted = tree.file("say \"hi\"\\")
      setfattr(directory, .legacy)
      setfattr(directory, .resource)
      let result = skipbackup(
        "status", "--format", "json", Argument(directory), Argument(inside), Argument(unmarked),
        Argument(quoted))
      #expect(result.status == 0, "\(result)")
      // The exact bytes of the contract's example, one object a line.
      #expect(
        result.lines[0]
          == #"{"path": "\#(directory)", "excluded": true, "marks": ["legacy", "resource"], "inherited_from": null}"#
      )
      let objects = jsonObjects(result)
      #expect(objects.count == 4)
      for object in objects {
        #expect(Set(object.keys) == ["path", "excluded", "marks", "inherited_from"])
      }
      #expect(objects[0]["path"] as? String == directory)
      #expect(objects[0]["excluded"] as? Bool == true)
      #expect(objects[0]["marks"] as? [String] == ["legacy", "resource"])
      #expect(objects[0]["inherited_from"] is NSNull)
      #expect(objects[1]["path"] as? String == inside)
      #expect(objects[1]["excluded"] as? Bool == true)
      #expect(objects[1]["marks"] as? [String] == [])
      #expect(objects[1]["inherited_from"] as? String == directory)
      #expect(objects[2]["excluded"] as? Bool == false)
      #expect(objects[2]["marks"] as? [String] == [])
      #expect(objects[2]["inherited_from"] is NSNull)
      #expect(objects[3]["path"] as? String == quoted)
    }

    @Test(arguments: [
      [PeerMark.legacy], [.resource], [.xdg], [.legacy, .resource], [.legacy, .xdg],
      [.resource, .xdg], [.legacy, .resource, .xdg],
    ])
    func reportsTheMarksThatSetfattrMade(marks: [PeerMark]) throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      for mark in marks { setfattr(file, mark) }
      let result = skipbackup("status", "--format", "json", Argument(file))
      #expect(result.status == 0, "\(result)")
      let object = try #require(jsonObjects(result).first)
      #expect(object["marks"] as? [String] == marks.map(\.rawValue))
      #expect(object["excluded"] as? Bool == true)

      // -m narrows which marks count.
      for mark in PeerMark.allCases {
        let narrowed = skipbackup("status", "-m", Argument(mark.rawValue), Argument(file))
        let expected = marks.contains(mark) ? "[Excluded]    " : "[Included]    "
        #expect(narrowed.output == expected + file + "\n", "-m \(mark.rawValue)")
      }
      let apple = skipbackup("status", "-v", "-m", "apple", Argument(file))
      let appleMarks = marks.filter { $0 != .xdg }.map(\.rawValue)
      #expect(
        apple.output
          == (appleMarks.isEmpty
            ? "[Included]    \(file)\n"
            : "[Excluded]    \(file)    (marked: \(appleMarks.joined(separator: ", ")))\n"))
    }

    @Test func readsValuesByFormatsMDsRules() throws {
      let tree = try TemporaryDirectory()
      let cases: [(name: String, attribute: String, hex: String, excluded: Bool)] = [
        ("legacy-one", Names.legacy, "01", true),
        ("legacy-two", Names.legacy, "02", true),
        ("legacy-zero", Names.legacy, "00", false),
        ("resource-other-value", Names.resource, "00", true),
        ("resource-text", Names.resource, hex("com.apple.backupd".bytes), true),
        ("xdg-false", Names.xdg, hex("false".bytes), true),
        ("xdg-true", Names.xdg, hex("true".bytes), false),
        ("unrelated", "user.com.apple.other", "01", false),
      ]
      for item in cases {
        setfattr(tree.file(item.name), item.attribute, hex: item.hex)
      }
      let result = skipbackup(
        arguments: ["status"] + cases.map { Argument(tree.path + "/" + $0.name) })
      #expect(result.status == 0, "\(result)")
      #expect(
        result.lines
          == cases.map {
            ($0.excluded ? "[Excluded]    " : "[Included]    ") + tree.path + "/" + $0.name
          })
    }

    @Test func aSymbolicLinkIsReportedAsItselfWithoutDereference() throws {
      let tree = try TemporaryDirectory()
      let target = tree.file("target")
      setfattr(target, .resource)
      let link = tree.symlink("link", to: "target")
      let marked = tree.directory("marked")
      setfattr(marked, .xdg)
      let linkInMarked = tree.symlink("marked/link", to: "../target")
      let linkToMarked = tree.symlink("to-marked", to: "marked")

      let result = skipbackup(
        "status", "--format", "json", Argument(link), Argument(linkInMarked), Argument(linkToMarked)
      )
      #expect(result.status == 0, "\(result)")
      #expect(result.standardError.isEmpty)
      let objects = jsonObjects(result)
      #expect(objects.map { $0["path"] as? String } == [link, linkInMarked, linkToMarked])
      #expect(objects.map { $0["marks"] as? [String] } == [[], [], []])
      #expect(objects.map { $0["excluded"] as? Bool } == [false, true, false])
      #expect(objects[1]["inherited_from"] as? String == marked)

      let followed = skipbackup("status", "-L", "-v", Argument(link), Argument(linkToMarked))
      #expect(
        followed.lines == [
          "[Excluded]    \(link)    (marked: resource)",
          "[Excluded]    \(linkToMarked)    (marked: xdg)",
        ])
      // A walk from a link without -L reports the link and does not enter it.
      let walk = skipbackup("status", "-R", Argument(linkToMarked))
      #expect(walk.lines == ["[Included]    \(linkToMarked)"])
      let walkFollowed = skipbackup("status", "-R", "-L", Argument(linkToMarked))
      #expect(
        walkFollowed.lines == [
          "[Excluded]    \(linkToMarked)", "[Excluded]    \(linkToMarked)/link",
        ])
    }

    @Test func recursiveReportsEveryItemAndNeverFollowsLinks() throws {
      let tree = try TemporaryDirectory()
      let outside = tree.directory("outside")
      let outsideFile = tree.file("outside/secret")
      setfattr(outside, .resource)
      tree.directory("root")
      tree.file("root/plain")
      let cache = tree.directory("root/cache")
      setfattr(cache, .legacy)
      tree.file("root/cache/blob")
      tree.directory("root/cache/deeper")
      let own = tree.file("root/cache/deeper/own")
      setfattr(own, .xdg)
      tree.symlink("root/escape", to: "../outside")
      tree.fifo("root/fifo")

      let result = skipbackup("status", "-R", "-v", "root", directory: tree.path)
      #expect(result.status == 0, "\(result)")
      #expect(result.standardError.isEmpty)
      #expect(
        Set(result.lines) == [
          "[Included]    root",
          "[Included]    root/plain",
          "[Excluded]    root/cache    (marked: legacy)",
          "[Excluded]    root/cache/blob    (inherited from root/cache)",
          "[Excluded]    root/cache/deeper    (inherited from root/cache)",
          "[Excluded]    root/cache/deeper/own    (marked: xdg; inherited from root/cache)",
          "[Included]    root/escape",
          "[Included]    root/fifo",
        ])
      #expect(!result.output.contains("secret"))
      #expect(peerMarks(outsideFile).isEmpty)

      // A walk that starts below a marked directory inherits from it.
      let below = skipbackup(
        "status", "-R", "--format", "json", "root/cache/deeper", directory: tree.path)
      let objects = jsonObjects(below)
      #expect(objects.count == 2)
      #expect(objects.allSatisfy { $0["inherited_from"] as? String == cache })
    }

    @Test func aDirectoryNameThatIsNotUTF8KeepsItsBytesInInheritedFrom() throws {
      // path_base64 is the contract's; a non-UTF-8 inherited_from gets
      // inherited_from_base64 the same way, so that no byte is lost.
      let tree = try TemporaryDirectory()
      let name: [UInt8] = [0x63, 0xE9, 0x2F]  // "c", Latin-1 "é", then "/"
      let directory = tree.bytes(Array(name.dropLast()))
      precondition(mkdir(directory.map { CChar(bitPattern: $0) } + [0], 0o755) == 0)
      setfattr(directory, .resource)
      let child = tree.file(named: name + "plain".bytes)
      let result = skipbackup("status", "--format", "json", Argument(bytes: child))
      #expect(result.status == 0, "\(result)")
      let object = try #require(jsonObjects(result).first)
      #expect(
        Set(object.keys) == [
          "path", "path_base64", "excluded", "marks", "inherited_from", "inherited_from_base64",
        ])
      #expect(pathBytes(of: object) == child)
      let inherited = (object["inherited_from_base64"] as? String).flatMap {
        Data(base64Encoded: $0)
      }
      #expect(inherited.map(Array.init) == directory)
      #expect(object["inherited_from"] as? String == String(decoding: directory, as: UTF8.self))
    }

    @Test func exitStatusSaysWhetherEveryItemWasRead() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      #expect(skipbackup("status", Argument(file)).status == 0)
      #expect(skipbackup("status", Argument(file), Argument(tree.path + "/missing")).status == 1)
      #expect(skipbackup("status", "--format", "xml", Argument(file)).status == 64)
    }
  }
}
