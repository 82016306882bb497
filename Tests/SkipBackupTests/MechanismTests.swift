import SkipBackup
import Testing
import TestSupport

/// The bytes each mechanism writes, as peers nobody here wrote read them,
/// and what the library reads from marks those peers write.
@Suite(.onTestThreads) struct MechanismTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  @Test func resourceValueIsTheSixtyOneBytesOfFormatsMD() throws {
    let file = tree.file("a")
    #expect(try Mechanism.resource.mark(FileItem(path: FilePath(file))))
    #expect(Mechanism.resource.markValue?.count == 61)
    #expect(getfattrHex(file, Names.resource) == "0x" + Names.resourceValueHex)
    #expect(pythonGetxattr(file, Names.resource).map(hex) == Names.resourceValueHex)
  }

  @Test func legacyMarkIsOneByteOne() throws {
    let file = tree.file("a")
    try Mechanism.legacy.mark(FileItem(path: FilePath(file)))
    #expect(getfattrHex(file, Names.legacy) == "0x01")
    #expect(pythonGetxattr(file, Names.legacy) == [1])
  }

  @Test func xdgMarkIsFalse() throws {
    let file = tree.file("a")
    try Mechanism.xdg.mark(FileItem(path: FilePath(file)))
    #expect(getfattr(file, Names.xdg) == Array("false".utf8))
  }

  @Test(arguments: [
    (Names.legacy, "01", true), (Names.legacy, "02", true), (Names.legacy, "00", false),
    (Names.legacy, "0001", false), (Names.resource, Names.resourceValueHex, true),
    (Names.resource, "00", true), (Names.xdg, "66616c7365", true),  // "false"
    (Names.xdg, "74727565", false),  // "true"
    (Names.xdg, "46616c7365", false),  // "False": only the exact value counts
  ])
  func readsWhatSetfattrWrites(name: String, value: String, marked: Bool) throws {
    let file = tree.file("a")
    setfattr(file, name, hex: value)
    let mechanisms = MechanismSet.all
    let marks = try mechanisms.marks(on: FileItem(path: FilePath(file)))
    let expected =
      marked ? [mechanisms.members.first { $0.name == Self.shortName(name) }!.name] : []
    #expect(marks.names == expected)
    #expect(try mechanisms.isMarked(FileItem(path: FilePath(file))) == marked)
  }

  static func shortName(_ attribute: String) -> String {
    attribute == Names.legacy ? "legacy" : attribute == Names.resource ? "resource" : "xdg"
  }

  @Test func markingAMarkedItemWritesNothing() throws {
    let file = tree.file("a")
    let item = FileItem(path: FilePath(file))
    for mechanism in [Mechanism.legacy, .resource, .xdg] {
      #expect(try mechanism.mark(item))
      let before = changeTime(file)
      usleep(20_000)
      #expect(try mechanism.mark(item) == false)
      #expect(changeTime(file) == before, "\(mechanism.name) wrote again")
    }
  }

  @Test func aDifferentMarkValueIsLeftAsItIs() throws {
    // A Mac, or tmutil, may have written another value: it reads as a mark, so it stays.
    let file = tree.file("a")
    setfattr(file, Names.resource, hex: "00")
    #expect(try Mechanism.resource.mark(FileItem(path: FilePath(file))) == false)
    #expect(getfattrHex(file, Names.resource) == "0x00")
  }

  @Test func aValueThatIsNoMarkIsReplaced() throws {
    let file = tree.file("a")
    setfattr(file, Names.legacy, hex: "00")
    setfattr(file, Names.xdg, hex: "74727565")
    #expect(try Mechanism.legacy.mark(FileItem(path: FilePath(file))))
    #expect(try Mechanism.xdg.mark(FileItem(path: FilePath(file))))
    #expect(getfattrHex(file, Names.legacy) == "0x01")
    #expect(getfattr(file, Names.xdg) == Array("false".utf8))
  }

  @Test func clearingIsIdempotentAndLeavesOtherAttributes() throws {
    let file = tree.file("a")
    setfattr(file, "user.other", hex: "abcd")
    setfattr(file, Names.xdg, hex: "74727565")  // "true" says the opposite of a mark
    let item = FileItem(path: FilePath(file))
    try MechanismSet.apple.mark(item)
    #expect(try MechanismSet.all.clear(item))
    #expect(try MechanismSet.all.clear(item) == false)
    #expect(getfattr(file, Names.legacy) == nil)
    #expect(getfattr(file, Names.resource) == nil)
    #expect(getfattrHex(file, "user.other") == "0xabcd")
    #expect(getfattr(file, Names.xdg) == Array("true".utf8))
  }

  @Test func aSetSaysWhichMembersMark() throws {
    let file = tree.file("a")
    let item = FileItem(path: FilePath(file))
    #expect(try MechanismSet.all.marks(on: item).isEmpty)
    try MechanismSet.apple.mark(item)
    #expect(try MechanismSet.all.marks(on: item).names == ["legacy", "resource"])
    #expect(try MechanismSet([.xdg]).isMarked(item) == false)
  }

  @Test func namesParseInAFixedOrder() throws {
    #expect(try MechanismSet(parsing: "xdg,legacy").names == ["legacy", "xdg"])
    #expect(try MechanismSet(parsing: "apple").names == ["legacy", "resource"])
    #expect(try MechanismSet(parsing: "all").names == ["legacy", "resource", "xdg"])
    #expect(
      try MechanismSet(parsing: "all,nodump,cachedir").names == [
        "legacy", "resource", "xdg", "nodump", "cachedir",
      ])
    #expect(throws: UnknownMechanismError.self) { try MechanismSet(parsing: "legacy,icloud") }
    let unknown = try #require(throws: UnknownMechanismError.self) {
      try MechanismSet(parsing: "icloud")
    }
    #expect(unknown.description.contains("'icloud'"))
    #expect(unknown.description.contains("legacy, resource, xdg"))
  }

  @Test func nodumpIsTheFlagChattrSets() throws {
    let file = tree.file("a")
    let item = FileItem(path: FilePath(file))
    #expect(try Mechanism.nodump.isMarked(item) == false)
    #expect(try Mechanism.nodump.mark(item))
    #expect(run(["lsattr", Argument(file)]).output.prefix(while: { $0 != " " }).contains("d"))
    #expect(try Mechanism.nodump.mark(item) == false)
    #expect(try Mechanism.nodump.clear(item))
    #expect(!run(["lsattr", Argument(file)]).output.prefix(while: { $0 != " " }).contains("d"))
    _ = run(["chattr", "+d", Argument(file)])
    #expect(try Mechanism.nodump.isMarked(item))
  }

  @Test func cacheDirectoryTagIsWrittenOnlyInDirectoriesAndNeverOverAForeignFile() throws {
    let directory = tree.directory("cache")
    let item = FileItem(path: FilePath(directory))
    #expect(try Mechanism.cachedir.mark(item))
    let tag = try String(contentsOfFile: directory + "/CACHEDIR.TAG", encoding: .utf8)
    #expect(tag.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55"))
    #expect(try Mechanism.cachedir.isMarked(item))
    #expect(try Mechanism.cachedir.mark(item) == false)
    #expect(try Mechanism.cachedir.clear(item))
    #expect(!FileManager.default.fileExists(atPath: directory + "/CACHEDIR.TAG"))

    tree.file("cache/CACHEDIR.TAG", "my notes, not a tag")
    #expect(try Mechanism.cachedir.isMarked(item) == false)
    let foreign = #expect(throws: SkipBackupError.self) { try Mechanism.cachedir.mark(item) }
    #expect(foreign?.refusal == .foreignCacheDirectoryTag)
    #expect(foreign?.path == FilePath(directory + "/CACHEDIR.TAG"))
    #expect(try Mechanism.cachedir.clear(item) == false)
    #expect(
      try String(contentsOfFile: directory + "/CACHEDIR.TAG", encoding: .utf8)
        == "my notes, not a tag")

    let file = FileItem(path: FilePath(tree.file("plain")))
    #expect(try Mechanism.cachedir.isMarked(file) == false)
    let notDirectory = #expect(throws: SkipBackupError.self) {
      try Mechanism.cachedir.mark(file)
    }
    #expect(notDirectory?.refusal == .cacheDirectoryTagNeedsDirectory)
    #expect(notDirectory?.errno == nil, "a refusal invents no errno")
  }

  /// cargo's tag, byte for byte as cargo 1.x writes it in target/: a valid
  /// tag that clear leaves to cargo, with a refusal, not silently; one byte
  /// more or less than skipbackup's own tag is someone else's too.
  @Test func clearRemovesOnlyTheTagSkipbackupWrote() throws {
    let cargo =
      "Signature: 8a477f597d28d172789f06886806bc55\n"
      + "# This file is a cache directory tag created by cargo.\n"
      + "# For information about cache directory tags see https://bford.info/cachedir/\n"
    let ours = String(decoding: CacheDirectoryTag.contents, as: UTF8.self)
    for contents in [cargo, ours + "\n", String(ours.dropLast())] {
      let directory = tree.directory("target")
      tree.file("target/CACHEDIR.TAG", contents)
      let item = FileItem(path: FilePath(directory))
      #expect(try Mechanism.cachedir.isMarked(item))
      #expect {
        try Mechanism.cachedir.clear(item)
      } throws: { error in
        (error as? SkipBackupError)?.refusal == .cacheDirectoryTagOfAnotherTool
          && (error as? SkipBackupError)?.path == FilePath(directory + "/CACHEDIR.TAG")
      }
      #expect(try String(contentsOfFile: directory + "/CACHEDIR.TAG", encoding: .utf8) == contents)
      #expect(try Mechanism.cachedir.isMarked(item))
    }
    tree.file("target/CACHEDIR.TAG", ours)
    #expect(try Mechanism.cachedir.clear(FileItem(path: FilePath(tree.path + "/target"))))
    #expect(!FileManager.default.fileExists(atPath: tree.path + "/target/CACHEDIR.TAG"))
  }
}

import Foundation
