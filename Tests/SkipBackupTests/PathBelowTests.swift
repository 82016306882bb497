import Testing

import SkipBackupCore

/// `path(_:below:)`, by whole components, and its overload for a directory
/// held as an array (the views' hot loop), which must answer alike.
@Suite struct PathBelowTests {
  @Test(
    arguments: [
      ("/a/b", "/a", "b"), ("/a/b/c", "/a/", "b/c"), ("/a", "/", "a"), ("/ab", "/a", nil),
      ("/a", "/a", nil), ("/b/a", "/a", nil), ("/a/", "/a", nil), ("a/b", "a", "b"),
      ("/", "/", nil),
    ] as [(String, String, String?)])
  func belowByWholeComponents(path: String, directory: String, expected: String?) {
    let bytes = Array(path.utf8)[...]
    let concrete = SkipBackupCore.path(bytes, below: Array(directory.utf8))
    let generic = SkipBackupCore.path(bytes, below: Array(directory.utf8)[...])
    #expect(concrete.map { String(decoding: $0, as: UTF8.self) } == expected)
    #expect(generic.map(Array.init) == concrete.map(Array.init), "\(path) below \(directory)")
  }
}
