// The sweep's records in process, against the peers: what the kernel holds
// after a write as Python's os.listxattr and getxattr read it back, records
// setfattr wrote read by the sweep, and the trust rule against the
// kernel's own answer to whether another user may write the item.

import Foundation
import SkipBackupCore
import SkipBackupSweep
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.onTestThreads) struct SweepRecordTests {
  private static let prefix = Array("user.skipbackup.sweep".utf8)

  /// Every attribute on each of `paths` whose name starts with
  /// `user.skipbackup.sweep`, with its value, byte for byte, as Python reads them.
  private static func records(on paths: [String]) -> [[(name: [UInt8], value: [UInt8])]] {
    let lines = python(
      """
      import base64, os, sys
      for line in sys.stdin:
          path = base64.b64decode(line)
          found = []
          for name in os.listxattr(path, follow_symlinks=False):
              raw = os.fsencode(name)
              if raw.startswith(b"user.skipbackup.sweep"):
                  value = os.getxattr(path, raw, follow_symlinks=False)
                  found.append(base64.b64encode(raw).decode() + ":" + base64.b64encode(value).decode())
          print(" ".join(found))
      """, paths.map { Array($0.utf8) })
    return lines.map { line in
      line.split(separator: " ").map { pair in
        let halves = pair.split(separator: ":", omittingEmptySubsequences: false)
        return (base64Decoded(halves[0]) ?? [], base64Decoded(halves[1]) ?? [])
      }
    }
  }

  /// Records of many mechanisms and rules (any bytes but NUL, short and
  /// longer than an attribute's name may be) land in the kernel as
  /// docs/sweep.md says: in the name after `user.skipbackup.sweep.`, the
  /// mechanisms, a colon and the rule, with an empty value, or, past 255
  /// bytes, as `MECHANISMS RULE` in the value of `user.skipbackup.sweep`;
  /// each reads back the same, a second write leaves only itself, and
  /// taking it back leaves the item's marks.
  @Test func recordsLandInTheKernelAsDocumentedAndGoWhenTakenBack() throws {
    let scratch = try TemporaryDirectory()
    var generator = ByteStringGenerator(state: 29)
    let all: [MechanismSet] = [.legacy, .resource, .xdg, .nodump, .cachedir]
    var cases: [(path: String, record: SweepRecord)] = []
    for index in 0..<120 {
      var mechanisms: MechanismSet = []
      for mechanism in all where generator.below(2) == 0 { mechanisms.insert(mechanism) }
      if mechanisms.isEmpty { mechanisms = .resource }
      var rule = generator.bytes(length: 10).filter { $0 != 0 }
      // A long path rule's record, now and then, goes into the value.
      while rule.isEmpty || (index % 6 == 0 && rule.count < 260) {
        rule += generator.bytes(length: 40).filter { $0 != 0 }
      }
      let path = index % 2 == 0 ? scratch.file("item\(index)") : scratch.directory("item\(index)")
      SizedTree.mark(path, Names.legacy)
      cases.append((path, SweepRecord(mechanisms: mechanisms, rule: rule)))
    }
    #expect(cases.contains { $0.record.rule.count > 255 }, "no record in the value")
    // Each written twice: a record of another rule first, then its own.
    for (path, record) in cases {
      let item = FileItem(path: FilePath(path))
      try SweepRecord(mechanisms: .xdg, rule: Array("other".utf8)).write(to: item)
      try record.write(to: item)
      #expect(try SweepRecord.read(from: item) == record)
    }
    for ((_, record), found) in zip(cases, Self.records(on: cases.map(\.path))) {
      let mechanisms = Array(record.mechanisms.names.joined(separator: ",").utf8)
      let inName =
        Self.prefix + [UInt8(ascii: ".")] + mechanisms + [UInt8(ascii: ":")] + record.rule
      let expected =
        inName.count <= 255
        ? [(inName, [UInt8]())] : [(Self.prefix, mechanisms + [UInt8(ascii: " ")] + record.rule)]
      #expect(
        found.map { hex($0.name) + "=" + hex($0.value) }
          == expected.map { hex($0.0) + "=" + hex($0.1) },
        "\(record.ruleName)")
    }
    for (path, _) in cases {
      #expect(try SweepRecord.remove(from: FileItem(path: FilePath(path))))
    }
    let left = Self.records(on: cases.map(\.path))
    #expect(left.allSatisfy { $0.isEmpty }, "\(left.filter { !$0.isEmpty })")
    #expect(cases.allSatisfy { getfattr($0.path, Names.legacy) == [0x01] }, "a mark went too")
  }

  /// What setfattr writes in either form reads as the sweep's record; what
  /// no sweep writes (an unknown mechanism, no rule, no separator) reads as none.
  @Test func recordsSetfattrWroteReadAsTheSweepsAndOthersAsNone() throws {
    let scratch = try TemporaryDirectory()
    let cases: [(name: String, valueHex: String, record: SweepRecord?)] = [
      (
        "user.skipbackup.sweep.resource,xdg:node_modules", "",
        SweepRecord(mechanisms: [.resource, .xdg], rule: Array("node_modules".utf8))
      ),
      (
        "user.skipbackup.sweep.nodump:/home/a b/x:y", "",
        SweepRecord(mechanisms: .nodump, rule: Array("/home/a b/x:y".utf8))
      ),
      (
        "user.skipbackup.sweep", hex(Array("legacy,cachedir target".utf8)),
        SweepRecord(mechanisms: [.legacy, .cachedir], rule: Array("target".utf8))
      ),
      ("user.skipbackup.sweep.bogus:node_modules", "", nil),
      ("user.skipbackup.sweep.resource:", "", nil),
      ("user.skipbackup.sweep.resource", "", nil),
      ("user.skipbackup.sweep", hex(Array("resource".utf8)), nil),
      ("user.skipbackup.sweepresource:x", "", nil),
    ]
    for (index, (name, valueHex, record)) in cases.enumerated() {
      let path = scratch.file("item\(index)")
      let set = run(
        ["setfattr", "-n", Argument(name)]
          + (valueHex.isEmpty ? [] : ["-v", Argument("0x" + valueHex)]) + [Argument(path)])
      try #require(set.status == 0, "\(set)")
      #expect(try SweepRecord.read(from: FileItem(path: FilePath(path))) == record, "\(name)")
    }
  }

  /// A record is trusted exactly when no one but the item's owner may
  /// write the item: asked of the kernel (`setpriv`, `test -w`) as another
  /// user, in the item's group and not, over file and directory modes and
  /// an ACL that grants that user write, or grants it and masks it off.
  @Test func aRecordIsTrustedExactlyWhenNoOtherUserMayWriteTheItem() throws {
    let scratch = try TemporaryDirectory()
    let modes: [mode_t] = [0o600, 0o644, 0o640, 0o660, 0o620, 0o606, 0o602, 0o666, 0o000, 0o020]
    let directoryModes: [mode_t] = [0o700, 0o755, 0o775, 0o757, 0o1777, 0o2775, 0o3755]
    var cases: [(path: String, acl: String?)] = []
    for mode in modes {
      let path = scratch.file("file-\(String(mode, radix: 8))")
      #expect(chmod(path, mode) == 0)
      cases.append((path, nil))
    }
    for mode in directoryModes {
      let path = scratch.directory("directory-\(String(mode, radix: 8))")
      #expect(chmod(path, mode) == 0)
      cases.append((path, nil))
    }
    for acl in ["u:nobody:rw", "u:nobody:rw,m::r"] {
      let path = scratch.file("acl-\(cases.count)")
      #expect(chmod(path, 0o644) == 0)
      #expect(run(["setfacl", "-m", Argument(acl), Argument(path)]).status == 0)
      cases.append((path, acl))
    }
    for (path, acl) in cases {
      try SweepRecord(mechanisms: .resource, rule: Array("node_modules".utf8))
        .write(to: FileItem(path: FilePath(path)))
      // nobody, with nogroup alone, is in the group's class, then in the others'.
      var othersMayWrite = false
      for group in ["nogroup", "root"] {
        #expect(run(["chgrp", Argument(group), Argument(path)]).status == 0)
        if run(["test", "-w", Argument(path)], asNobody: true).status == 0 {
          othersMayWrite = true
        }
      }
      #expect(
        SweepRecord.isTrusted(on: FileItem(path: FilePath(path))) == !othersMayWrite,
        "\(path) \(acl ?? "")")
    }
  }
}
