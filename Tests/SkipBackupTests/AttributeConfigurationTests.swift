import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

/// A save copies the old file's attributes except those /etc/xattr.conf
/// says to skip. When that file is there but cannot be read or parsed,
/// libattr answers "copy" for every name and says why only through an
/// error context: the save then copied what it should have skipped
/// (`security.evm`, which only the kernel may write), unseen. Now it is
/// refused, naming the file, and nothing is replaced.
@Suite(.onTestThreads) struct AttributeConfigurationTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  /// The real libattr, reading an /etc/xattr.conf with a line it cannot
  /// parse, bind-mounted over the real one in a mount namespace of the
  /// save's own (`unshare -m`), so that nothing else sees it.
  @Test func aSaveIsRefusedWhenXattrConfCannotBeParsed() throws {
    let path = tree.file("old.db", "old")
    setfattr(path, "user.keep", hex: "6b656570")
    let configuration = tree.file("xattr.conf", "user.keep\tbogus\n")
    let result = run([
      "unshare", "-m", "sh", "-c",
      "mount --bind \"$1\" /etc/xattr.conf && exec \"$2\" save \"$3\" 3",
      "sh", Argument(configuration), Argument(probePath), Argument(path),
    ])
    #expect(result.status == 1, "\(result)")
    #expect(
      result.lines.first
        == "/etc/xattr.conf: invalid argument (attr_copy_action: Invalid argument)",
      "\(result)")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
    #expect(getfattrHex(path, Names.resource) == nil)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: tree.path).sorted() == [
        "old.db", "xattr.conf",
      ])

    // The file as it is: the same save goes through.
    let saved = probe("save", Argument(path), "3")
    #expect(saved.status == 0, "\(saved)")
    #expect(getfattrHex(path, "user.keep") == "0x6b656570")
  }

  #if ENABLE_MOCKING
    /// The same refusal from the mocking driver, in process: the error is
    /// the call's, on the configuration file, not an attribute not kept.
    @Test func aForcedFailureOfAttrCopyActionRefusesTheSave() throws {
      let path = tree.file("old.db", "old")
      setfattr(path, "user.keep", hex: "6b656570")
      let result = MockingDriver.withMocking { driver in
        driver.force(.ioError, on: .attrCopyAction)
        return Result { () throws(SkipBackupError) in
          try FilePath(path).writeExcludedFromBackup(Array("new".utf8))
        }
      }
      guard case .failure(let error) = result else {
        Issue.record("the save went through")
        return
      }
      #expect(error.cause == .failed(.attrCopyAction, .ioError))
      #expect(error.path == "/etc/xattr.conf")
      #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
      #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path) == ["old.db"])
    }
  #endif
}
