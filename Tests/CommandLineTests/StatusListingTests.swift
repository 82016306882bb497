import Testing
import TestSupport

/// `status -v` says of a marked item its marks, the sweep's rule behind
/// them and where a Mac's mark is kept (a Samba stream): all three from one
/// listing of the item's names, counted with strace. Each was a listing of
/// its own: three for each marked item.
@Suite(.onTestThreads) struct StatusListingTests {
  @Test(arguments: [["-v"], ["--format", "json"]])
  func aMarkedItemIsListedOnce(_ options: [String]) throws {
    let tree = try TemporaryDirectory()
    let file = tree.file("marked")
    setfattr(file, Names.legacy, hex: "01")
    setfattr(file, "user.DosStream.com.apple.MobileBackup:$DATA", hex: "0100")
    let log = tree.path + "/strace.log"
    let result = run(
      [
        "strace", "-f", "-o", Argument(log), "-e", "trace=listxattr,llistxattr,flistxattr",
        Argument(skipbackupPath), "status",
      ] + options.map { Argument($0) } + [Argument(file)], environment: environmentUnderStrace)
    #expect(result.status == 0, "\(result)")
    let listings = try String(contentsOfFile: log, encoding: .utf8)
      .split(separator: "\n").filter { $0.contains("(\"\(file)\"") }
    #expect(listings.count == 1, "\(listings)")
    if options == ["-v"] {
      #expect(
        result.lines == [
          "[Excluded]    \(file)    (marked: legacy; found as user.com.apple.MobileBackup and "
            + "Samba stream com.apple.MobileBackup)"
        ])
    }
  }
}
