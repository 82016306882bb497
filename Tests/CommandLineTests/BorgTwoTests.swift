import Foundation
import Testing
import TestSupport

/// borg 2 (2.0.0b22, built by scripts/borg2) reads `user.xdg.robots.backup`
/// = `false` and the nodump flag itself: a plain `borg create`, with no
/// exclusion file, leaves out what `skipbackup mark -m xdg` and
/// `mark -m nodump` marked. It does not read the Apple names under `user.`,
/// so resource- and legacy-marked items stay in, and so does xdg `true`.
@Suite(.onTestThreads) struct BorgTwoTests {
  @Test func plainCreateHonoursXdgAndNodumpMarks() throws {
    let borg = try borg2Path()
    let version = run([Argument(borg), "--version"])
    #expect(version.output == "borg 2.0.0b22\n", "\(version)")

    let tree = try TemporaryDirectory(prefix: "skipbackup-borg2")
    let root = tree.path + "/root"
    // Each mechanism marks a directory with content and a file, some with
    // names that need care (a newline, a wildcard, bytes that are not UTF-8).
    let names: [Bytes] = [Bytes("plain"), Bytes("nl\nname"), Bytes("st*r"), Bytes("bad") + [0xFF]]
    var byMechanism: [String: [Bytes]] = [:]
    var directories: Set<Bytes> = []
    Make.directory(Bytes(root))
    for mechanism in ["xdg", "nodump", "resource", "legacy", "unmarked"] {
      for name in names {
        let directory = Bytes("\(mechanism)-dir-") + name
        Make.directory(Bytes(root + "/") + directory)
        Make.file(Bytes(root + "/") + directory + Bytes("/content"))
        let file = Bytes("\(mechanism)-file-") + name
        Make.file(Bytes(root + "/") + file)
        byMechanism[mechanism, default: []] += [directory, file]
        directories.insert(directory)
      }
    }
    for (mechanism, items) in byMechanism where mechanism != "unmarked" {
      try check(
        skipbackup(
          arguments: ["mark", "-m", Argument(mechanism), "--"]
            + items.map { Argument(bytes: Bytes(root + "/") + $0) }))
    }
    // xdg `true` says "back this up".
    Make.file(Bytes(root + "/xdg-true"))
    setfattr(root + "/xdg-true", Names.xdg, hex: hex(Array("true".utf8)))

    let environment = [
      "BORG_REPO": tree.path + "/repository", "BORG_PASSPHRASE": "",
      "BORG_BASE_DIR": tree.path + "/base",
    ]
    try check(run([Argument(borg), "repo-create", "-e", "none"], environment: environment))
    try check(
      run(
        [Argument(borg), "create", "all", "root"], directory: tree.path, environment: environment))
    let restore = tree.path + "/restore"
    Make.directory(Bytes(restore))
    try check(
      run([Argument(borg), "extract", "all"], directory: restore, environment: environment))
    let backup = try pathSet(under: Bytes(restore + "/root"))

    func withContents(_ items: [Bytes]) -> Set<Bytes> {
      Set(items.flatMap { directories.contains($0) ? [$0, $0 + Bytes("/content")] : [$0] })
    }
    let left = withContents(byMechanism["xdg"]! + byMechanism["nodump"]!)
    let kept = withContents(
      byMechanism["resource"]! + byMechanism["legacy"]! + byMechanism["unmarked"]!
    )
    .union([Bytes(""), Bytes("xdg-true")])
    #expect(left.count == 24 && kept.count == 38)
    let wronglyKept = backup.intersection(left).map(\.display).sorted()
    #expect(wronglyKept.isEmpty, "borg 2 backed up xdg- or nodump-marked items: \(wronglyKept)")
    let lost = kept.subtracting(backup).map(\.display).sorted()
    #expect(lost.isEmpty, "borg 2 left out items it should keep: \(lost)")
    #expect(backup == kept, "\(difference(backup, kept))")
  }
}
