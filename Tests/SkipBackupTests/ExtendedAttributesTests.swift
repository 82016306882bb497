import Foundation
import Synchronization
import SkipBackup
import Testing
import TestSupport

@Suite(.onTestThreads) struct ExtendedAttributesTests {
  let tree: TemporaryDirectory
  init() throws { tree = try TemporaryDirectory() }

  @Test func aMissingAttributeReadsAsNil() throws {
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(tree.file("a"))))
    #expect(try attributes.value(of: "user.nothing") == nil)
    #expect(try attributes.contains("user.nothing") == false)
    #expect(try attributes.removeValue(of: "user.nothing") == false)
  }

  @Test func setGetListRemoveByPath() throws {
    let file = tree.file("a")
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(file)))
    try attributes.setValue([0, 1, 2, 255], of: "user.bytes")
    #expect(try attributes.value(of: "user.bytes") == [0, 1, 2, 255])
    #expect(getfattrHex(file, "user.bytes") == "0x000102ff")
    #expect(try attributes.names().contains("user.bytes"))
    #expect(try attributes.removeValue(of: "user.bytes"))
    #expect(getfattr(file, "user.bytes") == nil)
  }

  @Test func anEmptyValueIsAValue() throws {
    let file = tree.file("a")
    _ = run(["setfattr", "-n", "user.empty", Argument(file)])
    #expect(
      try ExtendedAttributes(of: FileItem(path: FilePath(file))).value(of: "user.empty") == [])
  }

  @Test func largeValuesAreReadWhole() throws {
    let file = tree.file("a")
    let value = (0..<3000).map { UInt8($0 % 251) }
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(file)))
    try attributes.setValue(value, of: "user.large")
    #expect(try attributes.value(of: "user.large") == value)
    #expect(pythonGetxattr(file, "user.large") == value)
  }

  @Test func modes() throws {
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(tree.file("a"))))
    try attributes.setValue([1], of: "user.x", mode: .create)
    #expect { try attributes.setValue([2], of: "user.x", mode: .create) } throws: { error in
      (error as? SkipBackupError)?.errno == .fileExists
    }
    try attributes.setValue([3], of: "user.x", mode: .replace)
    #expect(try attributes.value(of: "user.x") == [3])
    #expect { try attributes.setValue([4], of: "user.y", mode: .replace) } throws: { error in
      (error as? SkipBackupError)?.errno == .noData
    }
  }

  @Test func byDescriptorAndRelativeToADirectory() throws {
    let file = tree.file("dir/a")
    let directory = try FileDescriptor.open(FilePath(tree.path + "/dir"), .readOnly)
    defer { try? directory.close() }
    let relative = ExtendedAttributes(of: FileItem(name: "a", in: directory))
    try relative.setValue([7], of: "user.relative")
    #expect(getfattrHex(file, "user.relative") == "0x07")

    let opened = try FileDescriptor.open(FilePath(file), .readOnly)
    defer { try? opened.close() }
    let byDescriptor = ExtendedAttributes(
      of: FileItem(descriptor: opened, displayPath: FilePath(file)))
    #expect(try byDescriptor.value(of: "user.relative") == [7])
    try byDescriptor.setValue([8], of: "user.descriptor")
    #expect(getfattrHex(file, "user.descriptor") == "0x08")
  }

  @Test func followingALinkOrNot() throws {
    let target = tree.file("target")
    let link = tree.path + "/link"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target")
    try ExtendedAttributes(of: FileItem(path: FilePath(link))).setValue([1], of: "user.through")
    #expect(getfattrHex(target, "user.through") == "0x01")
    let linkItself = ExtendedAttributes(
      of: FileItem(path: FilePath(link), followSymbolicLinks: false))
    #expect(try linkItself.value(of: "user.through") == nil)
  }

  @Test func fileNamesThatAreNotUTF8() throws {
    let name: [UInt8] = [0x63, 0x61, 0x66, 0xE9, 0xFF, 0x0A, 0x2D]  // "caf\xe9\xff\n-"
    let path = tree.file(named: name)
    let filePath = path.withUnsafeBufferPointer { bytes in
      (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
        FilePath(platformString: $0.baseAddress!)
      }
    }
    try Mechanism.resource.mark(FileItem(path: filePath))
    #expect(getfattr(path, Names.resource).map(hex) == Names.resourceValueHex)
    #expect(pythonGetxattr(path, Names.resource).map(hex) == Names.resourceValueHex)
    #expect(try MechanismSet.all.isMarked(FileItem(path: filePath)))
  }

  @Test func attributeNamesThatAreNotUTF8() throws {
    let file = tree.file("a")
    let name = try #require(AttributeName(bytes: Array("user.".utf8) + [0xFF, 0xFE]))
    try ExtendedAttributes(of: FileItem(path: FilePath(file))).setValue([1], of: name)
    let names = try ExtendedAttributes(of: FileItem(path: FilePath(file))).names()
    #expect(names.contains(name))
    #expect(name.description == "user.\\xff\\xfe")
    #expect(AttributeName(bytes: Array("user.a\0b".utf8)) == nil)
    #expect(AttributeName(bytes: []) == nil)
  }

  /// The size-then-read race: a value that grows between the two calls is
  /// read again, whole, never torn and never an error.
  @Test func aValueThatGrowsWhileItIsReadIsReadAgain() throws {
    let file = tree.file("a")
    let small = [UInt8](repeating: 1, count: 10)
    let large = [UInt8](repeating: 2, count: 2000)  // past the first 256-byte guess
    let attributes = ExtendedAttributes(of: FileItem(path: FilePath(file)))
    try attributes.setValue(small, of: "user.growing")
    let done = Atomic<Bool>(false)
    let writer = BackgroundThread {
      let attributes = ExtendedAttributes(of: FileItem(path: FilePath(file)))
      var round = 0
      while !done.load(ordering: .relaxed) {
        try? attributes.setValue(round % 2 == 0 ? large : small, of: "user.growing")
        round += 1
      }
    }
    var seenSmall = 0
    var seenLarge = 0
    // Read until both sizes have been seen many times (a loaded machine may
    // be slow to schedule the writer), or for at most 30 seconds.
    let deadline = Date().addingTimeInterval(30)
    while (seenSmall < 1000 || seenLarge < 1000) && Date() < deadline {
      let value = try attributes.value(of: "user.growing")
      if value == small {
        seenSmall += 1
      } else if value == large {
        seenLarge += 1
      } else {
        Issue.record("a torn value of \(value?.count ?? -1) bytes")
      }
    }
    done.store(true, ordering: .relaxed)
    writer.wait()
    // Both sizes were seen: the value really changed under the reader.
    #expect(seenSmall > 0 && seenLarge > 0)
  }
}
