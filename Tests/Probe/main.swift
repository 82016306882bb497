// skipbackup-probe: calls one SkipBackup library function and prints what
// came back, so that tests can run the library as another user (nobody,
// through setpriv): root bypasses the permission checks behind EACCES.
//
//   skipbackup-probe set PATH NAME HEX    ExtendedAttributes.setValue
//   skipbackup-probe get PATH NAME        ExtendedAttributes.value
//   skipbackup-probe mark PATH            the resource-value mechanism's mark
//   skipbackup-probe qa1719 PATH          addSkipBackupAttributeToItem(atPath:)
//   skipbackup-probe save PATH SIZE       writeExcludedFromBackup of SIZE bytes
//   skipbackup-probe copy PATH DEST       copyKeepingMarks(to:)
//   skipbackup-probe write TEXT...        each TEXT and a newline through the
//                                         tool's Output, flushed one by one
//   skipbackup-probe list ROOT            the ListRun engine, as `list ROOT`
//   skipbackup-probe excluded ROOT        MechanismSet.all.excludedItems(under:):
//                                         each path and a NUL
//   skipbackup-probe statuses ROOT        MechanismSet.all.statuses(under:):
//                                         "1 PATH" (excluded) or "0 PATH" and a NUL
//
// excluded and statuses end with the error the sequence threw after its
// last item, if any: its description, then each unread item's path, a
// line each, on standard error, and exit 1.
//
// Prints "ok" and any value in hex, or the error's description and then
// "errno N" on a line of its own; exits 0 or 1. write and list print what
// the tool would, and end as the tool does when its output cannot be
// written: they are how the tests see a process end (SKIPBACKUP_FORCE_ERRNO
// forces the failed write) without swift-testing's exit tests, whose
// monitor thread spins on waitid(WNOWAIT) while any other child is a zombie
// (a fifth of the suite's CPU time, measured with perf).

import Foundation
import SkipBackup
import SkipBackupListing
import SkipBackupReport
import SkipBackupSystem

let arguments = CommandLine.arguments
func hex(_ bytes: [UInt8]) -> String {
  bytes.map {
    String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
  }
  .joined()
}
func bytes(fromHex text: String) -> [UInt8] {
  var bytes: [UInt8] = []
  var index = text.startIndex
  while index < text.endIndex {
    let next = text.index(index, offsetBy: 2)
    bytes.append(UInt8(text[index..<next], radix: 16)!)
    index = next
  }
  return bytes
}

installMockingFromEnvironment()
switch arguments[1] {
case "write":
  let output = Output(streams: Streams())
  for text in arguments.dropFirst(2) {
    output.write(text + "\n")
    output.flush()
  }
  exit(0)
case "list":
  do throws(ReportedFailure) {
    try ListRun(roots: [FilePath(arguments[2])], mechanisms: .all).run()
  } catch {
    exit(1)
  }
  exit(0)
case "excluded", "statuses":
  // Written 64 KiB at a time, as the tool's Output does: a consumer whose
  // own memory stays flat, for docs/performance.md's measurements too.
  let root = FilePath(arguments[2])
  var written: [UInt8] = []
  func write(_ bytes: [UInt8]) {
    written += bytes
    if written.count >= 65_536 {
      _ = OutputDescriptor.writeAll(written, to: 1)
      written.removeAll(keepingCapacity: true)
    }
  }
  do throws(SkipBackupError) {
    if arguments[1] == "excluded" {
      for try await item in MechanismSet.all.excludedItems(under: root) {
        write(item.path.bytes + [0])
      }
    } else {
      for try await entry in MechanismSet.all.statuses(under: root) {
        write(Array((entry.status.isExcluded ? "1 " : "0 ").utf8) + entry.path.bytes + [0])
      }
    }
    _ = OutputDescriptor.writeAll(written, to: 1)
  } catch {
    _ = OutputDescriptor.writeAll(written, to: 1)
    let unread = error.unreadItems.map { $0.path.escapedDescription }
    _ = OutputDescriptor.writeAll(
      ([error.description] + unread).joined(separator: "\n") + "\n", to: 2)
    exit(1)
  }
  exit(0)
default: break
}

do throws(SkipBackupError) {
  let path = FilePath(arguments[2])
  switch arguments[1] {
  case "set":
    try ExtendedAttributes(of: FileItem(path: path)).setValue(
      bytes(fromHex: arguments[4]), of: AttributeName(arguments[3]))
    print("ok")
  case "get":
    let value = try ExtendedAttributes(of: FileItem(path: path)).value(
      of: AttributeName(arguments[3]))
    print("ok", value.map(hex) ?? "nil")
  case "mark":
    try Mechanism.resource.mark(FileItem(path: path))
    print("ok")
  case "save":
    // SIZE bytes, each the low byte of SIZE: a torn file shows as a wrong length or byte.
    let size = Int(arguments[3])!
    try path.writeExcludedFromBackup(repeatElement(UInt8(truncatingIfNeeded: size), count: size))
    print("ok")
  case "copy":
    try path.copyKeepingMarks(to: FilePath(arguments[3]))
    print("ok")
  case "qa1719":
    print(addSkipBackupAttributeToItem(atPath: arguments[2]) ? "ok" : "false")
  default:
    print("unknown probe \(arguments[1])")
  }
} catch {
  fail(error)
}

/// Prints the error and its number: a function of its own, as Swift 6.3's
/// optimizer stops with "Found outside of lifetime use" when this is the
/// catch block of the top-level code (`swift build -c release`).
func fail(_ error: SkipBackupError) -> Never {
  print(error.description)
  print("errno \(error.errno.map { String($0.rawValue) } ?? "none")")
  exit(1)
}
