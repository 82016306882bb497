import SkipBackup
import Testing
import TestSupport

@Suite struct MechanismTests {
  @Test func resourceMarkHasTheBytesOfFormatsMD() throws {
    let tree = try TemporaryDirectory()
    let file = tree.file("a")
    try BackupExcludeItemAttribute().mark(FileItem(path: FilePath(file)))
    #expect(getfattrHex(file, Names.resource) == "0x" + Names.resourceValueHex)
  }
}
