import Foundation
import SkipBackup
import Testing
import TestSupport

/// The resource-value API on URL and FilePath, QA1719's functions, and its
/// version table.
@Suite(.onTestThreads) struct AppleAPITests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  /// The gap this package fills: Foundation on Linux stores nothing and says nothing.
  @Test func foundationOnLinuxIgnoresTheResourceValue() throws {
    var url = URL(fileURLWithPath: tree.file("a"))
    var values = URLResourceValues()
    values.isExcludedFromBackup = true
    try url.setResourceValues(values)
    #expect(getfattr(url.path, Names.resource) == nil)
    #expect(
      try url.resourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup != true)
  }

  @Test func urlReadsAndWritesTheResourceValue() throws {
    let url = URL(fileURLWithPath: tree.file("a"))
    #expect(try url.isExcludedFromBackup == false)
    try url.setExcludedFromBackup(true)
    #expect(try url.isExcludedFromBackup)
    #expect(getfattrHex(url.path, Names.resource) == "0x" + Names.resourceValueHex)
    try url.setExcludedFromBackup(false)
    #expect(try url.isExcludedFromBackup == false)
    #expect(getfattrDump(url.path).isEmpty)
  }

  @Test func urlReadsTheOtherMarksToo() throws {
    let url = URL(fileURLWithPath: tree.file("a"))
    setfattr(url.path, Names.legacy, hex: "01")
    #expect(try url.isExcludedFromBackup)
    try url.setExcludedFromBackup(false)
    #expect(getfattr(url.path, Names.legacy) == nil)
  }

  @Test func setBackupResourceValuesAppliesEveryKey() throws {
    var url = URL(fileURLWithPath: tree.file("a"))
    var values = URLResourceValues()
    values.isExcludedFromBackup = true
    let date = Date(timeIntervalSince1970: 1_000_000_000)
    values.contentModificationDate = date
    try url.setBackupResourceValues(values)
    #expect(try url.isExcludedFromBackup)
    let modified =
      try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
    #expect(modified == date)
  }

  /// The read counterpart: the call iOS code makes, one name changed, and
  /// the value filled in where Foundation on Linux leaves nil.
  @Test func backupResourceValuesReadsTheMarkBack() throws {
    var url = URL(fileURLWithPath: tree.file("a"))
    let unmarked = try url.backupResourceValues(forKeys: [.isExcludedFromBackupKey])
    #expect(unmarked.isExcludedFromBackup == false)
    var values = URLResourceValues()
    values.isExcludedFromBackup = true
    try url.setBackupResourceValues(values)
    let marked = try url.backupResourceValues(forKeys: [.isExcludedFromBackupKey, .fileSizeKey])
    #expect(marked.isExcludedFromBackup == true)
    #expect(marked.fileSize == 1, "the other keys come from Foundation, as before")
    // A mark that another tool wrote (iOS 5.0.1's, here by setfattr) reads the same.
    let legacy = URL(fileURLWithPath: tree.file("b"))
    setfattr(legacy.path, Names.legacy, hex: "01")
    #expect(
      try legacy.backupResourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup
        == true)
    // Not asked for, not filled in: the same shape as resourceValues(forKeys:).
    #expect(try url.backupResourceValues(forKeys: [.fileSizeKey]).isExcludedFromBackup == nil)
  }

  /// As the README says: an item inside a marked directory
  /// reads false through the URL API, as on Apple's platforms (the value is
  /// the item's own), while MechanismSet.status counts the directory.
  @Test func anItemInsideAMarkedDirectoryReadsFalseThroughTheURLAPI() throws {
    var directory = URL(fileURLWithPath: tree.directory("marked"))
    var values = URLResourceValues()
    values.isExcludedFromBackup = true
    try directory.setBackupResourceValues(values)
    let inside = URL(fileURLWithPath: tree.file("marked/inside"))
    let read = try inside.backupResourceValues(forKeys: [.isExcludedFromBackupKey])
    #expect(read.isExcludedFromBackup == false)
    let status = try MechanismSet.all.status(of: FilePath(inside.path))
    #expect(status.isExcluded && status.marks.isEmpty)
    #expect(status.inheritedFrom == FilePath(directory.path))
  }

  @Test func aURLThatIsNoFileIsRefusedAndShownAsGiven() throws {
    let url = URL(string: "https://example.com/a")!
    #expect { try url.setExcludedFromBackup(true) } throws: { error in
      (error as? SkipBackupError)?.description
        == "https://example.com/a: not a file URL: only files and directories carry backup marks"
    }
    #expect(addSkipBackupAttributeToItem(at: url) == false)
  }

  /// Ported code shows `error.localizedDescription`: the same message as the
  /// error's description, not Foundation's "The operation could not be completed".
  @Test func theLocalizedDescriptionIsTheMessage() throws {
    let missing = URL(fileURLWithPath: tree.path + "/missing")
    do {
      try missing.setExcludedFromBackup(true)
      Issue.record("no error for a missing file")
    } catch {
      #expect((error as Error).localizedDescription == error.description)
      #expect(
        error.localizedDescription.hasPrefix(tree.path + "/missing: no such file or directory"))
    }
  }

  @Test func filePathReadsAndWritesTheResourceValue() throws {
    let path = FilePath(tree.file("a"))
    try path.setExcludedFromBackup(true)
    #expect(try path.isExcludedFromBackup)
    #expect(pythonGetxattr(path.string, Names.resource).map(hex) == Names.resourceValueHex)
    try path.setExcludedFromBackup(false)
    #expect(try path.isExcludedFromBackup == false)
  }

  @Test func qa1719Listings() throws {
    let listing1 = tree.file("listing1")
    #expect(addSkipBackupAttributeToItem(atPath: listing1))
    #expect(getfattrHex(listing1, Names.resource) == "0x" + Names.resourceValueHex)

    let listing2 = URL(fileURLWithPath: tree.file("listing2"))
    #expect(addSkipBackupAttributeToItem(at: listing2))
    #expect(getfattrHex(listing2.path, Names.resource) == "0x" + Names.resourceValueHex)

    let listing3 = tree.file("listing3")
    #expect(addSkipBackupAttributeToItem(atPath: listing3, mechanism: .legacy))
    #expect(getfattrHex(listing3, Names.legacy) == "0x01")
    #expect(getfattr(listing3, Names.resource) == nil)

    let directory = tree.directory("Library/Application Support/com.example.app")
    #expect(addSkipBackupAttributeToItem(at: URL(fileURLWithPath: directory), mechanism: .apple))
    #expect(
      try MechanismSet.all.marks(on: FileItem(path: FilePath(directory))).names == [
        "legacy", "resource",
      ])
  }

  @Test(arguments: [
    ("4.3", SkipBackupSupport.cachesDirectoryOnly), ("5", .cachesDirectoryOnly),
    ("5.0", .cachesDirectoryOnly), ("5.0.0", .cachesDirectoryOnly),
    ("5.0.1", .mobileBackupAttribute), ("5.0.9", .mobileBackupAttribute),
    ("5.1", .excludedFromBackupResourceValue), ("5.1.1", .excludedFromBackupResourceValue),
    ("17.4", .excludedFromBackupResourceValue),
  ])
  func qa1719VersionTable(version: String, support: SkipBackupSupport) {
    #expect(SkipBackupSupport(iOSVersion: version) == support)
  }

  @Test func versionTableMechanisms() {
    #expect(SkipBackupSupport.cachesDirectoryOnly.mechanism == nil)
    #expect(SkipBackupSupport.mobileBackupAttribute.mechanism?.name == "legacy")
    #expect(SkipBackupSupport.excludedFromBackupResourceValue.mechanism?.name == "resource")
    #expect(SkipBackupSupport(iOSVersion: "five") == nil)
    #expect(SkipBackupSupport(iOSVersion: "5..1") == nil)
  }
}
