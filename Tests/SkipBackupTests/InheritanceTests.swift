import Foundation
import SkipBackup
import Testing
import TestSupport

/// A marked directory excludes everything below it.
@Suite(.onTestThreads) struct InheritanceTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  @Test func anItemBelowAMarkedDirectoryIsExcluded() throws {
    let file = tree.file("cache/deep/er/file")
    setfattr(tree.path + "/cache", Names.legacy, hex: "01")
    let status = try MechanismSet.all.status(of: FilePath(file))
    #expect(status.isExcluded)
    #expect(status.marks.isEmpty)
    #expect(status.inheritedFrom == FilePath(tree.path + "/cache"))
    // Only the mechanisms asked about count.
    #expect(try MechanismSet([.resource]).status(of: FilePath(file)).isExcluded == false)
  }

  @Test func theNearestMarkedDirectoryIsNamed() throws {
    let file = tree.file("a/b/c/file")
    setfattr(tree.path + "/a", Names.resource, hex: Names.resourceValueHex)
    setfattr(tree.path + "/a/b/c", Names.xdg, hex: "66616c7365")
    #expect(
      try MechanismSet.all.markedAncestor(of: FilePath(file)) == FilePath(tree.path + "/a/b/c"))
    #expect(
      try MechanismSet([.resource]).markedAncestor(of: FilePath(file)) == FilePath(tree.path + "/a")
    )
  }

  @Test func anItemWithItsOwnMarkAlsoNamesTheDirectoryAbove() throws {
    let file = tree.file("a/file")
    setfattr(file, Names.legacy, hex: "01")
    setfattr(tree.path + "/a", Names.legacy, hex: "01")
    let status = try MechanismSet.all.status(of: FilePath(file))
    #expect(status.marks.names == ["legacy"])
    #expect(status.inheritedFrom == FilePath(tree.path + "/a"))
  }

  @Test func directoriesAboveAreTheOnesTheItemIsReallyIn() throws {
    // Through a symbolic link to a directory, the directories above are the target's.
    tree.file("real/inside/file")
    tree.directory("elsewhere")
    try FileManager.default.createSymbolicLink(
      atPath: tree.path + "/elsewhere/link", withDestinationPath: tree.path + "/real/inside")
    setfattr(tree.path + "/real", Names.legacy, hex: "01")
    let status = try MechanismSet.all.status(of: FilePath(tree.path + "/elsewhere/link/file"))
    #expect(status.inheritedFrom == FilePath(tree.path + "/real"))
  }

  @Test func dotAndDotDot() throws {
    tree.file("marked/sub/file")
    setfattr(tree.path + "/marked", Names.legacy, hex: "01")
    let viaDotDot = FilePath(tree.path + "/marked/sub/..")  // the marked directory itself
    let status = try MechanismSet.all.status(of: viaDotDot)
    #expect(status.marks.names == ["legacy"])
    #expect(status.inheritedFrom == nil)
    let viaDot = try MechanismSet.all.status(of: FilePath(tree.path + "/marked/sub/."))
    #expect(viaDot.inheritedFrom == FilePath(tree.path + "/marked"))
  }

  @Test func aSymbolicLinkItselfSitsWhereItIs() throws {
    tree.file("marked/target")
    setfattr(tree.path + "/marked", Names.legacy, hex: "01")
    tree.directory("plain")
    try FileManager.default.createSymbolicLink(
      atPath: tree.path + "/plain/link", withDestinationPath: tree.path + "/marked/target")
    let link = FilePath(tree.path + "/plain/link")
    #expect(try MechanismSet.all.status(of: link).isExcluded == false)
    #expect(
      try MechanismSet.all.status(of: link, followSymbolicLinks: true).inheritedFrom
        == FilePath(tree.path + "/marked"))
  }

  @Test func unmarkedTreesAreIncluded() throws {
    let file = tree.file("x/y/z")
    #expect(
      try MechanismSet.all.status(of: FilePath(file))
        == ExclusionStatus(marks: MechanismSet([]), inheritedFrom: nil))
  }
}
