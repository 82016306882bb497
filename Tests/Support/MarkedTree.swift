import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A tree of about 300 items with generated names, marked by setfattr
/// with values that are marks and values that are not (legacy 00, xdg
/// `true`), marked directories with marked items below, a link out of the
/// tree, a FIFO, and marked names that each exclusion syntax must escape
/// beside unmarked decoys.
public struct MarkedTree {
  public let directory: TemporaryDirectory
  public let root: String

  public init(seed: UInt64, newlines: Bool = true) throws {
    directory = try TemporaryDirectory()
    root = directory.directory("root")
    directory.file("outside/marked")
    setfattr(directory.path + "/outside/marked", .resource)
    var generator = ByteStringGenerator(state: seed)
    var directories: [[UInt8]] = [Array(root.utf8)]
    let values: [(String, String)] = [
      (Names.legacy, "01"), (Names.legacy, "02"), (Names.legacy, "00"), (Names.resource, "00"),
      (Names.resource, Names.resourceValueHex), (Names.xdg, hex(Array("false".utf8))),
      (Names.xdg, hex(Array("true".utf8))), ("user.other", "01"),
    ]
    var made: Set<[UInt8]> = []
    for index in 0..<300 {
      var name = generator.name()
      if !newlines { name = name.filter { $0 != UInt8(ascii: "\n") } }
      let parent = directories[generator.below(directories.count)]
      let path = parent + [UInt8(ascii: "/")] + name
      guard !name.isEmpty, name != [0x2E], name != [0x2E, 0x2E], made.insert(path).inserted
      else { continue }
      let cPath = path.map { CChar(bitPattern: $0) } + [0]
      if index % 5 == 0 {
        precondition(mkdir(cPath, 0o755) == 0, "mkdir \(display(path)): \(errno)")
        directories.append(path)
      } else {
        let descriptor = open(cPath, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        precondition(descriptor >= 0, "create \(display(path)): \(errno)")
        close(descriptor)
      }
      if generator.below(4) == 0 {
        let (name, value) = values[generator.below(values.count)]
        setfattr(path, name, hex: value)
      }
    }
    // Marked names each exclusion syntax must escape, beside the unmarked
    // names a rule widened by a glob, a variable or a stripped space would
    // take along.
    for name in Self.edgeNames where newlines || !name.contains(UInt8(ascii: "\n")) {
      setfattr(directory.file(named: name, in: "root/edge"), .xdg)
    }
    for name in Self.decoys { directory.file(named: Array(name.utf8), in: "root/edge") }
    precondition(symlink("../outside", root + "/escape") == 0)
    precondition(mkfifo(root + "/fifo", 0o644) == 0)
  }

  static let edgeNames: [[UInt8]] =
    [
      "trail ", "tab\t", "cr\r", "st*r", "q?", "[br]", "back\\slash", "#hash", "-dash", "!bang",
      ";semi", "$HOME", "${HOME}", "nl\nname", " lead", "pf:x", "re:y",
    ].map { Array($0.utf8) } + [Array("bad".utf8) + [0xFF]]
  static let decoys = [
    "trail", "tab", "cr", "star", "stXr", "qX", "b", "backslash", "hash", "dash", "bang", "semi",
    "HOME", "nlXname", "lead", "x", "y", "bad",
  ]

  /// The topmost marked items, as getfattr -R finds them.
  public var excluded: Set<[UInt8]> { topmost(getfattrMarkedPaths(root)) }

  /// Everything find lists that no marked item holds.
  public var included: Set<[UInt8]> {
    let excluded = excluded
    return Set(find(root)).filter { path in
      !excluded.contains { path == $0 || path.starts(with: $0 + [UInt8(ascii: "/")]) }
    }
  }
}
