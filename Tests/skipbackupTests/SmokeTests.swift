import Testing
import TestSupport

@Suite struct SmokeTests {
  @Test func markThenStatus() throws {
    let tree = try TemporaryDirectory()
    let file = tree.file("a")
    #expect(skipbackup("mark", Argument(file)).status == 0)
    #expect(getfattrHex(file, Names.resource) == "0x" + Names.resourceValueHex)
    let status = skipbackup("status", Argument(file))
    #expect(status.output == "[Excluded]    \(file)\n")
  }
}
