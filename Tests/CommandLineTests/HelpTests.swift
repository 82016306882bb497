import Foundation
import Testing
import TestSupport

extension CLITests {
  /// --help, --version, and the completion scripts and man page in docs/,
  /// which must say what the built tool says.
  @Suite struct HelpTests {
    /// Every subcommand the tool has (help aside), as its parser describes
    /// them: a new command is held to the same rules without a change here.
    static let commands: [String] = {
      let result = skipbackup("--experimental-dump-help")
      let object = try? JSONSerialization.jsonObject(with: Data(result.standardOutput))
      let command = (object as? [String: Any])?["command"] as? [String: Any]
      let names = (command?["subcommands"] as? [[String: Any]] ?? []).compactMap {
        $0["commandName"] as? String
      }
      return names.filter { $0 != "help" }
    }()

    @Test func everyDocumentedCommandIsThere() {
      for command in ["mark", "clear", "status", "check", "list", "export"] {
        #expect(Self.commands.contains(command), "\(command)")
      }
    }

    /// The package's root directory, from this file's place in it.
    static let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Help, the version and a completion script that
    /// cannot be written (`>/dev/full`) end with exit 1 and say why.
    @Test(arguments: [
      "--help", "--version", "help mark", "mark --help", "help",
      "--generate-completion-script bash",
    ])
    func outputThatCannotBeWrittenIsNotExitZero(arguments: String) {
      let result = run([
        "sh", "-c", Argument("\"$0\" \(arguments) >/dev/full"), Argument(skipbackupPath),
      ])
      #expect(result.status == 1, "\(arguments): \(result)")
      #expect(result.errors == "skipbackup: write error: No space left on device\n", "\(arguments)")
    }

    @Test func versionIsPrinted() throws {
      let result = skipbackup("--version")
      #expect(result.status == 0)
      #expect(result.output == "0.1.0\n")
    }

    @Test(arguments: [[], ["--help"], ["-h"], ["help"]])
    func rootHelpListsEverySubcommand(arguments: [String]) throws {
      let result = skipbackup(arguments: arguments.map { Argument($0) })
      #expect(result.status == 0, "\(result)")
      #expect(result.output.hasPrefix("OVERVIEW: "))
      for command in Self.commands {
        #expect(result.output.contains("\n  \(command) "), "\(command)")
      }
    }

    @Test(arguments: commands)
    func helpOfEachCommandIsInFullSentences(command: String) throws {
      for spelling in [[command, "--help"], [command, "-h"], ["help", command]] {
        let result = skipbackup(arguments: spelling.map { Argument($0) })
        #expect(result.status == 0, "\(spelling): \(result)")
        #expect(result.output.hasPrefix("OVERVIEW: "), "\(spelling)")
        #expect(result.output.contains("USAGE: skipbackup \(command) "), "\(spelling)")
        #expect(result.output.contains("Exit status: "), "every command states its exit status")
      }
      // Every abstract, of the command and of each option and argument, is a
      // sentence: it starts with a capital letter and ends with a full stop.
      let help = try dumpHelp()
      let commandInfo = try #require(
        (help["subcommands"] as? [[String: Any]])?.first { $0["commandName"] as? String == command }
      )
      var texts = [commandInfo["abstract"] as? String ?? ""]
      for argument in commandInfo["arguments"] as? [[String: Any]] ?? [] {
        texts.append(argument["abstract"] as? String ?? "")
      }
      for text in texts {
        #expect(text.first?.isUppercase == true, "\(command): \(text.debugDescription)")
        #expect(text.hasSuffix("."), "\(command): \(text.debugDescription)")
      }
      let discussion = try #require(commandInfo["discussion"] as? String)
      // Paragraphs, not examples (indented); a line ending with a colon may
      // lead into an example ("rsync:" and the command lines under it).
      for paragraph in discussion.components(separatedBy: "\n\n") where !paragraph.hasPrefix("  ") {
        let lines = paragraph.split(separator: "\n")
        if lines.count > 1, lines[0].hasSuffix(":") { continue }
        #expect(paragraph.first?.isUppercase == true, "\(command): \(paragraph)")
        #expect(paragraph.hasSuffix(".") || paragraph.hasSuffix(":"), "\(command): \(paragraph)")
      }
    }

    @Test func usageLinesFollowTheDocumentedInterface() throws {
      let usage = Dictionary(
        uniqueKeysWithValues: Self.commands.map { command in
          (
            command,
            skipbackup(Argument(command), "--help").lines.first { $0.hasPrefix("USAGE:") } ?? ""
          )
        })
      let marking =
        "[--mechanism <M> ...] [--recursive] [--dereference] [--one-file-system] [--files-from <FILE>] [--null] [--dry-run] [--verbose] [--quiet] [<PATH> ...]"
      #expect(usage["mark"] == "USAGE: skipbackup mark [--form <form>] " + marking)
      #expect(usage["clear"] == "USAGE: skipbackup clear " + marking)
      #expect(
        usage["status"]
          == "USAGE: skipbackup status [--mechanism <M> ...] [--recursive] [--dereference] [--one-file-system] [--files-from <FILE>] [--null] [--format <text|json>] [--verbose] [--quiet] [<PATH> ...]"
      )
      #expect(
        usage["check"] == "USAGE: skipbackup check [--mechanism <M> ...] [--dereference] <PATH> ..."
      )
      #expect(
        usage["list"]
          == "USAGE: skipbackup list [--excluded] [--included] [--mechanism <M> ...] [--one-file-system] [--null] [--quiet] <ROOT> ..."
      )
      // And the short spellings of the contract are there.
      for (command, shorts) in [
        ("mark", ["-m", "-R", "-L", "-x", "-0", "-n", "-v", "-q"]),
        ("clear", ["-m", "-R", "-L", "-x", "-0", "-n", "-v", "-q"]),
        ("status", ["-m", "-R", "-L", "-x", "-0"]), ("check", ["-m", "-L"]),
        ("list", ["-m", "-x", "-0"]),
      ] {
        let help = skipbackup(Argument(command), "--help").output
        for short in shorts {
          #expect(help.contains("  \(short), --"), "\(command) \(short)")
        }
      }
    }

    // MARK: - docs/

    @Test(arguments: ["bash", "zsh", "fish"])
    func committedCompletionScriptMatchesTheTool(shell: String) throws {
      let generated = skipbackup("--generate-completion-script", Argument(shell))
      #expect(generated.status == 0)
      let file = Self.packageRoot.appendingPathComponent("docs/completions/skipbackup.\(shell)")
      let committed = try #require(
        FileManager.default.contents(atPath: file.path), "docs/completions/skipbackup.\(shell)")
      #expect(
        Array(committed) == generated.standardOutput,
        "docs/completions/skipbackup.\(shell) is stale: run scripts/generate-docs and commit")
    }

    @Test func manPageHoldsEveryHelpTextOfTheTool() throws {
      let file = Self.packageRoot.appendingPathComponent("docs/skipbackup.1")
      let page = try #require(
        FileManager.default.contents(atPath: file.path).map { String(decoding: $0, as: UTF8.self) })
      // roff writes a backslash as \e.
      let text = page.replacingOccurrences(of: "\\e", with: "\\")
      let lines = Set(text.split(separator: "\n").map(String.init))
      let stale = "docs/skipbackup.1 is stale: run scripts/generate-docs and commit"
      let help = try dumpHelp()
      for command in help["subcommands"] as? [[String: Any]] ?? [] {
        let name = command["commandName"] as? String ?? ""
        guard name != "help" else { continue }
        #expect(lines.contains(".It Em \(name)"), "\(name): \(stale)")
        #expect(lines.contains(command["abstract"] as? String ?? ""), "\(name): \(stale)")
        let discussion = command["discussion"] as? String ?? ""
        for line in discussion.split(separator: "\n") {
          #expect(lines.contains(String(line)), "\(name): \(line): \(stale)")
        }
        for argument in command["arguments"] as? [[String: Any]] ?? [] {
          let abstract = argument["abstract"] as? String ?? ""
          #expect(lines.contains(abstract), "\(name): \(abstract): \(stale)")
          for spelling in argument["names"] as? [[String: Any]] ?? [] {
            guard spelling["kind"] as? String == "long", let long = spelling["name"] as? String
            else { continue }
            #expect(
              lines.contains { $0.hasPrefix(".It Fl ") && $0.contains(" -\(long)") },
              "\(name) --\(long): \(stale)")
          }
        }
      }
      #expect(!lines.contains(""), "blank lines are .Pp in the committed page")
    }

    /// What the parser cannot say: each command's own exit status, the
    /// header, and the committed supplement (EXAMPLES, SEE ALSO).
    @Test func manPageHasEachExitStatusAndTheSupplement() throws {
      let page = try String(
        contentsOf: Self.packageRoot.appendingPathComponent("docs/skipbackup.1"), encoding: .utf8)
      let supplement = try String(
        contentsOf: Self.packageRoot.appendingPathComponent("docs/skipbackup.1.supplement"),
        encoding: .utf8)
      let stale = "docs/skipbackup.1 is stale: run scripts/generate-docs and commit"
      let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      let version = String(skipbackup("--version").output.dropLast())
      #expect(lines.contains(".Os skipbackup " + version), "\(stale)")
      #expect(lines.contains(".ds doc-volume General Commands Manual"), "\(stale)")
      #expect(!page.contains("exits 0 on success"), "the plugin's generic EXIT STATUS: \(stale)")
      let exitStatus = try #require(lines.firstIndex(of: ".Sh EXIT STATUS"), "\(stale)")
      let help = try dumpHelp()
      for command in help["subcommands"] as? [[String: Any]] ?? [] {
        let name = command["commandName"] as? String ?? ""
        guard name != "help" else { continue }
        let discussion = command["discussion"] as? String ?? ""
        let status = try #require(
          discussion.components(separatedBy: "\n\n").first { $0.hasPrefix("Exit status: ") },
          "\(name): its help states no exit status")
        let item = try #require(
          lines[exitStatus...].firstIndex(of: ".It Cm \(name)"), "\(name): \(stale)")
        let expected = String(status.dropFirst("Exit status: ".count))
          .replacingOccurrences(of: "\n", with: " ")
        #expect(lines[item + 1] == expected, "\(name): \(stale)")
      }
      #expect(page.contains(supplement.trimmingCharacters(in: .newlines)), "\(stale)")
      #expect(supplement.contains(".Sh EXAMPLES") && supplement.contains(".Sh SEE ALSO"))
    }

    /// The tool's own description of its interface, as the man page
    /// generator reads it.
    private func dumpHelp() throws -> [String: Any] {
      let result = skipbackup("--experimental-dump-help")
      try #require(result.status == 0, "\(result)")
      let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput))
      return try #require((object as? [String: Any])?["command"] as? [String: Any])
    }
  }
}
