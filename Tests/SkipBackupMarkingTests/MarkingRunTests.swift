// mark and clear's engine, called in process on real trees: what it
// writes is read back by getfattr and Python's os.getxattr, what it walks
// is compared with find, and the failures the kernel will not give on
// demand (a full device) come from the mocking driver.

import Foundation
import SkipBackupCore
import SkipBackupReport
import SystemPackage
import Testing
import TestSupport

@testable import SkipBackupMarking

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct MarkingRunTests {
  /// Runs `run` with its output and errors captured; whether it failed.
  private func perform(_ run: MarkingRun, _ captured: CapturedStreams) -> ReportedFailure? {
    var run = run
    run.streams = Streams(output: captured.output, errors: captured.errors)
    do {
      try run.run()
      return nil
    } catch {
      return error
    }
  }

  /// Files and directories with names the generator makes (newlines, bytes
  /// that are not UTF-8, globs, `$HOME`), each given as a PATH.
  private func hostileItems(_ tree: TemporaryDirectory) -> [[UInt8]] {
    var generator = ByteStringGenerator(state: 71)
    var paths: Set<[UInt8]> = []
    for index in 0..<60 {
      let name = generator.name()
      let path = Array((tree.path + "/").utf8) + name
      guard !paths.contains(path) else { continue }
      if index % 4 == 0 {
        guard mkdir(path.map { CChar(bitPattern: $0) } + [0], 0o755) == 0 else { continue }
      } else {
        tree.file(named: name)
      }
      paths.insert(path)
    }
    return paths.sorted { $0.lexicographicallyPrecedes($1) }
  }

  /// Each mechanism's exact bytes land on every item, as the peers read
  /// them; an attribute that is no mark stays; clear takes every mark off
  /// and leaves that attribute. Nothing is printed without -v.
  @Test func markAndClearWriteWhatThePeersRead() throws {
    let tree = try TemporaryDirectory()
    let paths = hostileItems(tree)
    for path in paths { setfattr(path, "user.other", hex: "2a") }
    let items = ItemSelection(paths: paths.map { FilePath(bytes: $0) })
    let marked = try CapturedStreams()
    #expect(
      perform(MarkingRun(action: .mark, mechanisms: .all, items: items), marked) == nil,
      "\(marked.description)")
    #expect(marked.outputBytes.isEmpty && marked.errorText.isEmpty, "\(marked.description)")
    #expect(
      peerMarks(of: paths) == Array(repeating: [.legacy, .resource, .xdg], count: paths.count))
    for path in paths.prefix(3) { #expect(getfattr(path, "user.other") == [0x2A]) }
    let cleared = try CapturedStreams()
    #expect(perform(MarkingRun(action: .clear, mechanisms: .all, items: items), cleared) == nil)
    #expect(peerMarks(of: paths) == Array(repeating: [], count: paths.count))
    for path in paths.prefix(3) { #expect(getfattr(path, "user.other") == [0x2A]) }
  }

  /// `-R -v` prints each file and directory it marks (find's regular files
  /// and directories), skips links and FIFOs, and sums up on the errors
  /// stream; a second run changes nothing, keeps every ctime, prints no
  /// item and counts them all as already marked.
  @Test func recursiveVerboseNamesEachChangeAndIdempotentMarkingKeepsCtime() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    var generator = ByteStringGenerator(state: 72)
    // No newline: the check reads the output line by line.
    for _ in 0..<40 {
      let name = generator.name().filter { $0 != UInt8(ascii: "\n") }
      if !name.isEmpty && name != [0x2E] && name != [0x2E, 0x2E] {
        tree.file(named: name, in: "root/d\(generator.below(4))")
      }
    }
    try #require(symlink("d0", root + "/link") == 0)
    try #require(mkfifo(root + "/fifo", 0o644) == 0)
    let marked = find(root, "(", "-type", "f", "-o", "-type", "d", ")")
    let skipped = find(root, "(", "-type", "l", "-o", "-type", "p", ")")
    #expect(skipped.count == 2)
    let run = MarkingRun(
      action: .mark, mechanisms: [.xdg],
      items: ItemSelection(paths: [FilePath(root)], recursive: true),
      verbose: true)

    let first = try CapturedStreams()
    #expect(perform(run, first) == nil, "\(first.description)")
    let printed = first.outputBytes.split(separator: 10, omittingEmptySubsequences: false)
    #expect(printed.last?.isEmpty == true)
    #expect(
      Set(printed.dropLast().map { Array($0) }) == Set(marked.map { Array("marked ".utf8) + $0 }))
    #expect(printed.count - 1 == marked.count, "one line per item")
    #expect(
      first.errorLines == [
        "skipbackup: marked \(marked.count), already marked 0, skipped 2 (symbolic links, "
          + "devices, FIFOs and sockets), errors 0"
      ])
    #expect(peerMarks(of: marked) == Array(repeating: [.xdg], count: marked.count))

    letTheClockTick()
    let before = changeTimes(root)
    let second = try CapturedStreams()
    #expect(perform(run, second) == nil, "\(second.description)")
    #expect(second.outputBytes.isEmpty)
    #expect(
      second.errorLines == [
        "skipbackup: marked 0, already marked \(marked.count), skipped 2 (symbolic links, "
          + "devices, FIFOs and sockets), errors 0"
      ])
    #expect(changeTimes(root) == before, "a mark already there is not written again")
  }

  /// `-n` says what would change, one `would mark` line an item, and
  /// changes nothing: no attribute appears and no ctime moves.
  @Test func aDryRunSaysWhatWouldChangeAndChangesNothing() throws {
    let tree = try TemporaryDirectory()
    let paths = hostileItems(tree)
    setfattr(paths[0], .resource)
    let before = changeTimes(tree.path)
    let captured = try CapturedStreams()
    let run = MarkingRun(
      action: .mark, mechanisms: [.resource],
      items: ItemSelection(paths: paths.map { FilePath(bytes: $0) }), dryRun: true)
    #expect(perform(run, captured) == nil, "\(captured.description)")
    #expect(
      captured.outputBytes
        == Array(paths.dropFirst().map { Array("would mark ".utf8) + $0 + [10] }.joined()))
    #expect(changeTimes(tree.path) == before)
    #expect(peerMarks(of: Array(paths.dropFirst())) == Array(repeating: [], count: paths.count - 1))
  }

  /// A full device (ENOSPC, forced on the first attribute write) fails the
  /// item it hit, named with the kernel's reason, and the run goes on: the
  /// next PATH is marked and the run ends as a failure. In a walk the same
  /// holds for the item below ROOT that the write failed on.
  @Test func noSpaceForAMarkFailsThatItemAloneAndTheRun() throws {
    let tree = try TemporaryDirectory()
    let (first, second) = (tree.file("first"), tree.file("second"))
    let captured = try CapturedStreams()
    let failure = MockingDriver.withMocking { driver in
      driver.force(.noSpace, on: .lsetxattr, times: 1)
      return perform(
        MarkingRun(
          action: .mark, mechanisms: [.resource],
          items: ItemSelection(paths: [FilePath(first), FilePath(second)])),
        captured)
    }
    #expect(failure == .failure)
    let reason = python("import os; print(os.strerror(28))", []).first!
    #expect(
      captured.errorLines == [
        "skipbackup: \(first): no space left for extended attributes on this item (ext4 keeps "
          + "them in one block) or on the device (lsetxattr \(Names.resource): \(reason))"
      ])
    #expect(peerMarks(first).isEmpty)
    #expect(peerMarks(second) == [.resource])

    // A walk: the third write fails, on whichever item the walk reached third.
    let root = tree.directory("walked")
    for index in 0..<5 { tree.file("walked/f\(index)") }
    let walked = try CapturedStreams()
    let walkFailure = MockingDriver.withMocking { driver in
      driver.perform(before: .setxattrat, number: 3) {
        driver.force(.noSpace, on: .setxattrat, times: 1)
      }
      return perform(
        MarkingRun(
          action: .mark, mechanisms: [.xdg],
          items: ItemSelection(paths: [FilePath(root)], recursive: true)),
        walked)
    }
    #expect(walkFailure == .failure)
    let items = find(root)
    let unmarked = zip(items, peerMarks(of: items)).filter { $0.1.isEmpty }.map(\.0)
    #expect(unmarked.count == 1)
    #expect(
      walked.errorLines.count == 1
        && walked.errorLines.first?.hasPrefix(
          "skipbackup: \(String(decoding: unmarked.first ?? [], as: UTF8.self)): no space left")
          == true,
      "\(walked.description)")
  }

  /// A symbolic link given as a PATH is refused, with how to act on its
  /// target; with -L (`dereference`) the target is marked and the link,
  /// which keeps no user attributes, is not.
  @Test func aSymbolicLinkIsRefusedUnlessDereferenced() throws {
    let tree = try TemporaryDirectory()
    let target = tree.file("target")
    let link = tree.path + "/link"
    try #require(symlink("target", link) == 0)
    let refused = try CapturedStreams()
    let run = MarkingRun(
      action: .mark, mechanisms: [.legacy], items: ItemSelection(paths: [FilePath(link)]))
    #expect(perform(run, refused) == .failure)
    #expect(
      refused.errorLines == [
        "skipbackup: \(link): Linux keeps no user extended attributes on symbolic links; "
          + "-L (--dereference) acts on the link's target"
      ])
    #expect(peerMarks(target).isEmpty)

    var followed = run
    followed.items.dereference = true
    let captured = try CapturedStreams()
    #expect(perform(followed, captured) == nil, "\(captured.description)")
    #expect(peerMarks(target) == [.legacy])
  }
}
