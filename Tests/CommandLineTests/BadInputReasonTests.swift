import Foundation
import Testing
import TestSupport

extension CLITests.BadInputTests {
  /// A file in a directory without search permission was
  /// reported as "needs write permission on it"; the directory is the reason.
  @Test func aFileInADirectoryWithoutSearchPermissionNamesTheDirectory() throws {
    let tree = try TemporaryDirectory()
    let directory = tree.directory("readable-only")
    let file = tree.file("readable-only/file")
    chmod(file, 0o666)
    chmod(directory, 0o644)
    defer { chmod(directory, 0o755) }
    for command in ["mark", "status", "clear"] {
      let result = skipbackup(Argument(command), Argument(file), asNobody: true)
      #expect(result.status == 1, "\(result)")
      #expect(
        diagnostic(result, naming: file)?.hasPrefix(
          "permission denied: a directory on the way to it lacks search (x) permission") == true,
        "\(result)")
    }
  }

  /// `EPERM` on /proc/PID/task/TID was explained as
  /// "immutable"; it is a pseudo-filesystem that refuses user attributes.
  @Test func aProcTaskDirectoryIsNamedAsAPseudoFilesystem() throws {
    let result = shell(#""$SKIPBACKUP" mark "/proc/$$/task/$$""#)
    #expect(result.status == 1, "\(result)")
    #expect(
      result.errors.contains(
        "operation not permitted: this is on proc, a kernel pseudo-filesystem that refuses user"
          + " extended attributes"), "\(result)")
    #expect(!result.errors.contains("immutable"), "\(result)")
  }
}
