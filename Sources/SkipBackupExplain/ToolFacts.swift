import SkipBackupCore
import SkipBackupExport

/// What each backup tool does with a marked item, run with exactly the
/// options below and no exclusion file: the one table `explain` reads.
///
/// Every `skips` claim `explain` makes from this table is checked by a test
/// that backs the item up with the tool (Tests/CommandLineTests/ExplainTests.swift),
/// except Time Machine's, which needs a Mac.
package struct ToolFacts {
  /// The key in `explain`'s output.
  package let name: String
  /// The version the facts were checked with.
  package let version: String
  /// The command line the facts are about.
  package let command: String
  /// The marks that make the tool skip the item carrying them, and, on a
  /// directory, everything under it.
  package let reads: MechanismSet
  /// A CACHEDIR.TAG keeps the tagged directory and the tag file itself in
  /// the backup: only the rest of its content is left out.
  package let keepsCacheTag: Bool
  /// Where the facts come from.
  package let source: String
  /// The one thing to do when the tool would back the item up.
  package let remedy: Remedy

  package enum Remedy {
    /// Add this mark, which the tool reads.
    case mark(Mechanism)
    /// A directory: add this mark; anything else: the export recipe.
    case markDirectory(Mechanism, else: BackupTool)
    /// Mark it (if need be) and use the export recipe.
    case export(BackupTool)
    /// Add this mark and copy with `rsync -aX` to the Mac.
    case markAndCopy(Mechanism)
  }

  /// A tool whose one mark is a CACHEDIR.TAG, read by `--exclude-caches`,
  /// which keeps the tagged directory and the tag (GNU tar and restic): a
  /// directory gets the tag; anything else needs the tool's export recipe.
  package static func cacheTagReader(
    _ tool: BackupTool, version: String, command: String, source: String
  ) -> ToolFacts {
    ToolFacts(
      name: tool.rawValue, version: version, command: command, reads: .cachedir,
      keepsCacheTag: true, source: source, remedy: .markDirectory(.cachedir, else: tool))
  }

  package static let all: [ToolFacts] = [
    ToolFacts(
      name: "borg2", version: "borgbackup 2.0.0b22", command: "borg create",
      reads: [.xdg, .nodump], keepsCacheTag: false,
      source:
        "borg 2 archive.py (maybe_exclude_by_attr: user.xdg.robots.backup exactly 'false', and "
        + "the nodump flag, always on; b18-b21 had the xdg test inverted); a tagged directory "
        + "is not entered; checked by running it",
      remedy: .mark(.xdg)),
    ToolFacts(
      name: "borg1", version: "borgbackup 1.2.4 (Debian 12)",
      command: "borg create --exclude-nodump --exclude-caches",
      reads: [.nodump, .cachedir], keepsCacheTag: false,
      source:
        "borg 1.2 usage (--exclude-nodump, --exclude-caches; the tagged directory and its tag "
        + "are left out unless --keep-exclude-tags); checked by running it",
      remedy: .mark(.nodump)),
    .cacheTagReader(
      .restic, version: "restic 0.14.0 (Debian 12)", command: "restic backup --exclude-caches",
      source:
        "restic 0.14 exclude.go (--exclude-caches is --exclude-if-present CACHEDIR.TAG:Signature "
        + "...: an item is left out when its directory holds the tag, the tag itself kept; "
        + "the parent of a backup target is looked at too, restic #2722); checked by running it"),
    .cacheTagReader(
      .tar, version: "GNU tar 1.34 (Debian 12)", command: "tar --create --exclude-caches",
      source:
        "GNU tar manual, 6.4 'Excluding Some Files' (--exclude-caches: the contents of a "
        + "directory holding a valid CACHEDIR.TAG, but not the tag; --exclude-caches-under keeps "
        + "the directory only, --exclude-caches-all drops it); checked by running it"),
    ToolFacts(
      name: "rsync", version: "rsync 3.2 and later", command: "rsync -a",
      reads: [], keepsCacheTag: false,
      source: "rsync(1): no option reads a mark; exclusions come from filter rules",
      remedy: .export(.rsync)),
    ToolFacts(
      name: "timemachine", version: "macOS 10.5 and later",
      command: "rsync -aX to a Mac, then Time Machine",
      reads: .resource, keepsCacheTag: false,
      source:
        "Apple, QA1719 and the File System Programming Guide: Time Machine reads "
        + "isExcludedFromBackup (com.apple.metadata:com_apple_backup_excludeItem), on the item "
        + "or a directory above; com.apple.MobileBackup was read by iOS 5.0.1 backups only",
      remedy: .markAndCopy(.resource)),
  ]
}

/// What `explain` found about one item, for the tools to judge.
package struct ItemMarks {
  /// The item's own marks.
  package var own: MechanismSet
  /// The marks of each directory above, the parent first.
  package var above: [MechanismSet]
  package var isDirectory: Bool
  /// The item is a file named CACHEDIR.TAG.
  package var isCacheTag: Bool
  /// What the item is, when it can carry no mark (a symbolic link, FIFO,
  /// socket or device, as "a symbolic link"); `nil` for a file or directory.
  package var unmarkable: String? = nil
}

extension ToolFacts {
  /// Whether a run of the tool leaves the item out of the backup. For a
  /// directory that a CACHEDIR.TAG of its own excludes, with tar and restic,
  /// that means its contents: the empty directory and the tag are kept.
  package func skips(_ item: ItemMarks) -> Bool {
    if !reads.isDisjoint(with: item.own) { return true }
    for (index, marks) in item.above.enumerated() {
      var marks = marks
      // The tag of the item's own directory: tar and restic keep it.
      if index == 0 && keepsCacheTag && item.isCacheTag { marks.remove(.cachedir) }
      if !reads.isDisjoint(with: marks) { return true }
    }
    return false
  }

  /// The one thing to do so that the tool skips the item: mark `target`
  /// (the item, or the marked directory it inherits from) or use the
  /// export; `exportMarks` names the marks that exclude it for the export
  /// to read (`-m`), empty when skipbackup does not count it excluded yet.
  package func needs(
    target: [UInt8], targetIsDirectory: Bool, exportMarks: MechanismSet,
    sweptWith: MechanismSet? = nil,
    unmarkable: String? = nil
  ) -> String {
    // The directory that holds the target, as an argument.
    let parent = target.lastIndex(of: UInt8(ascii: "/")).map { Array(target[..<$0]) } ?? []
    let holder =
      parent.isEmpty ? (target.first == UInt8(ascii: "/") ? "/" : ".") : pathArgument(parent)
    if let unmarkable {
      // `mark` on it fails, and the export reads marks: neither helps.
      return "\(unmarkable) keeps no marks on Linux: mark the directory that holds it ("
        + "\(holder)), or leave it out with \(name)'s own exclude option"
    }
    switch remedy {
    case .mark(let mark) where sweptWith != nil,
      .markDirectory(let mark, _) where sweptWith != nil && targetIsDirectory:
      // `mark` would make the sweep's mark a hand mark: the sweep adds it.
      // The sweep of the directory that holds it reaches it by the same
      // rule; a bare `sweep` would sweep $HOME, which may not hold it.
      let mechanisms = sweptWith!.names + (sweptWith!.includes(mark) ? [] : [mark.name])
      let root = holder.hasPrefix("-- ") ? holder : "-- " + holder
      return "skipbackup sweep -m \(mechanisms.joined(separator: ",")) \(root), the sweep of "
        + "its directory, adds \(mark) to the sweep's marks there (a mark by hand would take "
        + "the item from the sweep)"
    case .mark(let mark):
      return "skipbackup mark -m \(mark) \(pathArgument(target))"
    case .markDirectory(let mark, let tool):
      if targetIsDirectory { return "skipbackup mark -m \(mark) \(pathArgument(target))" }
      return exportRecipe(tool, target: target, marks: exportMarks)
    case .export(let tool):
      return exportRecipe(tool, target: target, marks: exportMarks)
    case .markAndCopy(let mark):
      return "skipbackup mark -m \(mark) \(pathArgument(target)), then copy with rsync -aX"
    }
  }

  private func exportRecipe(_ tool: BackupTool, target: [UInt8], marks: MechanismSet) -> String {
    // The recipe on one line: the export, then the tool reading it.
    let recipe = tool.recipe.split(whereSeparator: \.isNewline)
      .map { $0.trimmingPrefix(while: \.isWhitespace) }
      .map { $0.hasSuffix("\\") ? String($0.dropLast()) : String($0) }
      .joined(separator: " ")
      .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    // The export reads the marks that exclude the item, whatever they are.
    let mechanisms = marks.isEmpty ? "" : "-m " + marks.name + " "
    // The recipe reads the marks through `export` or `list`.
    let export = recipe.replacing("skipbackup export ", with: "skipbackup export " + mechanisms)
      .replacing("skipbackup list ", with: "skipbackup list " + mechanisms)
    let mark = marks.isEmpty ? "skipbackup mark \(pathArgument(target)), then " : ""
    return mark + "with ROOT a directory above it: " + export
  }
}

/// `bytes` (a path) as one shell word, as `ls` quotes a name on a
/// terminal: as it is when it holds only safe characters; otherwise in
/// single quotes, with each control character (C0, DEL, C1) and each byte
/// that is not UTF-8 written `$'\NNN'` (bash, zsh, ksh), so that the word
/// names the exact bytes and shows nothing a terminal would act on. A word that starts with `-` goes after `--` (``pathArgument``).
package func shellQuoted(_ bytes: [UInt8]) -> String {
  let safe = bytes.allSatisfy {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
      || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
      || Array("/._-+,:@%=".utf8).contains($0)
  }
  if safe && !bytes.isEmpty { return String(decoding: bytes, as: UTF8.self) }
  var result = ""
  var quoted = false
  var index = 0
  while index < bytes.count {
    if let (scalar, length) = UTF8Scalar.decode(bytes, at: index),
      scalar.value >= 0x20, scalar.value != 0x7F, !(0x80...0x9F).contains(scalar.value)
    {
      if !quoted { result += "'" }
      quoted = true
      result += scalar == "'" ? "'\\''" : String(scalar)
      index += length
      continue
    }
    let length = UTF8Scalar.decode(bytes, at: index)?.length ?? 1
    if quoted { result += "'" }
    quoted = false
    result += "$'"
    for byte in bytes[index..<(index + length)] {
      result += "\\" + String(byte, radix: 8).leftPadded(to: 3)
    }
    result += "'"
    index += length
  }
  if quoted { result += "'" }
  return result
}

/// `path` as the PATH argument of a command: quoted, and after `--` when
/// it starts with `-`, which the parser would take for an option
/// (`skipbackup mark -m xdg -v` for a file named `-v`).
package func pathArgument(_ path: [UInt8]) -> String {
  (path.first == UInt8(ascii: "-") ? "-- " : "") + shellQuoted(path)
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}

extension String {
  fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
    var result = ""
    for character in self {
      if character == target { result += replacement } else { result.append(character) }
    }
    return result
  }
}
