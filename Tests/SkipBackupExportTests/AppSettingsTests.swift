// The pieces of export --for deja-dup|vorta that decide what is written:
// GVariant's text of a list read back, the merge of the user's entries with
// skipbackup's, Vorta's block, and Déjà Dup's names resolved. The apps
// themselves read what is written in CommandLineTests/BackupAppTests.

import Testing

@testable import SkipBackupExport

@Suite struct AppSettingsTests {
  private func bytes(_ strings: [String]) -> [[UInt8]] { strings.map { Array($0.utf8) } }

  @Test func gvariantTextReadsWhatGsettingsPrints() {
    #expect(GVariantText.parseStringArray(Array("@as []\n".utf8)) == [])
    #expect(
      GVariantText.parseStringArray(Array(#"['$TRASH', "it's", 'a\\b', 'new\nline\u200b']"#.utf8))
        == bytes(["$TRASH", "it's", "a\\b", "new\nline\u{200B}"]))
    for broken in ["['a'", "['a' 'b']", "'a'", "['a\\u12']", "['a'] x"] {
      #expect(GVariantText.parseStringArray(Array(broken.utf8)) == nil, "\(broken)")
    }
    let strings = bytes(["it's \"both\"", "tab\there", "\u{E9}\u{200B}", "\u{1F600}", "\\"])
    #expect(GVariantText.parseStringArray(GVariantText.stringArray(strings)) == strings)
  }

  @Test func theUsersEntriesKeepTheirPlaces() {
    let merged = mergedEntries(
      current: bytes(["$TRASH", "/old", "/mine", "/kept"]), owned: bytes(["/old", "/kept"]),
      wanted: bytes(["/kept", "/mine", "/new"]))
    // /mine is the user's too: it stays the user's, and is not claimed.
    #expect(merged.entries == bytes(["$TRASH", "/mine", "/kept", "/new"]))
    #expect(merged.owned == bytes(["/kept", "/new"]))
    let again = mergedEntries(
      current: merged.entries, owned: merged.owned, wanted: bytes(["/kept", "/mine", "/new"]))
    #expect(again.entries == merged.entries && again.owned == merged.owned)
  }

  @Test func vortasBlockIsReplacedAndTheUsersLinesStay() {
    let rules = bytes(["pf:home/me/VM", "re:^home/me/a\\nb\\Z"])
    let first = VortaExport.patterns(Array("*.tmp\n".utf8), with: rules)!
    #expect(VortaExport.patterns(first, with: rules) == first)
    #expect(VortaExport.patterns(first, with: []) == Array("*.tmp\n".utf8))
    #expect(VortaExport.patterns(nil, with: []) == nil)
    // Lines the user put after the block stay; the block goes to the end.
    let moved = first + Array("\n~/later".utf8)
    let rewritten = VortaExport.patterns(moved, with: rules.prefix(1).map { $0 })!
    let text = String(decoding: rewritten, as: UTF8.self)
    #expect(text.hasPrefix("*.tmp\n\n~/later\n# skipbackup: begin"), "\(text)")
    #expect(text.hasSuffix("pf:home/me/VM\n# skipbackup: end"), "\(text)")
  }

  @Test func dejaDupsNamesResolveAsParseKeywordsResolvesThem() {
    let home = Array("/home/me".utf8)
    let folders = DejaDupPlaces.userDirs(
      Array(
        "# written by xdg-user-dirs-update\nXDG_DOCUMENTS_DIR=\"$HOME/Docs/\"\n  XDG_MUSIC_DIR = \"/srv/music\"\nXDG_VIDEOS_DIR=\"relative\"\n"
          .utf8), home: home)
    #expect(folders[Array("XDG_DOCUMENTS_DIR".utf8)] == Array("/home/me/Docs".utf8))
    #expect(folders[Array("XDG_MUSIC_DIR".utf8)] == Array("/srv/music".utf8))
    #expect(folders[Array("XDG_VIDEOS_DIR".utf8)] == nil)
    let places = DejaDupPlaces(
      home: home, dataHome: Array("/home/me/.local/share".utf8), userName: Array("me".utf8),
      special: [
        (Array("$DOCUMENTS".utf8), Array("/home/me/Docs".utf8)), (Array("$DOWNLOAD".utf8), nil),
      ])
    #expect(places.resolve(Array("$HOME".utf8)) == home)
    #expect(places.resolve(Array("$HOME/a/../b".utf8)) == Array("/home/me/b".utf8))
    #expect(places.resolve(Array("$TRASH".utf8)) == Array("/home/me/.local/share/Trash".utf8))
    #expect(places.resolve(Array("$DOCUMENTS/x".utf8)) == Array("/home/me/Docs/x".utf8))
    #expect(places.resolve(Array("$DOWNLOAD".utf8)) == nil)
    #expect(places.resolve(Array("/srv/$USER/x".utf8)) == Array("/srv/me/x".utf8))
    #expect(places.resolve(Array("Projects".utf8)) == Array("/home/me/Projects".utf8))
    #expect(places.resolve(Array("sftp://host/x".utf8)) == nil)
    #expect(DejaDupPlaces.unnameableReason(Array("/home/me/$USER.txt".utf8)) != nil)
    #expect(DejaDupPlaces.unnameableReason([0x2F, 0x66, 0xFF]) != nil)
    #expect(DejaDupPlaces.unnameableReason(Array("/home/me/it's $HOME".utf8)) == nil)
  }
}
