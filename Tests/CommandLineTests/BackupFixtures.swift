import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Paths as bytes, for names that are not text.
typealias Bytes = [UInt8]

extension Bytes {
  init(_ text: String) { self = Array(text.utf8) }
  var display: String { String(decoding: self, as: UTF8.self).debugDescription }
}

/// Names that an exclusion file gets wrong unless it escapes them: every
/// character a tool's reader or matcher treats specially, at the start, in
/// the middle and at the end of a name, and bytes that are not UTF-8.
enum TrickyNames {
  static let text: [String] = [
    "a b", " lead", "trail ", "two  spaces  ", "st*r", "*", "**", "q?", "?", "[br]", "[", "br]",
    "]", "back\\slash", "\\", "end\\", "\\*", "x\\y*z", "#hash", "-dash", "!bang", "!", ";semi",
    "$HOME", "$$x", "${HOME}", "$", "nl\nname", "\n", "endnl\n", "cr\rname", "endcr\r",
    "tab\tname", "endtab\t", "nbsp\u{A0}", "\u{E9}t\u{E9}", "pf:x", "re:x", "sh:**", ".hidden",
    "..dots", "- dash space", " ", "endvt\u{0B}", "endfs\u{1C}", "endnel\u{85}", "endls\u{2028}",
  ]

  /// A byte that is no UTF-8, a truncated sequence, an encoded surrogate,
  /// an overlong `/`, and a byte that is no UTF-8 before a trailing space.
  static let invalid: [Bytes] = [
    Bytes("bad") + [0xFF] + Bytes("utf"), Bytes("cut") + [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
    Bytes("sp") + [0xFF, 0x20],
  ]

  static var all: [Bytes] { text.map(Bytes.init) + invalid }

  /// Unmarked names that a rule widened by a wildcard, by stripping or by
  /// variable expansion would take along: each must stay in the backup.
  static let decoys: [Bytes] =
    [
      "a", "b", "ab", "lead", "trail", "two  spaces", "star", "stXr", "qX", "X", "r", "backslash",
      "back", "slash", "end", "hash", "dash", "bang", "semi", "HOME", "root", "$x", "x", "nl",
      "name", "nlXname", "endnl", "crname", "endcr", "endtab", "nbsp", "e\u{301}te\u{301}",
      "bad\u{FFFD}utf", "hidden", "dots", "xyz", "x\\yz", "endvt", "endfs", "endnel", "endls",
    ].map(Bytes.init)
}

/// Creates items by their exact bytes.
enum Make {
  /// The name of each directory of ``deepTree(below:)``.
  static let deepComponent = String(repeating: "d", count: 200)

  /// 21 directories of 200 bytes below `root`, and in the last a file
  /// `marked` (marked legacy) and a file `kept`: the marked file's path
  /// past PATH_MAX (4,096 bytes), a 4,228-byte rule for rsync. Made with
  /// Python, one directory at a time: a shell's cd fails past PATH_MAX.
  /// ``removeDeepTree(below:)`` removes it.
  static func deepTree(below root: String) throws {
    let script = """
      import os, sys
      os.chdir(sys.argv[1])
      for _ in range(21):
          os.mkdir(sys.argv[2])
          os.chdir(sys.argv[2])
      open("marked", "w").close()
      open("kept", "w").close()
      os.setxattr("marked", "user.com.apple.MobileBackup", b"\\x01")
      """
    try check(run([python3, "-c", Argument(script), Argument(root), Argument(deepComponent)]))
  }

  /// Removes ``deepTree(below:)``'s directories, which FileManager cannot
  /// (past PATH_MAX); shutil.rmtree works relative to open directories.
  static func removeDeepTree(below root: String) {
    _ = run([
      python3, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1])",
      Argument(root + "/" + deepComponent),
    ])
  }

  static func file(_ path: Bytes, _ contents: String = "x") {
    let descriptor = open(cString(path), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(descriptor >= 0, "cannot create \(path.display): \(errno)")
    let written = contents.withCString { write(descriptor, $0, strlen($0)) }
    precondition(written == contents.utf8.count, "cannot write \(path.display): \(errno)")
    close(descriptor)
  }

  static func directory(_ path: Bytes) {
    precondition(
      mkdir(cString(path), 0o755) == 0 || errno == EEXIST, "cannot mkdir \(path.display)")
  }

  static func symbolicLink(_ target: String, at path: Bytes) {
    precondition(symlink(target, cString(path)) == 0, "cannot link \(path.display)")
  }

  static func fifo(_ path: Bytes) {
    precondition(mkfifo(cString(path), 0o644) == 0, "cannot mkfifo \(path.display)")
  }

  static func cString(_ path: Bytes) -> [CChar] { path.map { CChar(bitPattern: $0) } + [0] }
}

/// A tree with tricky names, items marked by each mechanism (half of them by
/// the skipbackup tool, half by setfattr), marked directories with content,
/// unmarked items beside them, symbolic links and a FIFO.
struct TrickyTree {
  let directory: TemporaryDirectory
  /// The tree's root: `DIRECTORY/root`.
  let root: String
  /// The marked items, relative to the root.
  private(set) var marked: [Bytes] = []
  /// Unmarked items outside marked directories, which must be in every
  /// backup, relative to the root.
  private(set) var included: [Bytes] = []

  /// With `markNewlines` false, no marked item has a newline in its path
  /// (tar cannot exclude those); such names are then left unmarked.
  ///
  /// A copy (`cp -a`: the same names, types, contents and attributes) of a
  /// tree made once a test process: made for each test, the trees cost
  /// about 0.5 s of CPU each, some fifty times a run.
  init(markNewlines: Bool = true) throws {
    let template = markNewlines ? Self.template : Self.templateWithNewlinesUnmarked
    directory = try TemporaryDirectory()
    root = directory.path + "/root"
    try check(run(["cp", "-a", Argument(template.root), Argument(root)]))
    marked = template.marked
    included = template.included
  }

  private static let template = made(markNewlines: true)
  private static let templateWithNewlinesUnmarked = made(markNewlines: false)

  private static func made(markNewlines: Bool) -> TrickyTree {
    let tree = try! TrickyTree(making: markNewlines)
    keepUntilExit(tree.directory)
    return tree
  }

  private init(making markNewlines: Bool) throws {
    directory = try TemporaryDirectory()
    root = directory.path + "/root"
    Make.directory(Bytes(root))
    var toMark: [Bytes] = []
    let names = TrickyNames.all
    let markable = names.filter { markNewlines || !$0.contains(UInt8(ascii: "\n")) }
    let unmarkable = names.filter { !markable.contains($0) }

    // Marked files beside their decoys, and unmarked files with the names
    // tar cannot exclude.
    add(directory: "files", &toMark)
    for name in markable { add(file: Bytes("files/") + name, mark: true, &toMark) }
    for name in TrickyNames.decoys + unmarkable { add(file: Bytes("files/") + name) }

    // Marked directories with content, and decoy directories.
    add(directory: "dirs", &toMark)
    for name in markable {
      add(directory: Bytes("dirs/") + name, mark: true, &toMark)
      Make.file(Bytes(root + "/dirs/") + name + Bytes("/content"))
      Make.directory(Bytes(root + "/dirs/") + name + Bytes("/sub"))
      Make.file(Bytes(root + "/dirs/") + name + Bytes("/sub/st*r"))
    }
    for name in TrickyNames.decoys {
      add(directory: Bytes("dirs/") + name)
      add(file: Bytes("dirs/") + name + Bytes("/content"))
    }

    // Unmarked directories with tricky names, with a marked file in each.
    add(directory: "deep", &toMark)
    for name in names {
      let parent = Bytes("deep/") + name
      add(directory: parent)
      add(file: parent + Bytes("/kept"))
      add(file: parent + Bytes("/marked"), mark: markable.contains(name), &toMark)
    }

    // A directory whose only entry is marked stays, empty.
    add(directory: "hollow", &toMark)
    add(file: "hollow/only", mark: true, &toMark)
    // Marks inside a marked directory: only the outer one counts.
    add(directory: "nested", mark: true, &toMark)
    add(directory: "nested/inner", mark: true, &toMark)
    add(file: "nested/inner/file", mark: true, &toMark)

    // Attribute values that are no mark stay in the backup.
    add(directory: "values", &toMark)
    for (name, attribute, value) in [
      ("legacy-zero", Names.legacy, "00"), ("xdg-true", Names.xdg, hex(Array("true".utf8))),
    ] {
      add(file: Bytes("values/") + Bytes(name))
      setfattr(Bytes(root + "/values/" + name), attribute, hex: value)
    }
    add(file: "values/legacy-two", mark: true, &toMark)
    setfattr(Bytes(root + "/values/legacy-two"), Names.legacy, hex: "02")
    add(file: "values/resource-other", mark: true, &toMark)
    setfattr(Bytes(root + "/values/resource-other"), Names.resource, hex: "00")

    // Symbolic links (never marked: Linux keeps no user attributes on them) and a FIFO.
    add(directory: "links", &toMark)
    for (name, target) in [
      ("to-marked-file", "../files/st*r"), ("to-marked-dir", "../dirs/[br]"),
      ("dangling", "../nowhere"), ("st*r link", "../files/star"),
    ] {
      Make.symbolicLink(target, at: Bytes(root + "/links/" + name))
      included.append(Bytes("links/" + name))
    }
    Make.fifo(Bytes(root + "/fifo"))
    included.append(Bytes("fifo"))

    applyMarks(toMark)
    marked = toMark
  }

  private mutating func add(directory relative: Bytes, mark: Bool = false, _ toMark: inout [Bytes])
  {
    Make.directory(Bytes(root + "/") + relative)
    if mark { toMark.append(relative) } else { included.append(relative) }
  }

  private mutating func add(directory relative: Bytes) {
    Make.directory(Bytes(root + "/") + relative)
    included.append(relative)
  }

  private mutating func add(directory relative: String, _ toMark: inout [Bytes]) {
    add(directory: Bytes(relative), mark: false, &toMark)
  }

  private mutating func add(directory relative: String, mark: Bool, _ toMark: inout [Bytes]) {
    add(directory: Bytes(relative), mark: mark, &toMark)
  }

  private mutating func add(file relative: Bytes, mark: Bool = false, _ toMark: inout [Bytes]) {
    Make.file(Bytes(root + "/") + relative)
    if mark { toMark.append(relative) } else { included.append(relative) }
  }

  private mutating func add(file relative: String, mark: Bool, _ toMark: inout [Bytes]) {
    add(file: Bytes(relative), mark: mark, &toMark)
  }

  private mutating func add(file relative: Bytes) {
    Make.file(Bytes(root + "/") + relative)
    included.append(relative)
  }

  /// Marks item `i` with mechanism `i % 3`, by the tool when `i / 3` is even,
  /// else by setfattr with the bytes a Mac or freedesktop tool writes.
  private func applyMarks(_ items: [Bytes]) {
    var byTool: [PeerMark: [Bytes]] = [:]
    for (index, relative) in items.enumerated() where !relative.starts(with: Bytes("values/")) {
      let mark = PeerMark.allCases[index % 3]
      let path = Bytes(root + "/") + relative
      if (index / 3) % 2 == 0 {
        byTool[mark, default: []].append(path)
      } else {
        setfattr(path, mark.attribute, hex: mark.valueHex)
      }
    }
    for (mark, paths) in byTool {
      let result = skipbackup(
        arguments: ["mark", "-m", Argument(mark.rawValue), "--"] + paths.map { Argument(bytes: $0) }
      )
      precondition(result.status == 0, "skipbackup mark failed: \(result)")
    }
  }

  /// Every item in the tree that no mark excludes, found without skipbackup:
  /// what `find` lists, less the marked items and everything under them.
  func expectedIncluded() throws -> Set<Bytes> {
    let everything = try pathSet(under: Bytes(root))
    return everything.filter { path in
      !marked.contains { path == $0 || path.starts(with: $0 + [UInt8(ascii: "/")]) }
    }
  }
}

/// A peer program that failed.
struct PeerFailure: Error, CustomStringConvertible {
  var result: ProcessResult
  var description: String { "\(result)" }
}

/// `result`, when the program succeeded.
@discardableResult
func check(_ result: ProcessResult) throws -> ProcessResult {
  guard result.status == 0 else { throw PeerFailure(result: result) }
  return result
}

/// Every path under `directory`, `directory` itself as the empty path, as
/// `find -print0` lists them: the contents of a backup or a restore.
func pathSet(under directory: Bytes) throws -> Set<Bytes> {
  let result = try check(run(["find", Argument(bytes: directory), "-print0"]))
  var paths = Set<Bytes>()
  for path in result.nulSeparated {
    var relative = Array(path.dropFirst(directory.count))
    if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
    paths.insert(relative)
  }
  return paths
}

/// What `skipbackup list --included -0 ROOT` prints, relative to ROOT.
func listedIncluded(_ root: String, mechanisms: String = "all") throws -> Set<Bytes> {
  let result = try check(
    skipbackup("list", "--included", "-0", "-m", Argument(mechanisms), Argument(root)))
  return Set(
    result.nulSeparated.map { path in
      var relative = Array(path.dropFirst(root.utf8.count))
      if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
      return relative
    })
}

/// The difference between two sets of paths, for a failure message.
func difference(_ actual: Set<Bytes>, _ expected: Set<Bytes>) -> String {
  let extra = actual.subtracting(expected).map(\.display).sorted()
  let missing = expected.subtracting(actual).map(\.display).sorted()
  return "extra (should be left out): \(extra)\nmissing (should be there): \(missing)"
}
