import Foundation
import Testing
import TestSupport

/// A Mac's marks as a Linux file server keeps them (Samba with vfs_fruit and
/// vfs_streams_xattr, netatalk 3), planted with setfattr in the exact bytes
/// the servers store (docs/format.md), and read by the tool on the server.
enum ServerMark: String, CaseIterable, CustomTestStringConvertible {
  case smbResource, smbResourceNative, smbResourceUntyped, smbResourceNativeUntyped
  case smbResourceXMLValue
  case smbLegacy, smbLegacyUntyped
  case netatalkResource, netatalkLegacy

  var testDescription: String { rawValue }

  /// U+F022, as fruit:encoding = private stores a Mac's ":".
  static let privateColon = "\u{F022}"
  static let smbResourceName =
    "user.DosStream.com.apple.metadata\(privateColon)com_apple_backup_excludeItem:$DATA"
  static let smbResourceNativeName =
    "user.DosStream.com.apple.metadata:com_apple_backup_excludeItem:$DATA"
  static let smbLegacyName = "user.DosStream.com.apple.MobileBackup:$DATA"

  var attribute: String {
    switch self {
    case .smbResource, .smbResourceXMLValue: Self.smbResourceName
    case .smbResourceNative: Self.smbResourceNativeName
    case .smbResourceUntyped: String(Self.smbResourceName.dropLast(":$DATA".count))
    case .smbResourceNativeUntyped: String(Self.smbResourceNativeName.dropLast(":$DATA".count))
    case .smbLegacy: Self.smbLegacyName
    case .smbLegacyUntyped: String(Self.smbLegacyName.dropLast(":$DATA".count))
    case .netatalkResource: Names.resource
    case .netatalkLegacy: Names.legacy
    }
  }

  /// The stream's bytes and the server's one extra byte, 0.
  var valueHex: String {
    switch self {
    case .smbLegacy, .smbLegacyUntyped, .netatalkLegacy: "01" + "00"
    case .smbResourceXMLValue:
      hex(
        Array(
          """
          <?xml version="1.0" encoding="UTF-8"?>
          <plist version="1.0"><string>com.apple.backupd</string></plist>

          """.utf8)) + "00"
    default: Names.resourceValueHex + "00"
    }
  }

  var mechanism: String {
    switch self {
    case .smbLegacy, .smbLegacyUntyped, .netatalkLegacy: "legacy"
    default: "resource"
    }
  }
}

/// Samba streams that are not a Mac's mark, or a legacy stream that a Mac
/// would not honour: none of them counts.
let notMarks: [(name: String, hex: String)] = [
  ("user.DosStream.AFP_AfpInfo:$DATA", "0100"),
  (
    "user.DosStream.com.apple.metadata\u{F022}_kMDItemUserTags:$DATA", Names.resourceValueHex + "00"
  ),
  ("user.DosStream.com.apple.metadata\u{F022}com_apple_backup_excludeItem2:$DATA", "0100"),
  ("user.DosStream.COM.APPLE.MOBILEBACKUP:$DATA", "0100"),
  ("user.DosStream.com.apple.MobileBackup:$DATA", "00"),  // an empty stream
  ("user.DosStream.com.apple.MobileBackup:$DATA", "0000"),  // a stream of 0
  ("user.DosStream.com.apple.MobileBackup", "0000"),
  ("user.DosStream.com.apple.MobileBackup:$DATA:$DATA", "0100"),
  ("user.DosStreamcom.apple.MobileBackup:$DATA", "0100"),
  ("user.com.apple.MobileBackup", "0000"),  // netatalk's ea = samba form of a 0
]

extension CLITests {
  @Suite struct MacServerFormTests {
    @Test(arguments: ServerMark.allCases)
    func eachFormIsTheMarkItIs(_ mark: ServerMark) throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("share/marked.txt")
      tree.file("share/plain.txt")
      let root = tree.path + "/share"
      setfattr(file, mark.attribute, hex: mark.valueHex)

      let status = skipbackup("status", Argument(file))
      #expect(status.status == 0, "\(status)")
      #expect(status.output == "[Excluded]    \(file)\n")
      // -m picks the mechanism the form is, and only that one.
      let own = skipbackup("status", "-m", Argument(mark.mechanism), Argument(file))
      #expect(own.output == "[Excluded]    \(file)\n")
      let other = mark.mechanism == "legacy" ? "resource,xdg" : "legacy,xdg"
      let others = skipbackup("status", "-m", Argument(other), Argument(file))
      #expect(others.output == "[Included]    \(file)\n")
      for set in ["apple", "all"] {
        #expect(skipbackup("check", "-m", Argument(set), Argument(file)).status == 0)
      }
      #expect(skipbackup("check", Argument(file)).status == 0)

      let json = skipbackup("status", "--format", "json", Argument(file))
      #expect(json.output.contains("\"marks\": [\"\(mark.mechanism)\"]"), "\(json)")

      let list = skipbackup("list", Argument(root))
      #expect(list.status == 0, "\(list)")
      #expect(list.output == file + "\n")
      let included = skipbackup("list", "--included", Argument(root))
      #expect(!included.output.contains("marked.txt"))

      let export = skipbackup("export", "--for", "restic", Argument(root))
      #expect(export.status == 0, "\(export)")
      #expect(export.output.contains("marked.txt"), "\(export)")
      #expect(!export.output.contains("plain.txt"))

      let du = skipbackup("du", "--format", "json", Argument(root))
      #expect(du.status == 0, "\(du)")
      #expect(du.output.contains("\"excluded\": {\"files\": 1, "), "\(du)")

      let explain = skipbackup("explain", Argument(file))
      #expect(explain.output.contains("marks: \(mark.mechanism)"), "\(explain)")
    }

    @Test func verboseSaysWhichFormItFound() throws {
      let tree = try TemporaryDirectory()
      let files = ServerMark.allCases.map { tree.file($0.rawValue) }
      for (mark, file) in zip(ServerMark.allCases, files) {
        setfattr(file, mark.attribute, hex: mark.valueHex)
      }
      let result = skipbackup(arguments: ["status", "-v"] + files.map { Argument($0) })
      #expect(result.status == 0, "\(result)")
      let lines = result.lines
      func line(_ mark: ServerMark) -> String {
        lines.first { $0.contains("/\(mark.rawValue) ") } ?? ""
      }
      let resource = "Samba stream com.apple.metadata:com_apple_backup_excludeItem"
      #expect(
        line(.smbResource).hasSuffix(
          "(marked: resource; found as \(resource), "
            + "fruit:encoding = private)"))
      #expect(line(.smbResourceNative).hasSuffix("fruit:encoding = native)"))
      #expect(line(.smbResourceUntyped).hasSuffix("private, store_stream_type = no)"))
      #expect(line(.smbResourceNativeUntyped).hasSuffix("native, store_stream_type = no)"))
      #expect(
        line(.smbLegacy).hasSuffix(
          "(marked: legacy; found as Samba stream com.apple.MobileBackup)"))
      #expect(line(.smbLegacyUntyped).hasSuffix("MobileBackup, store_stream_type = no)"))
      // netatalk's form is the Linux name: nothing more to say.
      #expect(line(.netatalkLegacy).hasSuffix("(marked: legacy)"))
      #expect(line(.netatalkResource).hasSuffix("(marked: resource)"))
    }

    @Test func noOtherStreamCounts() throws {
      let tree = try TemporaryDirectory()
      let root = tree.path + "/share"
      var files: [String] = []
      for (index, stream) in notMarks.enumerated() {
        let file = tree.file("share/\(index)")
        setfattr(file, stream.name, hex: stream.hex)
        files.append(file)
      }
      let status = skipbackup(arguments: ["status", "-m", "all"] + files.map { Argument($0) })
      #expect(status.status == 0, "\(status)")
      #expect(status.lines == files.map { "[Included]    \($0)" })
      for file in files {
        #expect(skipbackup("check", "-m", "all", Argument(file)).status == 1, "\(file)")
      }
      #expect(skipbackup("list", Argument(root)).output == "")
      let du = skipbackup("du", "--format", "json", Argument(root))
      #expect(du.output.contains("\"excluded\": {\"files\": 0, "), "\(du)")
      let export = skipbackup("export", "--for", "restic", Argument(root))
      #expect(export.status == 0 && export.output.isEmpty, "\(export)")
    }

    /// `mark --form smb` writes Samba's stream in its bytes, once; `clear`
    /// takes every form away.
    @Test func markInSambasFormAndClearEveryForm() throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("f.txt")
      setfattr(file, .resource)
      // Marked in the Linux name, not yet in Samba's: a dry run says so.
      let dryRun = skipbackup("mark", "-n", "-m", "apple", "--form", "smb", Argument(file))
      #expect(dryRun.output == "would mark \(file)\n", "\(dryRun)")
      #expect(skipbackup("clear", Argument(file)).status == 0)
      let marked = skipbackup("mark", "-v", "-m", "apple", "--form", "smb", Argument(file))
      #expect(marked.status == 0, "\(marked)")
      #expect(
        pythonGetxattr(file, ServerMark.smbResourceName)
          == bytes(
            fromHex: Names.resourceValueHex + "00"))
      #expect(pythonGetxattr(file, ServerMark.smbLegacyName) == [1, 0])
      #expect(getfattr(file, Names.resource) == nil)
      #expect(getfattr(file, Names.legacy) == nil)
      let ctime = changeTime(file)
      let again = skipbackup("mark", "-v", "-m", "apple", "--form", "smb", Argument(file))
      let againDry = skipbackup("mark", "-n", "-m", "apple", "--form", "smb", Argument(file))
      #expect(againDry.output == "", "\(againDry)")
      #expect(again.status == 0 && !again.output.contains("marked \(file)"), "\(again)")
      #expect(changeTime(file) == ctime, "marking a marked item writes nothing")

      let native = skipbackup("mark", "--form", "smb-native", Argument(file))
      #expect(native.status == 0, "\(native)")
      #expect(
        pythonGetxattr(file, ServerMark.smbResourceNativeName)
          == bytes(
            fromHex: Names.resourceValueHex + "00"))
      setfattr(file, .resource)
      setfattr(file, .legacy)
      setfattr(file, "user.DosStream.AFP_AfpInfo:$DATA", hex: "0100")
      let cleared = skipbackup("clear", Argument(file))
      #expect(cleared.status == 0, "\(cleared)")
      #expect(getfattrDump(file).filter { $0.contains("apple") } == [])
      #expect(getfattr(file, "user.DosStream.AFP_AfpInfo:$DATA") == [1, 0], "not a mark: it stays")
      #expect(skipbackup("status", Argument(file)).output == "[Included]    \(file)\n")

      let wrong = skipbackup("mark", "--form", "afp", Argument(file))
      #expect(wrong.status == 64, "\(wrong)")
    }
  }
}
