import SkipBackupCore
import SkipBackupReport
import SkipBackupView
import SystemPackage
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// run's engine in process, on trees it must refuse before it makes a
/// namespace: one line naming the item and what to do instead, exit status
/// 1, and COMMAND never started. COMMAND here ends the test process with
/// status 99 if it ever runs (ViewRun becomes COMMAND by exec), so a
/// refusal that is lost fails the whole run rather than passing unseen.
@Suite(
  .serialized,
  .enabled(if: getuid() == 0, "root: device nodes and trusted.* attributes need it"),
  .onTestThreads)
struct ViewRefusalTests {
  let tree: TemporaryDirectory
  let witness: String

  init() throws {
    tree = try TemporaryDirectory(prefix: "skipbackup-view")
    witness = tree.path + "/ran"
  }

  /// Runs the view of `root` with COMMAND writing the witness.
  private func attempt(_ root: String, snapshot: Bool = false) throws -> (Int32?, CapturedStreams) {
    let streams = try CapturedStreams()
    let run = ViewRun(
      roots: [FilePath(root)],
      command: [
        Array("sh".utf8), Array("-c".utf8),
        Array("touch '\(witness)'; exit 99".utf8),
      ],
      mechanisms: .all, snapshot: snapshot, quiet: true,
      streams: Streams(output: streams.output, errors: streams.errors))
    do throws(ReportedFailure) {
      try run.run()
      return (nil, streams)
    } catch {
      return (error.status, streams)
    }
  }

  private func expectOneLine(
    _ outcome: (Int32?, CapturedStreams), naming path: String, saying words: String
  ) {
    let (status, streams) = outcome
    #expect(status == 1, "\(streams.description)")
    #expect(streams.errorLines.count == 1, "\(streams.description)")
    #expect(streams.errorText.contains(path + ":"), "\(streams.description)")
    #expect(streams.errorText.contains(words), "\(streams.description)")
    #expect(streams.outputBytes.isEmpty)
    #expect(access(witness, F_OK) != 0, "COMMAND ran")
  }

  /// A character device 0/0 is a whiteout to overlayfs, which would drop it.
  @Test func aWhiteoutDeviceIsRefusedByName() throws {
    let root = tree.directory("root")
    tree.file("root/kept", "x")
    let device = tree.directory("root/layer") + "/w"
    #expect(run(["mknod", Argument(device), "c", "0", "0"]).status == 0)
    expectOneLine(try attempt(root), naming: device, saying: "skipbackup export")
  }

  /// An attribute in the overlay's own namespace would be obeyed or hidden.
  @Test func anOverlayAttributeIsRefusedByName() throws {
    let root = tree.directory("root")
    let directory = tree.directory("root/opaque")
    tree.file("root/opaque/f", "x")
    #expect(
      run(["setfattr", "-n", "trusted.overlay.opaque", "-v", "y", Argument(directory)]).status == 0)
    expectOneLine(try attempt(root), naming: directory, saying: "trusted.overlay.opaque")
  }

  /// A ROOT marked by the peers' tool is excluded as a whole.
  @Test func aMarkedRootIsRefused() throws {
    let root = tree.directory("root")
    setfattr(root, Names.legacy, hex: "01")
    expectOneLine(try attempt(root), naming: root, saying: "excluded from backups as a whole")
  }

  /// `--snapshot` of a ROOT on a filesystem that cannot snapshot.
  @Test func aSnapshotOfARootNotOnBtrfsIsRefused() throws {
    let root = tree.directory("root")
    let type = run(["stat", "-f", "-c", "%T", Argument(root)]).output
    try #require(!type.hasPrefix("btrfs"), "the temporary directory is on btrfs")
    expectOneLine(try attempt(root, snapshot: true), naming: root, saying: "not on btrfs")
  }
}
