import SkipBackup
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

/// The table of mechanisms (Mechanism.swift) is the one definition: the
/// named sets and the forms a Mac's mark takes on a file server come from
/// it.
@Suite struct MechanismTableTests {
  /// The sets are the table's rows, not lists of their own.
  @Test func theNamedSetsAreTheTables() {
    for mechanism in Mechanism.allCases {
      let row = mechanism.definition
      #expect(MechanismSet.all.includes(mechanism) == mechanism.isAttribute, "\(mechanism)")
      #expect(MechanismSet.apple.includes(mechanism) == (row.origin == .apple), "\(mechanism)")
      #expect(
        MechanismSet.every.applicableToFiles.includes(mechanism) == !row.directoriesOnly,
        "\(mechanism)")
      // A Mac writes Apple's marks, and a Samba server keeps each in a stream.
      for form in [MarkForm.smb, .smbNative] {
        #expect(
          (SambaStream.written(mechanism, in: form) != nil) == (row.origin == .apple),
          "\(mechanism) \(form)")
      }
      #expect(SambaStream.written(mechanism, in: .local) == nil)
    }
    #expect(MechanismSet.every == MechanismSet(Mechanism.allCases))
    #expect(
      MechanismSet.named.map(\.name) == [
        "legacy", "resource", "xdg", "apple", "all", "nodump", "cachedir",
      ])
  }

  /// A Mac's mark as a Samba server keeps it, in each stream name the
  /// server can give it (setfattr writes the stream with Samba's extra 0):
  /// counted for its mechanism by that mechanism's value rule, listed once,
  /// and named as `status -v` names the form.
  @Test func eachSambaStreamIsReadByItsMechanismsRule() throws {
    let tree = try TemporaryDirectory()
    for stream in SambaStream.allCases {
      let name = "\(stream.name)"
      #expect(name.hasPrefix("user.DosStream.com.apple."))
      let values: [(hex: String, marked: Bool)] =
        stream.mechanism == .legacy
        ? [("0100", true), ("0000", false)] : [("0100", true), ("00", true)]
      for (number, value) in values.enumerated() {
        let file = tree.file("\(stream.rawValue)-\(number)")
        setfattr(file, name, hex: value.hex)
        let item = FileItem(path: FilePath(file))
        let listing = try ItemAttributes(of: item)
        #expect(listing.streams.members == [stream], "\(name)")
        #expect(listing.listed.isEmpty)
        #expect(
          try MechanismSet.every.marks(on: item)
            == (value.marked ? MechanismSet(stream.mechanism) : []), "\(name)=\(value.hex)")
        #expect(
          try MarkForm.labels(of: item, mechanisms: .apple)
            == (value.marked ? [stream.label] : []), "\(name)=\(value.hex)")
      }
    }
  }
}
