import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SkipBackupSweep
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// `du`: what the marks keep out of backups under each ROOT and what stays
/// in, by mechanism and by sweep rule, with the largest items.
package struct UsageRun: Sendable, Equatable {
  package var roots: [FilePath]
  package var mechanisms: MechanismSet
  /// Count st_size rather than disk usage (`--apparent-size`).
  package var apparentSize = false
  /// How many of the largest excluded items and included directories to name.
  package var top = 10
  package var format: OutputFormat = .text
  /// Leave filesystems mounted below each ROOT out (`-x`), as `du -x` does.
  package var oneFileSystem = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// Where the report and the diagnostics go.
  package var streams: Streams = .standard

  package init(
    roots: [FilePath], mechanisms: MechanismSet, apparentSize: Bool = false, top: Int = 10,
    format: OutputFormat = .text, oneFileSystem: Bool = false, quiet: Bool = false,
    streams: Streams = .standard
  ) {
    self.roots = roots
    self.mechanisms = mechanisms
    self.apparentSize = apparentSize
    self.top = top
    self.format = format
    self.oneFileSystem = oneFileSystem
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let mechanisms = mechanisms
    let output = Output(streams: streams)
    let links = SharedLinks()
    let (apparentSize, top) = (apparentSize, top)
    let run = WalkRun(streams: streams, showsProgress: !quiet) { diagnostics, progress in
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
    // once.
    var walked: [(canonical: [UInt8], device: dev_t, inode: ino_t)] = []
    for root in roots {
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
        options: TreeWalkOptions(oneFileSystem: oneFileSystem, followRootSymbolicLink: true))
      let usage = DiskUsage(
        root: rootBytes, visitors: run.visitors, mechanisms: mechanisms.count, top: top,
        rule: SizeRule(apparentSize: apparentSize, links: links))
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
