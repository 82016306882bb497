import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupBrowse
import SkipBackupReport

struct BrowseCommand: ParsableCommand {
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

  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on ROOT's filesystem: directories where another filesystem is mounted are left out, as du -x leaves them."
  )
  var oneFileSystem = false

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
    try engine.run()
  }

  /// The engine's configuration, from the parsed command line.
  var engine: BrowseRun {
    get throws {
      BrowseRun(
        root: RawArguments.path(root ?? "."),
        mechanisms: mechanismOptions.mechanism.isEmpty
          ? nil : try mechanismOptions.mechanisms(default: []),
        oneFileSystem: oneFileSystem, confirmAbove: Self.bytes(confirmAbove)!)
    }
  }
}
