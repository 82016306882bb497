// explain's engine, called in process: every claim it makes about borg 2,
// borg 1.2, restic, GNU tar and rsync is checked by backing the tree up
// with that tool, with exactly the options the claim is about; its JSON is
// read by Python; a PATH that cannot be read fails alone.

import Foundation
import SkipBackupCore
import SkipBackupReport
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupExplain

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct ExplainRunTests {
  /// A tree marked by the peers alone (setfattr, chattr +d, a CACHEDIR.TAG
  /// with the specification's signature): a file and a directory with
  /// content for each mechanism, and unmarked ones. Returns the root.
  private func markedTree(_ tree: TemporaryDirectory) throws -> String {
    let root = tree.directory("root")
    tree.file("root/plain")
    tree.file("root/unmarked-dir/in")
    for mark in ["legacy", "resource", "xdg", "nodump"] {
      let file = tree.file("root/\(mark)-file")
      let directory = tree.directory("root/\(mark)-dir")
      tree.file("root/\(mark)-dir/in")
      tree.file("root/\(mark)-dir/sub/deep")
      for item in [file, directory] {
        if let peer = PeerMark(rawValue: mark) {
          setfattr(item, peer)
        } else {
          let flagged = run(["chattr", "+d", Argument(item)])
          try #require(flagged.status == 0, "\(flagged)")
        }
      }
    }
    tree.file("root/cachedir-dir/in")
    tree.file("root/cachedir-dir/sub/deep")
    // https://bford.info/cachedir/: the signature starts the file.
    tree.file("root/cachedir-dir/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")
    return root
  }

  /// ExplainRun's JSON objects for `paths`, by path, from its output.
  private func explain(_ paths: [String]) throws -> [String: [String: Any]] {
    let captured = try CapturedStreams()
    try ExplainRun(
      paths: paths.map { FilePath($0) }, format: .json,
      streams: Streams(output: captured.output, errors: captured.errors)
    ).run()
    #expect(captured.errorText.isEmpty, "\(captured.description)")
    var byPath: [String: [String: Any]] = [:]
    for line in captured.outputBytes.split(separator: 10) {
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
      byPath[try #require(object["path"] as? String)] = object
    }
    #expect(byPath.count == paths.count)
    return byPath
  }

  /// For each tool and each item, "skips" is what a real backup does: left
  /// out (a directory: its contents; tar and restic keep a tagged directory
  /// and its tag) or kept, and "needs" is empty exactly when it skips.
  @Test(arguments: ["borg2", "borg1", "restic", "tar", "rsync"])
  func eachClaimHoldsInARealBackup(tool: String) throws {
    let tree = try TemporaryDirectory()
    let root = try markedTree(tree)
    let items = run(["find", Argument(root), "-mindepth", "1"]).lines
      .map { String($0.dropFirst(root.count + 1)) }.sorted()
    let explained = try explain(items.map { root + "/" + $0 })
    let backup = try backedUp(tool, root: root, work: tree.directory("work"))
    var skipped = 0
    for item in items {
      let verdict = try #require(
        (explained[root + "/" + item]?["tools"] as? [String: Any])?[tool] as? [String: Any],
        "\(item)")
      let skips = try #require(verdict["skips"] as? Bool)
      let needs = try #require(verdict["needs"] as? String)
      #expect(skips == needs.isEmpty, "\(tool) \(item): \(verdict)")
      var isDirectory: ObjCBool = false
      #expect(FileManager.default.fileExists(atPath: root + "/" + item, isDirectory: &isDirectory))
      if skips {
        skipped += 1
        let content = isDirectory.boolValue ? item + "/in" : item
        #expect(!backup.contains(content), "\(tool) claims it skips \(item)")
      } else {
        #expect(backup.contains(item), "\(tool) claims it backs up \(item)")
        if isDirectory.boolValue
          && FileManager.default.fileExists(atPath: root + "/" + item + "/in")
        {
          #expect(backup.contains(item + "/in"), "\(tool) claims it backs up \(item)")
        }
      }
    }
    // The tree holds items each tool skips, except rsync, which reads no mark.
    #expect((skipped == 0) == (tool == "rsync"), "\(tool) skips \(skipped) items")
  }

  /// Each line is one JSON object Python's json reads, whose path (from
  /// `path_base64` when it is not UTF-8) is the item's exact bytes; its
  /// marks are what getfattr and Python read, a directory's marks come
  /// back as `inherited_marks` below it, and explain reads all five
  /// mechanisms whatever other commands count.
  @Test func jsonLinesHoldTheExactPathsAndThePeersMarks() throws {
    let tree = try TemporaryDirectory()
    let marked = tree.directory("marked")
    setfattr(marked, .xdg)
    setfattr(marked, .legacy)
    var generator = ByteStringGenerator(state: 53)
    var paths: [[UInt8]] = []
    for index in 0..<40 {
      let path = tree.file(named: generator.name(), in: index % 2 == 0 ? "marked" : "")
      if paths.contains(path) { continue }
      paths.append(path)
      if index % 3 == 0 { setfattr(path, .resource) }
    }
    let captured = try CapturedStreams()
    try ExplainRun(
      paths: paths.map { FilePath(bytes: $0) }, format: .json,
      streams: Streams(output: captured.output, errors: captured.errors)
    ).run()
    let answers = python(
      #"""
      import sys, base64, json
      for line in sys.stdin:
          o = json.loads(base64.b64decode(line))
          path = base64.b64decode(o["path_base64"]) if "path_base64" in o else o["path"].encode()
          above = o["inherited_from"]
          print(base64.b64encode(path).decode(), ",".join(o["marks"]), o["excluded"],
                above is not None and above.encode().endswith(b"/marked"),
                ",".join(o["inherited_marks"]), ",".join(sorted(o["tools"])))
      """#, captured.outputBytes.split(separator: 10).map(Array.init))
    #expect(answers.count == paths.count)
    let peers = peerMarks(of: paths)
    for ((path, marks), answer) in zip(zip(paths, peers), answers) {
      let fields = answer.split(separator: " ", omittingEmptySubsequences: false)
      #expect(base64Decoded(fields[0]) == path)
      let below = path.starts(with: Array((marked + "/").utf8))
      #expect(fields[1] == (marks.isEmpty ? "" : "resource"), "\(display(path))")
      #expect(fields[2] == String(!marks.isEmpty || below).capitalized)
      #expect(fields[3] == String(below).capitalized, "\(display(path))")
      #expect(fields[4] == (below ? "legacy,xdg" : ""))
      #expect(fields[5] == "borg1,borg2,restic,rsync,tar,timemachine")
    }
    // Every mechanism, not only the attribute ones list counts by default.
    try #require(run(["chattr", "+d", Argument(marked)]).status == 0)
    tree.file("marked/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55")
    let directory = try #require(try explain([marked])[marked])
    #expect(directory["marks"] as? [String] == ["legacy", "xdg", "nodump", "cachedir"])
  }

  /// A PATH that cannot be read is reported by its path; the others are
  /// still explained, in order, and the run ends as a failure. Nothing is
  /// changed.
  @Test func anUnreadablePathFailsAloneAndTheOthersAreExplained() throws {
    let tree = try TemporaryDirectory()
    let present = tree.file("present")
    let missing = tree.path + "/missing"
    let captured = try CapturedStreams()
    #expect(throws: ReportedFailure.failure) {
      try ExplainRun(
        paths: [FilePath(missing), FilePath(present)],
        streams: Streams(output: captured.output, errors: captured.errors)
      ).run()
    }
    #expect(captured.errorLines.count == 1)
    #expect(captured.errorLines.first?.hasPrefix("skipbackup: \(missing): no such file") == true)
    #expect(captured.outputText.hasPrefix(present + ": included\n"), "\(captured.description)")
    #expect(peerMarks(present).isEmpty && getfattrDump(present).isEmpty)
  }
}
