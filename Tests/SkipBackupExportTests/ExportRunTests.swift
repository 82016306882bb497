// export's engine, called in process on a tree of generated hostile names
// marked by setfattr: the file it writes for each tool is read by that
// tool (rsync, GNU tar, restic, borg 1.2), whose backup, restored by the
// tool itself, leaves out exactly the items list --excluded prints; and
// its refusals: ROOT excluded, a name tar cannot express.

import Foundation
import SkipBackupCore
import SkipBackupListing
import SkipBackupReport
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupExport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct ExportRunTests {
  /// Where the backups go, and the environment the tools read.
  private struct Place {
    let directory: TemporaryDirectory
    var work: String { directory.path }
    var environment: [String: String] {
      [
        "RESTIC_REPOSITORY": work + "/restic", "RESTIC_PASSWORD": "skipbackup",
        "RESTIC_CACHE_DIR": work + "/restic-cache", "BORG_REPO": work + "/borg",
        "BORG_PASSPHRASE": "", "BORG_BASE_DIR": work + "/borg-base",
        "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
      ]
    }

    init() throws { directory = try TemporaryDirectory(prefix: "skipbackup-backup") }

    @discardableResult
    func call(_ arguments: [Argument], in directory: String? = nil) throws -> ProcessResult {
      let result = run(arguments, directory: directory, environment: environment)
      try #require(result.status == 0, "\(result)")
      return result
    }

    /// Backs `root` up with `tool` reading `rules`, restores the backup
    /// with the tool itself, and returns what it holds under ROOT, as
    /// absolute paths of the tree (ROOT itself included).
    func backUp(_ root: String, with tool: BackupTool, rules: String) throws -> Set<[UInt8]> {
      let restore = directory.directory("restore")
      let under: String
      switch tool {
      case .rsync:
        try call([
          "rsync", "-a", "--from0", Argument("--exclude-from=" + rules), Argument(root + "/"),
          Argument(restore + "/"),
        ])
        under = restore
      case .tar:
        let archive = work + "/backup.tar"
        try call([
          "tar", "--create", Argument("--file=" + archive), "--anchored", "--wildcards",
          Argument("--exclude-from=" + rules), "-C", Argument(root), ".",
        ])
        try call(["tar", "--extract", Argument("--file=" + archive), "-C", Argument(restore)])
        under = restore
      case .restic:
        try #require(EmptyRepository.restic.copy(to: work + "/restic").status == 0)
        try call(["restic", "backup", "-q", Argument("--exclude-file=" + rules), Argument(root)])
        try call(["restic", "restore", "latest", "--target", Argument(restore)])
        under = restore + root
      case .borg:
        try #require(EmptyRepository.borg.copy(to: work + "/borg").status == 0)
        try call(["borg", "create", Argument("--exclude-from=" + rules), "::a", Argument(root)])
        try call(["borg", "extract", "::a"], in: restore)
        under = restore + root
      }
      return Set(find(under).map { Array(root.utf8) + $0.dropFirst(under.utf8.count) })
    }
  }

  /// What `list -0 ROOT` prints, from the listing engine.
  private func listedExcluded(_ root: String) throws -> Set<[UInt8]> {
    let captured = try CapturedStreams()
    try ListRun(
      roots: [FilePath(root)], mechanisms: .all, nullTerminated: true,
      streams: Streams(output: captured.output, errors: captured.errors)
    ).run()
    return Set(captured.outputRecords)
  }

  /// The file export writes for each tool, read by that tool, makes a
  /// backup that holds every item of the tree but those list --excluded
  /// prints and what is under them: no rule widened by a glob, a variable
  /// or a stripped space takes a neighbour along, none misses its item.
  /// tar reads its file line by line, so its tree has no newline in a name.
  @Test(arguments: BackupTool.allCases)
  func theToolReadingTheFileLeavesOutExactlyTheExcludedItems(tool: BackupTool) throws {
    let tree = try MarkedTree(seed: 61, newlines: tool != .tar)
    let place = try Place()
    let rules = place.work + "/rules"
    let captured = try CapturedStreams()
    try ExportRun(
      root: FilePath(tree.root), tool: tool, mechanisms: .all, output: FilePath(rules),
      streams: Streams(output: captured.output, errors: captured.errors)
    ).run()
    #expect(captured.outputBytes.isEmpty && captured.errorText.isEmpty, "\(captured.description)")
    let excluded = try listedExcluded(tree.root)
    #expect(excluded.count > 5, "the tree is what it is meant to be")
    let expected = Set(find(tree.root)).filter { path in
      !excluded.contains { path == $0 || path.starts(with: $0 + [UInt8(ascii: "/")]) }
    }
    let stored = try place.backUp(tree.root, with: tool, rules: rules)
    #expect(
      stored == expected,
      """
      left out wrongly: \(expected.subtracting(stored).map(display).sorted())
      kept wrongly: \(stored.subtracting(expected).map(display).sorted())
      """)
  }

  /// A ROOT that is marked, or below a marked directory, gets no file: a
  /// backup of it should hold nothing, and an empty exclusion file would
  /// say the opposite. Said in one line, naming why; the run fails.
  @Test(arguments: BackupTool.allCases)
  func anExcludedRootGetsNoFile(tool: BackupTool) throws {
    let tree = try TemporaryDirectory()
    let marked = tree.directory("marked")
    setfattr(marked, .resource)
    let below = tree.directory("marked/below")
    let rules = tree.path + "/rules"
    for (root, reason) in [
      (marked, "marked: resource"), (below, "below the marked directory \(marked)"),
    ] {
      let captured = try CapturedStreams()
      #expect(throws: ReportedFailure.failure) {
        try ExportRun(
          root: FilePath(root), tool: tool, mechanisms: .all, output: FilePath(rules),
          streams: Streams(output: captured.output, errors: captured.errors)
        ).run()
      }
      #expect(
        captured.errorLines == [
          "skipbackup: \(root): excluded from backups as a whole (\(reason)), so no "
            + "\(tool.rawValue) exclusion file is written: a backup of it should hold nothing"
        ])
      #expect(captured.outputBytes.isEmpty)
      #expect(!FileManager.default.fileExists(atPath: rules))
    }
  }

  /// tar reads its file a line at a time, so a marked name with a newline
  /// cannot be excluded: export names it, fails, and still writes the
  /// other rules; tar reading that file leaves the other marked item out
  /// and keeps the one export said it would keep.
  @Test func aNameTarCannotExpressIsReportedAndTheRestWritten() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    let newline = tree.file(named: Array("two\nlines".utf8), in: "root")
    let plain = tree.file("root/plain")
    tree.file("root/kept")
    setfattr(newline, .xdg)
    setfattr(plain, .xdg)
    let place = try Place()
    let rules = place.work + "/rules"
    let captured = try CapturedStreams()
    #expect(throws: ReportedFailure.failure) {
      try ExportRun(
        root: FilePath(root), tool: .tar, mechanisms: .all, output: FilePath(rules),
        streams: Streams(output: captured.output, errors: captured.errors)
      ).run()
    }
    #expect(
      captured.errorLines == [
        "skipbackup: \(root)/two\\nlines: excluded, but tar cannot exclude it: its path holds a "
          + "newline, and tar reads --exclude-from one line a pattern (it ignores --null there); "
          + "a backup with this file would include it"
      ], "\(captured.description)")
    #expect(FileManager.default.contents(atPath: rules) == Data("./plain\n".utf8))
    let stored = try place.backUp(root, with: .tar, rules: rules)
    #expect(stored == [Array(root.utf8), newline, Array((root + "/kept").utf8)])
  }
}
