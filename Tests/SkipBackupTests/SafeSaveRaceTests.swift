import Foundation
import SkipBackup
import SkipBackupCore
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

#if ENABLE_MOCKING
  /// A save by root into a sticky directory while another user puts a link
  /// to root's file at the saved path and takes it away, just before each
  /// of the calls the save makes (the mocking driver runs the toggle at
  /// that call): the file the link names is never written. The save looked
  /// at the path, looked again for the sticky-directory check, and then
  /// followed the link by path: with the link there at the first look,
  /// gone at the second and back at the open, it replaced root's file.
  @Suite(.onTestThreads) struct SafeSaveRaceTests {
    @Test func anotherUsersLinkToggledDuringASaveIsNeverFollowed() throws {
      let tree = try TemporaryDirectory()
      let shared = tree.directory("shared")
      chmod(shared, 0o1777)
      let victim = tree.file("victim", "root only\n")
      chmod(victim, 0o600)
      let saved = shared + "/saved"
      func toggle() {
        let flipped = run(
          [
            "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", "sh", "-c",
            "if [ -L \"$1\" ]; then rm \"$1\"; else ln -s \"$2\" \"$1\"; fi", "toggle",
            Argument(saved), Argument(victim),
          ])
        #expect(flipped.status == 0, "\(flipped)")
      }
      // The calls a save makes before its file is in place, before and
      // after it went by descriptor: the looks, the opens and the link that
      // names the new file; and each look with each open.
      var points: [[(SystemCall, Int)]] = [
        [(.fstatat, 1)], [(.fstat, 1)], [(.openat, 1)], [(.openat, 2)], [(.linkat, 1)],
      ]
      for first in 1...3 {
        for second in 1...2 { points.append([(.fstatat, first), (.openat, second)]) }
      }
      var fired = Set<String>()
      for linked in [true, false] {
        for point in points {
          _ = run(["rm", "-f", Argument(saved)])
          if linked {
            #expect(
              run(["ln", "-s", Argument(victim), Argument(saved)], asNobody: true).status == 0)
          }
          let context = "linked \(linked), toggled before \(point)"
          var toggled = false
          let result = MockingDriver.withMocking { driver in
            for (call, number) in point {
              driver.perform(before: call, number: number) {
                toggle()
                toggled = true
              }
            }
            return Result { () throws(SkipBackupError) in
              try FilePath(saved).writeExcludedFromBackup(Array("rules".utf8))
            }
          }
          if toggled { fired.insert("\(point)") }
          let contents = try String(contentsOfFile: victim, encoding: .utf8)
          #expect(contents == "root only\n", "the victim was written: \(context)")
          guard contents == "root only\n" else { return }
          switch result {
          case .success:
            var status = stat()
            #expect(
              lstat(saved, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
                && status.st_uid == 0, "\(context)")
          case .failure(let error):
            #expect(error.path == FilePath(saved), "\(context): \(error)")
          }
        }
      }
      // A toggle that never ran proves nothing; a refusal ends a save
      // before its later calls, so each point must run from one start.
      let missed = points.map { "\($0)" }.filter { !fired.contains($0) }
      #expect(missed.isEmpty, "these toggles never ran: \(missed)")
    }
  }
#endif
