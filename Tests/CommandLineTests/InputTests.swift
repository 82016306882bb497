import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// Any file name, as arguments and through --files-from, byte for byte.
  @Suite struct InputTests {
    /// Names a shell script meets: spaces, newlines, a leading dash, control
    /// characters, quotes, and bytes that are not UTF-8.
    static let oddNames: [[UInt8]] = [
      "with space".bytes, " leading and trailing ".bytes, "new\nline".bytes, "-dash".bytes,
      "--double-dash".bytes, "tab\there".bytes, "quote\"back\\slash".bytes, "\u{1B}[31mred".bytes,
      "café ☕".bytes, [0xFF, 0xFE], [0x66, 0x80, 0x6F], [0xC3, 0x28, 0x0A, 0x2D],
    ]

    static func isUTF8(_ bytes: [UInt8]) -> Bool {
      String(validating: bytes, as: UTF8.self) != nil
    }

    @Test func oddNamesAreMarkedReportedAndListedByteForByte() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let paths = Self.oddNames.map { tree.file(named: $0, in: "root") }

      // As arguments, after "--".
      let mark = skipbackup(arguments: ["mark", "--"] + paths.map { Argument(bytes: $0) })
      #expect(mark.status == 0, "\(mark)")
      #expect(mark.standardError.isEmpty)
      for path in paths { #expect(peerMarks(path) == [.resource], "\(display(path))") }

      // status: text with the exact bytes; JSON with path_base64 when not UTF-8.
      let text = skipbackup(arguments: ["status", "--"] + paths.map { Argument(bytes: $0) })
      #expect(text.status == 0, "\(text)")
      #expect(
        text.standardOutput == paths.flatMap { "[Excluded]    ".bytes + $0 + "\n".bytes })
      let json = skipbackup(
        arguments: ["status", "--format", "json", "--"] + paths.map { Argument(bytes: $0) })
      #expect(json.status == 0, "\(json)")
      let objects = jsonObjects(json)
      #expect(objects.count == paths.count, "one line an item, whatever the name holds")
      for (object, path) in zip(objects, paths) {
        #expect(pathBytes(of: object) == path, "\(display(path))")
        #expect((object["path_base64"] != nil) == !Self.isUTF8(path), "\(display(path))")
        if Self.isUTF8(path) {
          #expect(Set(object.keys) == ["path", "excluded", "marks", "inherited_from"])
          #expect(object["path"] as? String == String(decoding: path, as: UTF8.self))
        } else {
          #expect(
            Set(object.keys) == ["path", "path_base64", "excluded", "marks", "inherited_from"])
        }
        #expect(object["marks"] as? [String] == ["resource"])
      }

      // list -0: the exact bytes, NUL-terminated.
      let list = skipbackup("list", "-0", Argument(root))
      #expect(list.status == 0, "\(list)")
      #expect(Set(list.nulSeparated) == Set(paths))
      #expect(list.nulSeparated.count == paths.count)

      // check and clear take them too.
      #expect(
        skipbackup(arguments: ["check", "--"] + paths.map { Argument(bytes: $0) }).status == 0)
      let clear = skipbackup(arguments: ["clear", "-R", "--", Argument(root)])
      #expect(clear.status == 0, "\(clear)")
      for path in paths { #expect(peerMarks(path).isEmpty, "\(display(path))") }
    }

    @Test func oddNamesMarkedBySetfattrAreReportedInAWalk() throws {
      let tree = try TemporaryDirectory()
      let root = tree.directory("root")
      let paths = Self.oddNames.map { tree.file(named: $0, in: "root") }
      for path in paths { setfattr(path, .legacy) }
      let json = skipbackup("status", "-R", "--format", "json", Argument(root))
      #expect(json.status == 0, "\(json)")
      let objects = jsonObjects(json)
      let reported = Dictionary(
        uniqueKeysWithValues: objects.compactMap { object in
          pathBytes(of: object).map { ($0, object) }
        })
      #expect(Set(reported.keys) == Set(paths + [root.bytes]))
      for path in paths {
        #expect(reported[path]?["marks"] as? [String] == ["legacy"], "\(display(path))")
      }
    }

    @Test func aMessageEscapesTheNameItNames() throws {
      let tree = try TemporaryDirectory()
      let missing = tree.bytes("gone\nfor\tgood\u{1B}".bytes + [0xFF])
      let result = skipbackup("mark", Argument(bytes: missing))
      #expect(result.status == 1)
      #expect(
        result.errors.hasPrefix(
          "skipbackup: \(tree.path)/gone\\nfor\\tgood\\x1b\\xff: no such file or directory"),
        "\(result)")
      #expect(result.errors.split(separator: "\n").count == 1, "one line, whatever the name holds")
    }

    @Test func filesFromAFileOneALine() throws {
      let tree = try TemporaryDirectory()
      let a = tree.file("a")
      tree.file("with space")
      let b = tree.file("sub/b")
      let argument = tree.file("argument")
      let list = tree.file("list", "\(a)\nwith space\n\n\(b)")  // blank lines pass, no last newline
      let result = skipbackup(
        "mark", "-v", "--files-from", Argument(list), Argument(argument), directory: tree.path)
      #expect(result.status == 0, "\(result)")
      // PATH arguments first, then the list in its order.
      #expect(
        result.lines == ["marked \(argument)", "marked \(a)", "marked with space", "marked \(b)"])
      #expect(peerMarks(tree.path + "/with space") == [.resource])

      let status = skipbackup("status", Argument("--files-from=\(list)"), directory: tree.path)
      #expect(
        status.lines == [
          "[Excluded]    \(a)", "[Excluded]    with space", "[Excluded]    \(b)",
        ])
      let clear = skipbackup("clear", "--files-from", Argument(list), directory: tree.path)
      #expect(clear.status == 0)
      #expect(peerMarks(a).isEmpty && peerMarks(b).isEmpty)
    }

    @Test func filesFromStandardInputWithAndWithoutNull() throws {
      let tree = try TemporaryDirectory()
      let paths = Self.oddNames.map { tree.file(named: $0, in: "root") }
      let plain = paths.filter { !$0.contains(UInt8(ascii: "\n")) }
      let lines = plain.flatMap { $0 + "\n".bytes }
      let mark = skipbackup("mark", "--files-from", "-", input: lines)
      #expect(mark.status == 0, "\(mark)")
      for path in plain { #expect(peerMarks(path) == [.resource], "\(display(path))") }

      // Names with newlines need -0.
      let records: [UInt8] = paths.flatMap { $0 + [UInt8(0)] }
      let status = skipbackup(
        "status", "--format", "json", "--files-from", "-", "-0", input: records)
      #expect(status.status == 0, "\(status)")
      #expect(jsonObjects(status).compactMap(pathBytes(of:)) == paths)

      let clear = skipbackup("clear", "--null", "--files-from", "-", input: records)
      #expect(clear.status == 0, "\(clear)")
      let markAll = skipbackup("mark", "-m", "xdg", "--files-from=-", "--null", input: records)
      #expect(markAll.status == 0, "\(markAll)")
      for path in paths { #expect(peerMarks(path) == [.xdg], "\(display(path))") }
    }

    @Test func findPrint0PipedIntoMark() throws {
      let tree = try TemporaryDirectory()
      let temporary = [
        tree.file("build/one.tmp"), tree.file("build/deep/two.tmp"),
        tree.file("build/new\nline.tmp"),
      ]
      let kept = tree.file("build/source.c")
      let result = shell(
        #"find build -name '*.tmp' -print0 | "$SKIPBACKUP" mark --files-from - -0"#,
        directory: tree.path)
      #expect(result.status == 0, "\(result)")
      for path in temporary { #expect(peerMarks(path) == [.resource], "\(path)") }
      #expect(peerMarks(kept).isEmpty)
      let check = shell(
        #"find build -name '*.tmp' -exec "$SKIPBACKUP" check {} + && echo all-excluded"#,
        directory: tree.path)
      #expect(check.output == "all-excluded\n", "\(check)")
    }

    @Test func filesFromWithRecursive() throws {
      let tree = try TemporaryDirectory()
      let inside = tree.file("cache/x/inside")
      let list = tree.file("list", "cache\n")
      let result = skipbackup("mark", "-R", "--files-from", Argument(list), directory: tree.path)
      #expect(result.status == 0, "\(result)")
      #expect(peerMarks(inside) == [.resource])
    }

    /// A `--files-from` line of 80 MB is read in linear
    /// time and memory (it took 13.9 s), reported by its number and length
    /// rather than echoed, and the lines around it are acted on.
    @Test func aHugeFilesFromLineIsReportedShortAndQuickly() throws {
      let tree = try TemporaryDirectory()
      let before = tree.file("before")
      let after = tree.file("after")
      for (separator, option, what) in [(UInt8(10), [], "line"), (UInt8(0), ["-0"], "record")] {
        let input =
          Array(before.utf8) + [separator] + [UInt8](repeating: 0x61, count: 80_000_000)
          + [separator] + Array(after.utf8) + [separator]
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let start = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        let result = skipbackup(
          arguments: ["mark", "-m", "xdg", "--files-from", "-"] + option.map { Argument($0) },
          input: input)
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let seconds = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 - start
        #expect(result.status == 1, "\(result.errors.prefix(300))")
        #expect(
          result.errors
            == "skipbackup: -: \(what) 2 is 80000000 bytes, longer than any path (PATH_MAX, 4096 "
            + "with its NUL); nothing on it is acted on\n")
        #expect(seconds < 5 * sanitizerSlowdown, "\(seconds) s")
        #expect(peerMarks(before) == [.xdg] && peerMarks(after) == [.xdg])
        #expect(skipbackup("clear", Argument(before), Argument(after)).status == 0)
      }
    }

    /// A value that is not UTF-8 where no path is read is
    /// shown escaped in the error, not as the placeholder the parser got;
    /// a file whose name holds the placeholder's text is itself.
    @Test func argumentsThatLookLikePlaceholdersAreTakenAsGiven() throws {
      let tree = try TemporaryDirectory()
      for (arguments, shown) in [
        (["mark", "-m"], "Error: unknown mechanism '\\xff'"),
        (["status", "--format"], "Error: The value '\\xff' is invalid for '--format <text|json>'"),
        (["export", "--for"], "Error: The value '\\xff' is invalid for '--for <TOOL>'"),
      ] {
        let result = skipbackup(
          arguments: arguments.map { Argument($0) } + [
            Argument(bytes: [0xFF]), Argument(tree.path),
          ])
        #expect(result.status == 64, "\(result)")
        #expect(result.errors.hasPrefix(shown), "\(result)")
      }
      // Argument 2 is -v: taken for it, the name was looked up as "-v".
      let name = "x=\u{F8FF}skipbackup-argument-2"
      let file = tree.file(name)
      let other = tree.file("other")
      let result = skipbackup("mark", "-v", Argument(name), "-m", "xdg", directory: tree.path)
      #expect(result.status == 0, "\(result)")
      #expect(result.output == "marked \(name)\n", "\(result)")
      #expect(peerMarks(file) == [.xdg])
      #expect(peerMarks(other).isEmpty)
    }

    @Test func filesFromErrors() throws {
      let tree = try TemporaryDirectory()
      let missingList = tree.path + "/no-list"
      let argument = tree.file("argument")
      let result = skipbackup("mark", "--files-from", Argument(missingList), Argument(argument))
      #expect(result.status == 1, "\(result)")
      #expect(
        diagnostic(result, naming: missingList)?.hasPrefix("no such file or directory") == true,
        "\(result)")
      #expect(peerMarks(argument) == [.resource], "the PATH arguments are still handled")

      // A missing item in the list fails alone.
      let a = tree.file("a")
      let b = tree.file("b")
      let list = tree.file("list", "\(a)\n\(tree.path)/gone\n\(b)\n")
      let items = skipbackup("mark", "-m", "legacy", "--files-from", Argument(list))
      #expect(items.status == 1, "\(items)")
      #expect(diagnostic(items, naming: tree.path + "/gone") != nil, "\(items)")
      #expect(peerMarks(a).contains(.legacy) && peerMarks(b).contains(.legacy))

      // A directory is no list.
      let directory = skipbackup("status", "--files-from", Argument(tree.path))
      #expect(directory.status == 1, "\(directory)")
      #expect(diagnostic(directory, naming: tree.path) != nil, "\(directory)")
    }

    /// `printf 'victim\0garbage\n'` once marked `victim`, the part of the
    /// line before the NUL, and exited 0. A line with a NUL is no path.
    @Test func aLineHoldingANulIsAnErrorByItsLineNumber() throws {
      let tree = try TemporaryDirectory()
      let victim = tree.file("victim")
      let next = tree.file("next")
      let list = tree.path + "/list"
      _ = FileManager.default.createFile(
        atPath: list, contents: Data(Array("\nvictim".utf8) + [0] + Array("garbage\nnext\n".utf8)))
      for reader in [["mark", "-v"], ["status"]] {
        let result = skipbackup(
          arguments: reader.map { Argument($0) } + [Argument("--files-from"), Argument(list)],
          directory: tree.path)
        #expect(result.status == 1, "\(result)")
        #expect(
          result.errors.contains(
            "skipbackup: \(list): line 2 holds a NUL byte, which no path can hold; "
              + "nothing on that line is acted on\n"), "\(result)")
        #expect(!result.output.contains("victim"), "\(result)")
        #expect(result.output.contains("next"), "the lines after it are still read: \(result)")
      }
      #expect(peerMarks(victim).isEmpty)
      #expect(peerMarks(next) == [.resource])
    }

    @Test func aListWhoseOwnNameIsNotUTF8() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("file")
      let listName = tree.bytes([0x6C, 0xFF])
      let descriptor = open(listName.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT, 0o644)
      _ = write(descriptor, file, file.utf8.count)
      close(descriptor)
      #expect(skipbackup("mark", "--files-from", Argument(bytes: listName)).status == 0)
      #expect(peerMarks(file) == [.resource])
      #expect(
        skipbackup(arguments: ["clear", Argument(bytes: "--files-from=".bytes + listName)]).status
          == 0)
      #expect(peerMarks(file).isEmpty)
    }
  }
}
