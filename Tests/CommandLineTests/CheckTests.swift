import Foundation
import Testing
import TestSupport

extension CLITests {
  /// `skipbackup check`: prints nothing; 0 when every PATH is excluded, 1 when
  /// any is included, 2 on an error, a usage error too.
  @Suite struct CheckTests {
    /// Runs check and expects nothing on standard output.
    private func check(
      _ arguments: [Argument], directory: String? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) -> ProcessResult {
      let result = skipbackup(arguments: ["check"] + arguments, directory: directory)
      #expect(result.standardOutput.isEmpty, "check prints nothing", sourceLocation: sourceLocation)
      return result
    }

    @Test func exitStatusSaysWhetherEveryPathIsExcluded() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.file("marked")
      setfattr(marked, .resource)
      let directory = tree.directory("directory")
      setfattr(directory, .legacy)
      let inside = tree.file("directory/deeper/inside")
      let unmarked = tree.file("unmarked")

      #expect(check([Argument(marked)]).status == 0)
      #expect(check([Argument(inside)]).status == 0, "a marked directory above excludes it")
      #expect(check([Argument(marked), Argument(directory), Argument(inside)]).status == 0)
      #expect(check([Argument(unmarked)]).status == 1)
      #expect(check([Argument(marked), Argument(unmarked)]).status == 1)
      for result in [check([Argument(marked)]), check([Argument(unmarked)])] {
        #expect(result.standardError.isEmpty)
      }
    }

    @Test func errorsExit2AndNameThePath() throws {
      let tree = try TemporaryDirectory()
      let marked = tree.file("marked")
      setfattr(marked, .resource)
      let unmarked = tree.file("unmarked")
      let missing = tree.path + "/missing"
      let result = check([Argument(missing), Argument(marked)])
      #expect(result.status == 2, "\(result)")
      #expect(diagnostic(result, naming: missing)?.hasPrefix("no such file or directory") == true)
      // An error outranks an included item.
      #expect(check([Argument(unmarked), Argument(missing)]).status == 2)
    }

    @Test(arguments: [
      [], ["--bogus", "x"], ["-m", "bogus", "x"], ["--mechanism=bogus", "x"], ["-m"], ["--"],
      ["-R", "x"], ["-L"],
    ])
    func usageErrorsExit2(arguments: [String]) throws {
      let tree = try TemporaryDirectory()
      tree.file("x")
      let result = check(arguments.map { Argument($0) }, directory: tree.path)
      #expect(result.status == 2, "\(arguments): \(result)")
      #expect(result.errors.contains("Error: "), "\(result)")
    }

    @Test func anUnknownMechanismIsNamed() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let result = check(["-m", "bogus", Argument(file)])
      #expect(result.status == 2)
      #expect(result.errors.contains("unknown mechanism 'bogus'"), "\(result)")
    }

    @Test func mechanismNarrowsWhichMarksCount() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      setfattr(file, .xdg)
      // Every spelling of the option, the parser's and check's own quick path.
      for spelling in [
        ["-m", "xdg"], ["--mechanism", "xdg"], ["--mechanism=xdg"], ["-mxdg"], ["-m", "all"], [],
      ] {
        let result = check(spelling.map { Argument($0) } + [Argument(file)])
        #expect(result.status == 0, "\(spelling): \(result)")
      }
      for spelling in [
        ["-m", "apple"], ["-m", "legacy,resource"], ["-m", "legacy", "-m", "resource"],
        ["-mresource"],
      ] {
        let result = check(spelling.map { Argument($0) } + [Argument(file)])
        #expect(result.status == 1, "\(spelling): \(result)")
      }
      // The same through the parser: an option the quick path does not read.
      #expect(check(["-L", "-m", "xdg", Argument(file)]).status == 0)
      #expect(check(["-Lm", "resource", Argument(file)]).status == 1)
    }

    @Test func aSymbolicLinkIsCheckedAsItselfUnlessDereferenced() throws {
      let tree = try TemporaryDirectory()
      let target = tree.file("target")
      setfattr(target, .resource)
      let link = tree.symlink("link", to: "target")
      #expect(check([Argument(link)]).status == 1, "the link has no mark of its own")
      #expect(check(["-L", Argument(link)]).status == 0)
      #expect(check(["--dereference", Argument(link)]).status == 0)
      let marked = tree.directory("marked")
      setfattr(marked, .legacy)
      let linkInMarked = tree.symlink("marked/link", to: "../nowhere")
      #expect(check([Argument(linkInMarked)]).status == 0, "the directory above counts")
    }

    @Test func pathsAfterTheDoubleDashAndOddNames() throws {
      let tree = try TemporaryDirectory()
      let names: [[UInt8]] = ["-L".bytes, "new\nline".bytes, [0x66, 0xFF, 0xFE], " space ".bytes]
      let paths = names.map { tree.file(named: $0) }
      for path in paths { setfattr(path, .legacy) }
      #expect(check(["--"] + names.map { Argument(bytes: $0) }, directory: tree.path).status == 0)
      #expect(check(paths.map { Argument(bytes: $0) }).status == 0)
      tree.file(named: [0x2D, 0xFF])
      let result = check(["--", Argument(bytes: [0x2D, 0xFF])], directory: tree.path)
      #expect(result.status == 1, "\(result)")
    }

    @Test func helpExits0() throws {
      let result = skipbackup("check", "--help")
      #expect(result.status == 0)
      #expect(result.output.contains("USAGE: skipbackup check"))
    }
  }
}
