import Foundation
import Testing
import TestSupport

extension CLITests {
  /// The shell completions, driven through bash's real completion machinery:
  /// bash-completion loaded, the tool's generated script sourced, and its
  /// completion function called the way bash calls it on TAB, with
  /// COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT. Custom completions
  /// (`-m`) run the built tool, as they do in a user's shell.
  @Suite struct CompletionTests {
    static let bashCompletion = "/usr/share/bash-completion/bash_completion"

    /// What bash offers for `line` (the cursor at its end), in `directory`.
    func bashCompletions(_ line: String, in directory: String) throws -> [String] {
      try #require(
        FileManager.default.fileExists(atPath: Self.bashCompletion),
        "bash-completion is missing: scripts/deps test installs it")
      let scratch = try TemporaryDirectory(prefix: "skipbackup-completion")
      let script = scratch.path + "/skipbackup.bash"
      let generated = skipbackup("--generate-completion-script", "bash")
      try #require(generated.status == 0, "\(generated)")
      _ = FileManager.default.createFile(atPath: script, contents: Data(generated.standardOutput))
      let driver = """
        . \(Self.bashCompletion)
        . "$1"
        cd "$2"
        COMP_LINE="$3"
        COMP_POINT=${#COMP_LINE}
        read -ra COMP_WORDS <<< "$COMP_LINE"
        [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        complete -p skipbackup >/dev/null || exit 3
        _skipbackup skipbackup "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\\n' "${COMPREPLY[@]}"
        """
      // The tool is found on PATH under its own name, as the script calls it.
      let path =
        URL(fileURLWithPath: skipbackupPath).deletingLastPathComponent().path + ":"
        + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
      let result = run(
        [
          "bash", "--norc", "-c", Argument(driver), "driver", Argument(script), Argument(directory),
          Argument(line),
        ],
        environment: ["PATH": path])
      try #require(result.status == 0, "\(line): \(result)")
      return result.lines.filter { !$0.isEmpty }.sorted()
    }

    func tree() throws -> TemporaryDirectory {
      let tree = try TemporaryDirectory()
      tree.file("notes.txt")
      tree.file("Downloads/ubuntu.iso")
      tree.directory("Documents")
      return tree
    }

    @Test(arguments: [
      "skipbackup mark no", "skipbackup clear -R no", "skipbackup status -v no",
      "skipbackup check no", "skipbackup mark --files-from no", "skipbackup export -o no",
      "skipbackup export --for rsync --output no",
    ])
    func aFileNameCompletes(line: String) throws {
      let tree = try tree()
      #expect(try bashCompletions(line, in: tree.path) == ["notes.txt"])
    }

    @Test func aPathBelowADirectoryCompletes() throws {
      let tree = try tree()
      #expect(
        try bashCompletions("skipbackup mark Downloads/u", in: tree.path) == [
          "Downloads/ubuntu.iso"
        ])
    }

    @Test(arguments: ["skipbackup list Do", "skipbackup export --for tar Do"])
    func aRootCompletesToDirectoriesOnly(line: String) throws {
      let tree = try tree()
      tree.file("Dotfile")
      #expect(try bashCompletions(line, in: tree.path) == ["Documents", "Downloads"])
    }

    /// The names the parser takes, as its refusal of an unknown one lists
    /// them: what `-m` must complete, a mechanism added later too.
    func mechanismNames() throws -> [String] {
      let refusal = run([Argument(skipbackupPath), "mark", "-m", "bogus", "."])
      let line = try #require(
        refusal.errors.split(separator: "\n").first { $0.contains("the mechanisms are ") },
        "\(refusal)")
      let names = String(line).components(separatedBy: "the mechanisms are ").last!
      return names.components(separatedBy: ", ")
    }

    @Test func everyMechanismNameCompletes() throws {
      let tree = try tree()
      let names = try mechanismNames()
      #expect(names.count >= 7, "\(names)")
      #expect(try bashCompletions("skipbackup mark -m ", in: tree.path) == names.sorted())
      #expect(
        try bashCompletions("skipbackup status --mechanism re", in: tree.path) == ["resource"])
      #expect(try bashCompletions("skipbackup check -m no", in: tree.path) == ["nodump"])
    }

    @Test func aMechanismCompletesAfterTheCommasOfAList() throws {
      let tree = try tree()
      #expect(
        try bashCompletions("skipbackup clear -m legacy,re", in: tree.path) == ["legacy,resource"])
      // A name already in the list is not offered again.
      #expect(
        try bashCompletions("skipbackup clear -m all,nodump,", in: tree.path)
          == mechanismNames().filter { !["all", "nodump"].contains($0) }.map { "all,nodump," + $0 }
          .sorted())
    }

    /// Every command's paths complete, a command added later too: each
    /// positional argument and each option whose value is a PATH, ROOT, FILE
    /// or DIR names a completion (`.file()`, `.directory`), and each `-m` the
    /// mechanism names.
    @Test func everyPathAndMechanismOfEveryCommandHasACompleter() throws {
      let result = skipbackup("--experimental-dump-help")
      let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput))
      let root = try #require((object as? [String: Any])?["command"] as? [String: Any])
      for command in root["subcommands"] as? [[String: Any]] ?? [] {
        let name = command["commandName"] as? String ?? ""
        guard name != "help" else { continue }
        for argument in command["arguments"] as? [[String: Any]] ?? [] {
          let value = argument["valueName"] as? String ?? ""
          let kind = argument["completionKind"] as? [String: Any]
          if argument["kind"] as? String == "positional"
            || ["PATH", "ROOT", "FILE", "DIR"].contains(value)
          {
            #expect(
              kind?["file"] != nil || kind?["directory"] != nil,
              "skipbackup \(name) \(value): no file or directory completion")
          }
          if value == "M" {
            #expect(kind?["custom"] != nil, "skipbackup \(name) -m: no mechanism completion")
          }
        }
      }
    }

    /// zsh's script names a completer for every path and mechanism: `_files`
    /// (`-/` for directories only) and the tool's custom completion for -m.
    @Test func zshCompletesPathsAndMechanisms() throws {
      let script = skipbackup("--generate-completion-script", "zsh").output
      #expect(!script.contains("'*:PATH:'"), "a PATH with no completer")
      #expect(script.contains("'*:PATH:_files'"))
      #expect(script.contains(":FILE:_files'"))
      #expect(script.contains(":ROOT:_files -/'"))
      #expect(script.contains("---completion mark -- --mechanism"))
    }
  }
}
