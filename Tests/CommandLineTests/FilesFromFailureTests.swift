import Testing
import TestSupport

/// `--files-from` reads its list through the system layer's wrappers, so
/// that a list that cannot be opened, or fails partway (a disk error, a
/// pipe whose writer died), is a failure the tests can force: it is
/// reported naming the list, what was read before is still acted on, and
/// the exit status is 1. Read through swift-system's FileDescriptor, no
/// forced errno reached it (the test failed so: exit 0, no message).
@Suite(.onTestThreads) struct FilesFromFailureTests {
  @Test(arguments: [
    ("openat:EACCES", "permission denied", 0),
    ("read:EIO", "input/output error", 0),
    // The first read has the whole list; the next one, for more, fails.
    ("read:EIO:2:1", "input/output error", 2),
  ])
  func aListThatCannotBeReadIsReported(forced: String, says: String, acted: Int) throws {
    let tree = try TemporaryDirectory()
    let first = tree.file("a", "")
    let second = tree.file("b", "")
    let list = tree.file("list", first + "\n" + second + "\n")
    let result = run(
      [Argument(skipbackupPath), "status", "--files-from", Argument(list)],
      environment: ["SKIPBACKUP_FORCE_ERRNO": forced])
    #expect(result.status == 1, "\(result)")
    #expect(result.errors == "skipbackup: \(list): \(says)\n", "\(result)")
    #expect(result.lines.count == acted, "\(result)")
  }
}
