import SkipBackup
import SkipBackupCore
import SystemPackage
import Testing
import TestSupport

/// The table of mechanisms (Mechanism.swift) is the one definition: the
/// named sets, the forms a Mac's mark takes on a file server, and what mark
/// and clear ask of an item all come from it, and from one listing of the
/// item's names (ItemAttributes).
@Suite(.onTestThreads) struct MechanismTableTests {
  /// The sets are the table's rows, not lists of their own.
  @Test func theNamedSetsAreTheTables() {
    for mechanism in Mechanism.allCases {
      let row = mechanism.definition
      #expect(MechanismSet.attributes.includes(mechanism) == mechanism.isAttribute, "\(mechanism)")
      #expect(MechanismSet.all.includes(mechanism) == row.inDefaultSet, "\(mechanism)")
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

  /// Each row claims one bit of a MechanismSet of its own: a sixth row that
  /// takes a bit already taken (or none, or two) fails here, where the
  /// compiler cannot see it.
  @Test func eachRowClaimsABitOfItsOwn() {
    let bits = Mechanism.allCases.map(\.definition.bit)
    for (mechanism, bit) in zip(Mechanism.allCases, bits) {
      #expect(bit != 0 && bit & (bit - 1) == 0, "\(mechanism): \(bit)")
    }
    #expect(Set(bits).count == bits.count, "\(bits)")
    #expect(MechanismSet.every.bits.nonzeroBitCount == Mechanism.allCases.count)
  }

  /// Values setfattr writes in each attribute mechanism's name, and whether
  /// each is a mark by Apple's and freedesktop's rules (docs/format.md): a
  /// resource value of any bytes, a legacy value whose first byte is not 0,
  /// an xdg value of exactly `false`.
  static let values: [String: [(hex: String, marked: Bool)]] = [
    Names.legacy: [("01", true), ("02", true), ("00", false), ("0001", false)],
    Names.resource: [(Names.resourceValueHex, true), ("00", true)],
    Names.xdg: [("66616c7365", true), ("74727565", false), ("46414c5345", false)],
  ]

  /// Every value of every attribute mechanism, each on a file of its own:
  /// status reads it by the table's value rule, and marking the set again,
  /// which asks the listing the members share, keeps a value that is a
  /// mark and replaces one that is not with the mark's bytes, as Python's
  /// os.getxattr reads them.
  @Test func eachValueIsReadAndMarkedByTheRule() throws {
    let tree = try TemporaryDirectory()
    let names = [Names.legacy, Names.resource, Names.xdg]
    #expect(names.count == MechanismSet.attributes.count)
    for (index, name) in names.enumerated() {
      let mechanism = MechanismSet.attributes.members[index]
      #expect(mechanism.attributeName?.description == name)
      for (number, value) in Self.values[name, default: []].enumerated() {
        let file = tree.file("\(mechanism)-\(number)")
        setfattr(file, name, hex: value.hex)
        // Another member's name is there too, so the listing is made at
        // the first member and shared: legacy's, or resource's for legacy.
        let other = index == 0 ? Names.resource : Names.legacy
        setfattr(file, other, hex: index == 0 ? "00" : "01")
        let item = FileItem(path: FilePath(file))
        #expect(
          try MechanismSet(mechanism).marks(on: item)
            == (value.marked ? MechanismSet(mechanism) : []), "\(name)=\(value.hex)")
        #expect(try MechanismSet.attributes.mark(item), "\(name)=\(value.hex)")
        let written = hex(pythonGetxattr(file, name) ?? [])
        #expect(
          written == (value.marked ? value.hex : hex(mechanism.markValue!)),
          "\(name)=\(value.hex) is now \(written)")
        #expect(try MechanismSet.attributes.marks(on: item) == .attributes)
      }
    }
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

  #if ENABLE_MOCKING
    /// One member alone, marked again, reads its value (one call) where a
    /// listing would add one: `mark -m legacy` on a marked tree.
    @Test func oneMemberMarkedAgainReadsItsValue() throws {
      try withItemInADirectory { file, item in
        setfattr(file, Names.legacy, hex: "01")
        setfattr(file, Names.xdg, hex: "74727565")  // "true"
        try MockingDriver.withMocking { driver throws in
          #expect(try !MechanismSet.legacy.mark(item))
          #expect(driver.calls[.setxattrat] == 1)
          #expect(driver.calls[.getxattrat] == 1)
          #expect(driver.calls[.listxattrat] == nil)
        }
        // In the form smb only xdg writes a Linux name: alone too.
        try MockingDriver.withMocking { driver throws in
          #expect(try MechanismSet([.legacy, .xdg]).mark(item, form: .smb))
          #expect(driver.calls[.listxattrat] == nil)
        }
        #expect(getfattr(file, Names.xdg) == Array("false".utf8))
        #expect(getfattrHex(file, "user.DosStream.com.apple.MobileBackup:$DATA") == "0x0100")
      }
    }

    /// Clearing every mark from an item that carries none asks one listing
    /// of its names, and nothing else; an item that carries them is cleared
    /// from the same listing, the values read only where the table's rule
    /// needs one (legacy's first byte, xdg's "false"). Each member asked
    /// for itself: a read or a removal of each name, and a listing more for
    /// the Samba streams, four calls for the unmarked item.
    @Test func clearAsksOneListing() throws {
      try withItemInADirectory { file, item in
        try MockingDriver.withMocking { driver throws in
          #expect(try !MechanismSet.all.clear(item))
          #expect(driver.calls[.listxattrat] == 1)
          #expect(driver.calls[.getxattrat] == nil)
          #expect(driver.calls[.removexattrat] == nil)
        }
        setfattr(file, Names.legacy, hex: "01")
        setfattr(file, Names.resource, hex: Names.resourceValueHex)
        setfattr(file, Names.xdg, hex: "66616c7365")  // "false"
        try MockingDriver.withMocking { driver throws in
          #expect(try MechanismSet.all.clear(item))
          #expect(driver.calls[.listxattrat] == 1)
          #expect(driver.calls[.getxattrat] == 2)
          #expect(driver.calls[.removexattrat] == 3)
        }
        #expect(getfattr(file, Names.legacy) == nil)
        #expect(getfattr(file, Names.resource) == nil)
        #expect(getfattr(file, Names.xdg) == nil)
      }
    }

    /// Marking an unmarked item writes each mark at once, one call each;
    /// marking it again finds the first name there and asks one listing
    /// whether each is a mark, which the other members share: one write,
    /// one listing and the two values the rule reads, where each member
    /// made a write and a read of its own (six calls). Nothing is written
    /// the second time, so the ctime stays.
    @Test func markAgainAsksOneListing() throws {
      try withItemInADirectory { file, item in
        try MockingDriver.withMocking { driver throws in
          #expect(try MechanismSet.all.mark(item))
          #expect(driver.calls[.setxattrat] == 3)
          #expect(driver.calls[.listxattrat] == nil)
          #expect(driver.calls[.getxattrat] == nil)
        }
        let changed = try item.status().st_ctim
        try MockingDriver.withMocking { driver throws in
          #expect(try !MechanismSet.all.mark(item))
          #expect(driver.calls[.setxattrat] == 1)
          #expect(driver.calls[.listxattrat] == 1)
          #expect(driver.calls[.getxattrat] == 2)
        }
        let after = try item.status().st_ctim
        #expect(after.tv_sec == changed.tv_sec && after.tv_nsec == changed.tv_nsec)
        // An xdg "true" is no mark: it is replaced by the mark, from the listing.
        setfattr(file, Names.xdg, hex: "74727565")  // "true"
        try MockingDriver.withMocking { driver throws in
          #expect(try MechanismSet.all.mark(item))
          #expect(driver.calls[.listxattrat] == 1)
        }
        #expect(getfattrHex(file, Names.xdg) == "0x66616c7365")
      }
    }

    /// `body` with the file `dir/a` of a new tree, named as a walk names
    /// it, by its name in its open directory: every call on it is an `*at`
    /// one, which the mocking driver counts by name.
    private func withItemInADirectory(
      _ body: (_ file: String, _ item: FileItem) throws -> Void
    ) throws {
      let tree = try TemporaryDirectory()
      let file = tree.file("dir/a")
      let directory = try FileDescriptor.open(FilePath(tree.path + "/dir"), .readOnly)
      defer { try? directory.close() }
      try body(file, FileItem(name: "a", in: directory))
    }
  #endif
}
