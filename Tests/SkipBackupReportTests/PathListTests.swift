// `--files-from` lists, in process: records as find -print0 writes them,
// and the lines that are no path (a NUL inside, PATH_MAX or longer), named
// by their number while the others are still read.

import Foundation
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupReport

@Suite(.onTestThreads) struct PathListTests {
  /// Every record of `list`.
  private func records(_ list: String, separator: UInt8) throws -> [PathList.Record] {
    var reader = try PathList(file: FilePath(list), separator: separator)
    var records: [PathList.Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
  }

  /// With `-0` the records are find -print0's paths, byte for byte:
  /// newlines, backslashes and bytes that are not UTF-8 included.
  @Test func nulSeparatedRecordsAreFindsPathsByteForByte() throws {
    let tree = try TemporaryDirectory()
    var generator = ByteStringGenerator(state: 31)
    for _ in 0..<300 { tree.file(named: generator.name(), in: "tree") }
    let found = run(["find", Argument(tree.path + "/tree"), "-print0"])
    try #require(found.status == 0, "\(found)")
    let list = tree.path + "/list"
    try Data(found.standardOutput).write(to: URL(fileURLWithPath: list))
    let paths = try records(list, separator: 0).map { record -> [UInt8]? in
      if case .path(let path) = record { return path.bytes } else { return nil }
    }
    #expect(paths == found.nulSeparated.map { $0 })
    #expect(paths.count > 250)
  }

  /// A line holding a NUL and one of `PATH_MAX` bytes or more (80 MB here)
  /// are no path: each comes back by its line number, and the lines around
  /// them, one of 4,095 bytes (the longest a call takes) and a last one
  /// without a newline among them, are paths. Empty lines are passed over
  /// but counted.
  @Test func linesThatCannotBePathsAreNamedByNumber() throws {
    let tree = try TemporaryDirectory()
    let longest = [UInt8](repeating: UInt8(ascii: "l"), count: 4095)
    let lines: [[UInt8]] = [
      Array("first".utf8), Array("with".utf8) + [0] + Array("nul".utf8), [], longest,
      longest + [UInt8(ascii: "l")], [UInt8](repeating: UInt8(ascii: "h"), count: 80_000_000),
      Array("last".utf8),
    ]
    let list = tree.path + "/list"
    try Data(Array(lines.joined(separator: [10]))).write(to: URL(fileURLWithPath: list))
    #expect(
      try records(list, separator: 10) == [
        .path("first"), .nulInLine(2), .path(FilePath(bytes: longest)), .tooLong(5, length: 4096),
        .tooLong(6, length: 80_000_000), .path("last"),
      ])
    // Separated by NULs, a newline is part of a name.
    try Data(Array("a\nb\0\0c".utf8)).write(to: URL(fileURLWithPath: list))
    #expect(try records(list, separator: 0) == [.path("a\nb"), .path("c")])
  }

  /// What `mark --files-from` says of such lines, and of a list it cannot
  /// open: one line each, naming the list, and every path still handed on.
  @Test func theSelectionReportsEachLineThatIsNoPathAndGoesOn() throws {
    let tree = try TemporaryDirectory()
    let list = tree.path + "/list\u{1b}"
    let bytes =
      Array("a\nb".utf8) + [0] + Array("c\n".utf8) + [UInt8](repeating: 0x78, count: 5000)
      + Array("\nd\n".utf8)
    try Data(bytes).write(to: URL(fileURLWithPath: list))
    let captured = try CapturedStreams()
    let diagnostics = Diagnostics(
      streams: Streams(output: captured.output, errors: captured.errors))
    var handed: [FilePath] = []
    let selection = ItemSelection(paths: ["argument"], filesFrom: FilePath(list))
    selection.forEachPath(diagnostics) { handed.append($0) }
    #expect(handed == ["argument", "a", "d"])
    #expect(
      captured.errorLines == [
        "skipbackup: \(tree.path)/list\\x1b: line 2 holds a NUL byte, which no path can hold; "
          + "nothing on that line is acted on",
        "skipbackup: \(tree.path)/list\\x1b: line 3 is 5000 bytes, longer than any path "
          + "(PATH_MAX, 4096 with its NUL); nothing on it is acted on",
      ])
    #expect(diagnostics.failures == 2)

    let nul = try CapturedStreams()
    let nulDiagnostics = Diagnostics(streams: Streams(errors: nul.errors))
    handed = []
    ItemSelection(paths: [], filesFrom: FilePath(list), nullSeparated: true)
      .forEachPath(nulDiagnostics) { handed.append($0) }
    #expect(handed == ["a\nb"])
    #expect(nul.errorLines.count == 1)
    #expect(
      nul.errorLines.first?.contains(": record 2 is 5005 bytes, longer than any path") == true)

    let missing = try CapturedStreams()
    handed = []
    ItemSelection(paths: ["kept"], filesFrom: FilePath(tree.path + "/none"))
      .forEachPath(Diagnostics(streams: Streams(errors: missing.errors))) { handed.append($0) }
    #expect(handed == ["kept"])
    #expect(missing.errorLines == ["skipbackup: \(tree.path)/none: no such file or directory"])
  }
}
