import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why one item is in or out of backups: its marks, the marked directories
/// above it, and each tool's verdict.
package struct Explanation {
  /// Every mechanism, whatever other commands count by default.
  package static let mechanisms = MechanismSet.every

  package let path: [UInt8]
  package let marks: MechanismSet
  /// The nearest marked directory above, and its marks.
  package let inheritedFrom: [UInt8]?
  package let inheritedMarks: MechanismSet?
  package let rule: String?
  /// What the sweep's record on the item itself names, when a sweep marked
  /// it: advice then adds to the sweep's mechanisms, since a mark by hand
  /// would make the sweep's mark a hand mark.
  package let sweptWith: MechanismSet?
  package let item: ItemMarks

  package var isExcluded: Bool { !marks.isEmpty || inheritedFrom != nil }

  package init(of path: FilePath, followSymbolicLinks: Bool) throws(SkipBackupError) {
    self.path = path.bytes
    let fileItem = FileItem(path: path, followSymbolicLinks: followSymbolicLinks)
    let status = try fileItem.status()
    let type = FileType(rawValue: status.st_mode & S_IFMT)
    // A symbolic link or special file keeps no user attributes on Linux.
    marks =
      type == .regular || type == .directory
      ? try Self.mechanisms.marks(on: fileItem) : []
    var above: [MechanismSet] = []
    var nearest: ([UInt8], MechanismSet)?
    // Every directory up to `/`: a tool may read a mark that the nearest
    // marked directory does not carry.
    try forEachDirectory(above: path, followSymbolicLinks: followSymbolicLinks) {
      directory throws(SkipBackupError) in
      let found = try Self.mechanisms.marks(on: FileItem(borrowingPath: directory))
      above.append(found)
      if nearest == nil && !found.isEmpty {
        nearest = (
          bytes(ofCString: directory), found
        )
      }
      return true
    }
    inheritedFrom = nearest?.0
    inheritedMarks = nearest?.1
    // The item's own record, read once: its rule and its mechanisms.
    let record = marks.isEmpty ? nil : try? SweepRecord.read(from: fileItem)
    sweptWith = record?.mechanisms
    if !marks.isEmpty {
      rule = record?.ruleName
    } else if let nearest {
      rule = SweepRecord.ruleName(
        of: FileItem(path: FilePath(bytes: nearest.0), followSymbolicLinks: false))
    } else {
      rule = nil
    }
    let name = self.path.split(separator: 0x2F).last.map(Array.init) ?? []
    item = ItemMarks(
      own: marks, above: above, isDirectory: type == .directory,
      isCacheTag: type == .regular && name == Array(CacheDirectoryTag.fileName.utf8),
      unmarkable: type == .regular || type == .directory
        ? nil : Self.article(type))
  }

  /// "a symbolic link", "a FIFO": what an item that keeps no marks is.
  private static func article(_ type: FileType) -> String {
    switch type {
    case .symbolicLink: "a symbolic link"
    case .fifo: "a FIFO"
    case .socket: "a socket"
    case .characterSpecial: "a character device"
    case .blockSpecial: "a block device"
    default: "this item"
    }
  }

  /// What to mark so that a tool skips the item: the marked directory it
  /// inherits from, or the item itself.
  private var target: (path: [UInt8], isDirectory: Bool) {
    if marks.isEmpty, let inheritedFrom { return (inheritedFrom, true) }
    return (path, item.isDirectory)
  }

  /// The marks that exclude the item, own or inherited.
  private var exportMarks: MechanismSet { marks.union(inheritedMarks ?? []) }

  package func verdicts() -> [(facts: ToolFacts, skips: Bool, needs: String)] {
    let target = target
    return ToolFacts.all.map { facts in
      let skips = facts.skips(item)
      let needs =
        skips
        ? ""
        : facts.needs(
          target: target.path, targetIsDirectory: target.isDirectory, exportMarks: exportMarks,
          sweptWith: sweptWith,
          unmarkable: target.path == path ? item.unmarkable : nil)
      return (facts, skips, needs)
    }
  }

  package func writeJSON(to output: Output) {
    var line = JSONLine()
    line.exclusion(
      path: path, excluded: isExcluded, marks: marks.names, inheritedFrom: inheritedFrom)
    line.strings("inherited_marks", inheritedMarks?.names ?? [])
    if let rule { line.string("rule", rule) } else { line.null("rule") }
    line.key("tools")
    var tools = JSONLine()
    for verdict in verdicts() {
      tools.key(verdict.facts.name)
      var object = JSONLine()
      object.bool("skips", verdict.skips)
      object.string("needs", verdict.needs)
      tools.raw(object.closed())
    }
    line.raw(tools.closed())
    output.write(line.finish())
  }

  package func writeText(to output: Output) {
    output.writeName(path)
    output.write(isExcluded ? ": excluded\n" : ": included\n")
    output.write(
      "  marks: " + (marks.isEmpty ? "none" : marks.names.joined(separator: ", ")) + "\n")
    if let inheritedFrom, let inheritedMarks {
      output.write("  inherited from: ")
      output.writeName(inheritedFrom)
      output.write(" (" + inheritedMarks.names.joined(separator: ", ") + ")\n")
    }
    if let rule { output.write("  sweep rule: \(rule)\n") }
    let verdicts = verdicts()
    let width = verdicts.map(\.facts.name.count).max()!
    for verdict in verdicts {
      let name =
        verdict.facts.name + String(repeating: " ", count: width - verdict.facts.name.count)
      // The options a verdict assumes (borg 1.2 reads nodump only with
      // --exclude-nodump), and the advice as advice, not as a reason.
      let run = verdict.facts.command.contains(" -") ? " (\(verdict.facts.command))" : ""
      output.write(
        "  \(name)  "
          + (verdict.skips
            ? "skips it\(run)" : "backs it up\(run); to leave it out: \(verdict.needs)") + "\n")
    }
    // Through the view every tool leaves out what skipbackup counts excluded.
    if isExcluded {
      output.write(
        "  run: every tool above skips it when run through the view: "
          + "skipbackup run ROOT -- TOOL ... (ROOT a directory above it; docs/backups.md)\n")
    }
  }
}
