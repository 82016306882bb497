import ArgumentParser
import CNcurses
import SkipBackupCore
import SystemPackage
import SkipBackupBrowse
import SkipBackupReport
import SkipBackupUsage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

struct BrowseCommand: ParsableCommand, MountPointHelp {
  static let configuration = CommandConfiguration(
    commandName: "browse",
    abstract: "Look through ROOT in a full-screen terminal browser, and mark or clear items there.",
    discussion: """
      Walks ROOT once, as du does (every core, the same sizes: disk usage, each hard-linked \
      inode once), and shows one directory at a time, its entries sorted by the bytes backups \
      keep, largest first: for each, the bytes backed up, the bytes the marks leave out (so \
      that the two add up to du -s -B1 of it), and why it is out: its own marks, a sweep's \
      rule, or the marked directory it is in. Names are escaped as ls -b escapes them, so no \
      name can send the terminal a control sequence.

      Keys: Up/Down (k/j) select, Enter/Right (l) open, Backspace/Left (h) go up, s and n sort \
      by size and by name (again: reversed), m marks the selected item as skipbackup mark \
      marks it (with -m's mechanisms, resource without), c clears it as skipbackup clear \
      does (a sweep's mark too), u undoes the last change, ? shows the keys, q quits. Sizes \
      change in place: nothing is walked again. Marking a directory with more backed-up bytes \
      than --confirm-above asks first.

      Standard input and output must be a terminal.

      Exit status: 0 when quit with q, 1 when \
      standard output is not a terminal, the terminal cannot be driven, ROOT cannot be \
      read, or a mark, clear or undo failed (the screen says why, and a line on standard \
      error after q), 64 for a usage error.
      """)

  static let oneFileSystemHelp =
    "Stay on ROOT's filesystem: directories where another filesystem is mounted are left out, as du -x leaves them."
  @OptionGroup var tree: TreeOptions<BrowseCommand>

  @Option(
    name: .customLong("confirm-above"),
    help: ArgumentHelp(
      "Ask before m marks a directory with more backed-up bytes than SIZE (a number, with K, M, G or T for powers of 1024; 0 asks for every directory).",
      valueName: "SIZE"))
  var confirmAbove = "1G"

  @Argument(
    help: ArgumentHelp(
      "The directory to browse (default: the current directory).", valueName: "ROOT"),
    completion: .directory)
  var root: String?

  func validate() throws {
    guard Self.bytes(confirmAbove) != nil else {
      throw ValidationError(
        "--confirm-above takes a size such as 500M or 2G, not '\(confirmAbove)'")
    }
  }

  /// `SIZE` in bytes: digits, then at most one of K, M, G, T (powers of 1024).
  static func bytes(_ size: String) -> Int64? {
    var digits = Substring(size)
    var scale: Int64 = 1
    if let last = digits.last, let power = ["K", "M", "G", "T"].firstIndex(of: last.uppercased()) {
      scale = Int64(1) << (10 * (power + 1))
      digits = digits.dropLast()
    }
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits),
      number >= 0, number <= Int64.max / scale
    else { return nil }
    return number * scale
  }

  func run() throws {
    let diagnostics = Diagnostics()
    guard system_isatty(STDOUT_FILENO) == 1, system_isatty(STDIN_FILENO) == 1 else {
      diagnostics.report(
        "browse needs a terminal: standard \(system_isatty(STDOUT_FILENO) == 1 ? "input" : "output") is not a terminal (skipbackup du prints the same sizes as text)"
      )
      throw ExitCode.failure
    }
    let counted = try tree.mechanisms(default: .all)
    let given = !tree.mechanismOptions.mechanism.isEmpty
    let rootPath = RawArguments.path(root ?? ".")
    // ROOT is opened before the walk, so that marks go into the tree that
    // was walked; O_PATH, since a ROOT that is no directory (refused after
    // the walk, which says why) must not block.
    let opened = Result { () throws(SkipBackupError) -> CInt in
      try check(.openat, rootPath) {
        rootPath.withCString { system_openat(AT_FDCWD, $0, MountFlag.pathOnly | O_CLOEXEC, 0) }
      }
    }
    guard var browseTree = walk(rootPath, counted, diagnostics) else {
      if case .success(let descriptor) = opened { _ = system_close(descriptor) }
      throw ExitCode.failure
    }
    let rootDescriptor: CInt
    switch opened {
    case .success(let descriptor): rootDescriptor = descriptor
    case .failure(let error):
      diagnostics.report(error)
      throw ExitCode.failure
    }
    let editor = MarkEditor(
      counted: counted, marking: given ? counted : MarkCommand.defaultMechanisms,
      clearing: given ? counted : ClearCommand.defaultMechanisms, root: rootDescriptor,
      rootPath: FilePath(bytes: browseTree.rootPath))
    let utf8 = cncurses_use_locale() == 1
    guard cncurses_guard_terminal() == 0, cncurses_begin() == 0 else {
      diagnostics.report(
        "browse cannot drive this terminal: terminfo does not know its type (TERM), or it cannot move the cursor"
      )
      throw ExitCode.failure
    }
    browseTree.computeSums()
    let failures = browseTree.problems.count
    var screen = BrowseScreen(
      tree: browseTree, editor: editor, confirmAbove: Self.bytes(confirmAbove)!, utf8: utf8,
      message: failures > 0
        ? "\(failures) item\(failures == 1 ? "" : "s") could not be read (! in Why)" : nil)
    screen.run()
    // Nothing above throws while ncurses runs; the terminal is put back
    // before the last word, so that it stays on the screen.
    cncurses_end()
    if editor.failures > 0 {
      diagnostics.report(
        "\(editor.failures) change\(editor.failures == 1 ? "" : "s") of marks failed in browse (the screen said why)"
      )
      throw ExitCode.failure
    }
  }

  /// The walk: every item under ROOT with its own bytes and marks, on every
  /// core, with a progress line on standard error (when it is a terminal)
  /// after the first second.
  private func walk(
    _ root: FilePath, _ mechanisms: MechanismSet, _ diagnostics: Diagnostics
  ) -> BrowseTree? {
    var rootBytes = root.bytes
    while rootBytes.count > 1 && rootBytes.last == 0x2F { rootBytes.removeLast() }
    let exclusion: BrowseTree.RootExclusion?
    do throws(SkipBackupError) {
      exclusion = try rootExclusion(of: root, mechanisms)
    } catch {
      diagnostics.report(error)
      return nil
    }
    let progress = Progress(enabled: true)
    let links = SharedLinks()
    let builders = (0..<walkThreads).map { _ in
      TreeBuilder(
        mechanisms: mechanisms, rootLength: rootBytes.count, links: links,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    _ = walkTree(
      root: root, options: TreeWalkOptions(oneFileSystem: tree.oneFileSystem), visitors: builders)
    progress.erase()
    let parts = builders.map { $0.takePart() }
    guard parts[0].nodes.count > 0 else {
      // ROOT itself could not be looked at.
      if let failure = parts[0].failedPaths.first {
        diagnostics.report(failure.1)
      } else {
        diagnostics.report("\(root.escapedDescription): cannot be read")
      }
      return nil
    }
    guard parts[0].nodes.flags[0].contains(.directory) else {
      diagnostics.report(
        "\(root.escapedDescription): not a directory; browse shows a directory's entries")
      return nil
    }
    var result = BrowseTree(rootPath: rootBytes, parts: parts)
    result.rootExclusion = exclusion
    return result
  }

  /// A marked directory above `root`, which leaves all of it out.
  private func rootExclusion(
    of root: FilePath, _ mechanisms: MechanismSet
  ) throws(SkipBackupError) -> BrowseTree.RootExclusion? {
    try mechanisms.markedAncestor(of: root).map { BrowseTree.RootExclusion(path: $0.bytes) }
  }
}
