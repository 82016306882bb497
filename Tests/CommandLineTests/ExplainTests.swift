import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

extension CLITests {
  /// `skipbackup explain` end to end: its text, advice that runs as
  /// printed, and its exit status. That every claim it makes about each
  /// backup tool holds in a real backup is checked in process
  /// (SkipBackupExplainTests).
  @Suite struct ExplainTests {
    /// Items marked by each mechanism, files and directories with content,
    /// a CACHEDIR.TAG, and unmarked ones; relative to the root.
    static let marks = ["legacy", "resource", "xdg", "nodump"]

    private func markedTree(_ tree: TemporaryDirectory) throws -> String {
      let root = tree.directory("root")
      tree.file("root/plain")
      tree.file("root/unmarked-dir/in")
      for mark in Self.marks {
        let file = tree.file("root/\(mark)-file")
        let directory = tree.directory("root/\(mark)-dir")
        tree.file("root/\(mark)-dir/in")
        tree.file("root/\(mark)-dir/sub/deep")
        for item in [file, directory] {
          let result = skipbackup("mark", "-m", Argument(mark), Argument(item))
          try #require(result.status == 0, "\(result)")
        }
      }
      tree.file("root/cachedir-dir/in")
      tree.file("root/cachedir-dir/sub/deep")
      let result = skipbackup("mark", "-m", "cachedir", Argument(root + "/cachedir-dir"))
      try #require(result.status == 0, "\(result)")
      return root
    }

    private func explain(_ root: String, _ items: [String]) throws -> [String: [String: Any]] {
      let result = skipbackup(
        arguments: ["explain", "--format", "json"] + items.map { Argument(root + "/" + $0) })
      try #require(result.status == 0, "\(result)")
      var byItem: [String: [String: Any]] = [:]
      for object in jsonObjects(result) {
        let path = try #require(object["path"] as? String)
        byItem[String(path.dropFirst(root.count + 1))] = object
      }
      try #require(byItem.count == items.count)
      return byItem
    }

    @Test func theReportNamesMarksInheritanceAndTheSweepRule() throws {
      let tree = try TemporaryDirectory()
      let root = try markedTree(tree)
      // The record as a sweep writes it: in the attribute's name.
      setfattr(root + "/xdg-dir", "user.skipbackup.sweep.xdg:caches", hex: "")
      let explained = try explain(
        root, ["plain", "xdg-dir/sub/deep", "legacy-file", "cachedir-dir"])
      let plain = try #require(explained["plain"])
      #expect(plain["excluded"] as? Bool == false)
      #expect(plain["marks"] as? [String] == [])
      #expect(plain["inherited_from"] is NSNull)
      #expect(plain["rule"] is NSNull)
      let deep = try #require(explained["xdg-dir/sub/deep"])
      #expect(deep["excluded"] as? Bool == true)
      #expect(deep["inherited_from"] as? String == root + "/xdg-dir")
      #expect(deep["rule"] as? String == "caches")
      // explain reads all five mechanisms, whatever other commands count.
      #expect(explained["cachedir-dir"]?["marks"] as? [String] == ["cachedir"])
      let legacy = try #require(explained["legacy-file"]?["tools"] as? [String: [String: Any]])
      #expect(Set(legacy.keys) == ["borg2", "borg1", "restic", "tar", "rsync", "timemachine"])
      // Time Machine reads the resource value, not the legacy attribute.
      #expect(legacy["timemachine"]?["skips"] as? Bool == false)
      let resource = try explain(root, ["resource-dir/in"])["resource-dir/in"]
      #expect(
        (resource?["tools"] as? [String: [String: Any]])?["timemachine"]?["skips"] as? Bool == true)

      let text = skipbackup("explain", Argument(root + "/xdg-dir/sub/deep"))
      #expect(text.status == 0, "\(text)")
      #expect(text.output.contains("inherited from: \(root)/xdg-dir (xdg)"), "\(text)")
      #expect(text.output.contains("sweep rule: caches"), "\(text)")
      #expect(text.output.contains("  borg2        skips it\n"), "\(text)")
    }

    /// A swept item's own record is read once, for its rule and for the
    /// mechanisms advice adds to: the item's names are listed for its marks
    /// and once more for the record, as strace counts the calls.
    @Test func aSweptItemsRecordIsReadOnce() throws {
      let tree = try TemporaryDirectory()
      let swept = tree.directory("swept")
      setfattr(swept, PeerMark.xdg)
      setfattr(swept, "user.skipbackup.sweep.xdg:caches", hex: "")
      let log = tree.path + "/strace.log"
      let traced = run(
        [
          "strace", "-f", "-o", Argument(log), "-e", "trace=listxattr,llistxattr",
          Argument(skipbackupPath), "explain", Argument(swept),
        ], environment: environmentUnderStrace)
      #expect(traced.status == 0, "\(traced)")
      #expect(traced.output.contains("sweep rule: caches"), "\(traced)")
      let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        .filter { $0.contains("listxattr(\"\(swept)\"") }
      #expect(calls.count == 2, "\(calls)")
    }

    /// What `needs` says to do for borg 2 and borg 1.2, done, makes the tool
    /// skip the item.
    @Test func doingWhatNeedsSaysMakesBorgSkipTheItem() throws {
      let tree = try TemporaryDirectory()
      let root = try markedTree(tree)
      for (tool, item) in [("borg2", "legacy-dir/in"), ("borg1", "plain"), ("restic", "xdg-dir")] {
        let before = try explain(root, [item])[item]
        let needs = try #require(
          ((before?["tools"] as? [String: Any])?[tool] as? [String: Any])?["needs"] as? String)
        #expect(needs.hasPrefix("skipbackup mark -m "), "\(needs)")
        let result = shell(needs.replacing("skipbackup ", with: "\"$SKIPBACKUP\" "))
        #expect(result.status == 0, "\(result)")
        let after = try explain(root, [item])[item]
        #expect(
          ((after?["tools"] as? [String: Any])?[tool] as? [String: Any])?["skips"] as? Bool == true)
        let backup = try backedUp(tool, root: root, work: tree.directory("work-\(tool)"))
        #expect(!backup.contains(item + (tool == "restic" ? "/in" : "")), "\(tool) \(item)")
      }
    }

    /// No advice that cannot run or misleads. A symbolic
    /// link or FIFO keeps no marks, so `mark` is not advised for it; an
    /// included item's line says the advice is how to leave it out; a
    /// verdict says the options it assumes (borg 1.2 reads nodump only with
    /// --exclude-nodump); a name starting with `-` comes after `--`.
    @Test func adviceRunsAndSaysWhatItAssumes() throws {
      let tree = try TemporaryDirectory()
      let documents = tree.directory("Documents")
      tree.symlink("link", to: "Documents")
      let fifo = tree.fifo("fifo")
      let dash = tree.file("-v")
      let text = skipbackup(
        "explain", "--", Argument(documents), Argument(tree.path + "/link"), Argument(fifo),
        Argument(dash))
      #expect(text.status == 0, "\(text)")
      let lines = text.lines
      #expect(
        lines.contains(
          "  borg2        backs it up; to leave it out: skipbackup mark -m xdg \(documents)"),
        "\(text)")
      #expect(
        lines.contains {
          $0.hasPrefix(
            "  borg1        backs it up (borg create --exclude-nodump --exclude-caches); to leave it out: "
          )
        })
      for what in ["a symbolic link", "a FIFO"] {
        #expect(
          lines.contains(
            "  borg2        backs it up; to leave it out: \(what) keeps no marks on Linux: mark the "
              + "directory that holds it (\(tree.path)), or leave it out with borg2's own exclude option"
          ), "\(text)")
      }
      #expect(!lines.contains { $0.contains("skipbackup mark -m xdg \(tree.path)/link") })
      let relative = skipbackup("explain", "--", "-v", directory: tree.path)
      let advice = try #require(
        relative.lines.first { $0.hasPrefix("  borg2") }, "\(relative)")
      #expect(advice.hasSuffix("skipbackup mark -m xdg -- -v"), "\(advice)")
      let command = String(advice[advice.range(of: "skipbackup ")!.lowerBound...])
      let result = shell(
        command.replacing("skipbackup ", with: "\"$SKIPBACKUP\" "), directory: tree.path)
      #expect(result.status == 0, "\(command): \(result)")
      #expect(peerMarks(dash) == [.xdg])
    }

    @Test func anUnreadablePathIsReportedAndTheOthersExplained() throws {
      let tree = try TemporaryDirectory()
      let present = tree.file("present")
      let missing = tree.path + "/missing"
      let result = skipbackup("explain", Argument(missing), Argument(present))
      #expect(result.status == 1, "\(result)")
      #expect(diagnostic(result, naming: missing) != nil, "\(result)")
      #expect(result.output.hasPrefix(present + ": included\n"), "\(result)")
      #expect(skipbackup("explain").status == 64)
      // explain changes nothing.
      #expect(peerMarks(present).isEmpty)
    }

    @Test func usageLinesFollowTheDocumentedInterface() {
      let du = skipbackup("du", "--help").lines.first { $0.hasPrefix("USAGE:") }
      #expect(
        du
          == "USAGE: skipbackup du [--mechanism <M> ...] [--one-file-system] [--apparent-size] [--top <N>] [--format <text|json>] [--quiet] [<ROOT> ...]"
      )
      let explain = skipbackup("explain", "--help").lines.first { $0.hasPrefix("USAGE:") }
      #expect(
        explain == "USAGE: skipbackup explain [--dereference] [--format <text|json>] <PATH> ...")
      for (command, shorts) in [("du", ["-m", "-x"]), ("explain", ["-L"])] {
        let help = skipbackup(Argument(command), "--help").output
        for short in shorts { #expect(help.contains("  \(short), --"), "\(command) \(short)") }
      }
    }
  }
}
