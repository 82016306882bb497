import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupUsage
import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#endif

struct DuCommand: ParsableCommand, MountPointHelp {
  static let configuration = CommandConfiguration(
    commandName: "du",
    abstract: "Count what the marks keep out of backups under each ROOT, and what stays in.",
    discussion: """
      Walks each ROOT once, on every core, and counts files (every item that is not a \
      directory, symbolic links among them), directories (ROOT included) and bytes, included \
      and excluded; the bytes excluded by each mechanism and by each sweep rule where a sweep \
      made the mark; the --top N largest excluded items (topmost: a marked directory with \
      everything under it) and the N largest included directories below ROOT, by the included \
      bytes under them. Bytes count as GNU du counts them: disk usage (st_blocks x 512), or \
      st_size with --apparent-size, each hard-linked inode once, on the side where it is met \
      first, and with several ROOTs under the first ROOT that holds it. So included plus \
      excluded is what du -s -B1 ROOT... (du -s -b ROOT...) and du -s --inodes ROOT... print \
      for each ROOT, and the text total is each inode once. An item marked by several mechanisms counts under each, and \
      what lies under a marked directory counts under that directory's mechanisms. By default \
      every attribute mechanism counts (all: legacy, resource and xdg); -m all,nodump,cachedir \
      counts all five. With --format json each ROOT is one JSON object on a line of its own:

        {"root": "r", "included": {"files": 3, "directories": 2, "bytes": 16384}, \
      "excluded": {...}, "by_mechanism": {"legacy": 0, ...}, "by_rule": {}, \
      "top_excluded": [{"path": "r/c", "bytes": 8192}], "top_included_directories": [...]}

      A path that is not valid UTF-8 (the root or a listed one) also gets "path_base64" \
      with its exact bytes.

      Exit status: 0 when every item was read, 1 when a ROOT or an item could not be (it is \
      reported and the rest is counted), 64 for a usage error.
      """)

  static let oneFileSystemHelp =
    "Stay on each ROOT's filesystem: directories where another filesystem is mounted are left out, as du -x leaves them."
  @OptionGroup var tree: TreeOptions<DuCommand>

  @Flag(help: "Count apparent sizes (st_size), as du --apparent-size, rather than disk usage.")
  var apparentSize = false

  @Option(
    help: ArgumentHelp(
      "How many of the largest excluded items and included directories to name.",
      valueName: "N"))
  var top = 10

  @Option(
    help: ArgumentHelp(
      "How to print: text, for a person, or json, one JSON object a ROOT.",
      valueName: "text|json"))
  var format: OutputFormat = .text

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp(
      "The directories to count (default: the current directory).", valueName: "ROOT"),
    completion: .directory)
  var roots: [String] = []

  func validate() throws {
    if top < 0 { throw ValidationError("--top must be 0 or more, not \(top)") }
  }

  func run() throws {
    let mechanisms = try tree.mechanisms(default: .all)
    let output = Output()
    let links = SharedLinks()
    let (apparentSize, top) = (apparentSize, top)
    let run = WalkRun(showsProgress: !quiet.quiet) { diagnostics, progress in
      UsageVisitor(
        mechanisms: mechanisms, apparentSize: apparentSize, top: top, links: links,
        reporter: Reporter(output: output, diagnostics: diagnostics, progress: progress))
    }
    let report = UsageReport(
      mechanismNames: mechanisms.names, json: format == .json, output: output)
    var usages: [DiskUsage] = []
    // The ROOTs walked so far: a ROOT at or below one of them is counted
    // already and is left out, and one of them met below a later ROOT is
    // left out of it, as `du -sc x x` and `du -sc x/sub x` count each item
    // once (issue 24, 14).
    var walked: [(canonical: [UInt8], device: dev_t, inode: ino_t)] = []
    for root in (roots.isEmpty ? ["."] : roots).map(RawArguments.path) {
      let canonical = canonicalPath(root.bytes)
      var status = stat()
      let found = canonical.map { FileItem(path: FilePath(bytes: $0)) }.flatMap { try? $0.status() }
      if let canonical, let found {
        status = found
        let counted = walked.contains { earlier in
          canonical == earlier.canonical
            || (canonical.starts(with: earlier.canonical)
              && (earlier.canonical == [0x2F] || canonical[earlier.canonical.count] == 0x2F))
        }
        if counted { continue }
      }
      let exclusion: RootExclusion?
      switch run.placement(of: root, mechanisms) {
      case .unmarked: exclusion = nil
      case .below(let above):
        do throws(SkipBackupError) {
          exclusion = try rootExclusion(below: above, mechanisms)
        } catch {
          run.diagnostics.report(error, after: output)
          continue
        }
      case .unreadable: continue
      }
      let rootBytes = root.bytes
      var trimmed = rootBytes.count
      while trimmed > 1 && rootBytes[trimmed - 1] == 0x2F { trimmed -= 1 }
      // `links` is not reset: an inode linked from two ROOTs counts under
      // the first, as `du -s ROOT1 ROOT2` counts it, so the total holds it once.
      let earlier = walked.map { (device: $0.device, inode: $0.inode) }
      for visitor in run.visitors {
        visitor.reset(rootLength: trimmed, rootExclusion: exclusion, earlierRoots: earlier)
      }
      if let canonical { walked.append((canonical, status.st_dev, status.st_ino)) }
      let before = run.diagnostics.failures
      // A ROOT that is a link is followed (as du -D does); nothing below it is.
      run.walk(
        root,
        options: TreeWalkOptions(oneFileSystem: tree.oneFileSystem, followRootSymbolicLink: true))
      let usage = DiskUsage(
        root: rootBytes, visitors: run.visitors, mechanisms: mechanisms.count, top: top,
        apparentSize: apparentSize)
      // A ROOT that could not be read at all has nothing to show.
      if usage.included.directories + usage.included.files + usage.excluded.directories
        + usage.excluded.files == 0 && run.diagnostics.failures > before
      {
        continue
      }
      run.progress.erase()
      report.write(usage)
      usages.append(usage)
    }
    if usages.count > 1 && format == .text { report.writeTotal(usages) }
    try run.finish()
  }

  /// How the marked directory `above` a ROOT excludes it as a whole: by
  /// which marks, and which sweep rule; everything under ROOT counts as
  /// excluded.
  private func rootExclusion(
    below above: FilePath, _ mechanisms: MechanismSet
  ) throws(SkipBackupError) -> RootExclusion {
    let item = FileItem(path: above, followSymbolicLinks: false)
    return RootExclusion(bits: try mechanisms.marks(on: item), rule: SweepRecord.ruleName(of: item))
  }
}
