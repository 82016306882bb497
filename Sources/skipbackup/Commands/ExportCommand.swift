import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupExport
import SkipBackupReport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

struct ExportCommand: ParsableCommand, MountPointHelp {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract:
      "Write the excluded items under ROOT as an exclusion file for rsync, tar, restic or borg.",
    discussion: """
      Walks ROOT as the backup tool will read it and writes one rule for each topmost excluded \
      item (a marked directory stands for everything under it), in the tool's own syntax, \
      escaped so that each rule matches that item and nothing else: spaces anywhere, * ? [ ] \\, \
      leading # - ! ;, $ (restic expands variables), newlines and bytes that are not UTF-8. \
      By default every attribute mechanism counts (all: legacy, resource and xdg).

      The recommended recipes come first: for rsync and tar an include list from \
      skipbackup list --included, whose cost does not grow with the number of marks; for \
      restic and borg this file. Give the tool its own one-file-system option when you give -x. \
      Measured costs: docs/performance.md.

      rsync (a copy: adds and updates, never deletes):
      \(BackupTool.rsync.recipe)

      GNU tar (names with newlines too):
      \(BackupTool.tar.recipe)

      restic (RESTIC_REPOSITORY and RESTIC_PASSWORD set):
      \(BackupTool.restic.recipe)

      borg 1.2 (BORG_REPO set):
      \(BackupTool.borg.recipe)

      An rsync mirror that also drops newly marked items (slower: rsync tries every rule on \
      every name):
      \(BackupTool.rsyncMirrorRecipe)

      Borg 2 reads xdg and nodump marks itself: mark with -m xdg and run a plain borg create.

      When ROOT is excluded itself, or sits below a marked directory, nothing is written. When \
      the tool cannot name an excluded item (tar reads its file line by line, so a path with a \
      newline cannot be excluded: use the tar recipe above), the item is reported and the export \
      fails; the other rules are still written. The && above then keeps the backup from running. \
      nodump and cachedir marks need no export: bsdtar --nodump, borg --exclude-nodump, and tar, \
      borg and restic --exclude-caches read them themselves. See docs/backups.md.

      Exit status: 0 when every excluded item has its rule, 1 when any item could not be read \
      or named, or ROOT is excluded, 64 for a usage error.
      """)

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp(
      "The backup tool that reads the file.",
      valueName: "TOOL"))
  var tool: BackupTool

  static let oneFileSystemHelp =
    "Stay on ROOT's filesystem: directories where another filesystem is mounted are checked but not entered. Give the backup tool its own option too."
  @OptionGroup var tree: TreeOptions<ExportCommand>

  @Option(
    name: [.customShort("o"), .customLong("output")],
    help: ArgumentHelp("Write the file to FILE instead of standard output.", valueName: "FILE"),
    completion: .file())
  var output: String?

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp("The directory the backup reads.", valueName: "ROOT"),
    completion: .directory)
  var root: String

  func run() throws {
    let mechanisms = try tree.mechanisms(default: .all)
    let syntax = tool.syntax
    // What is wrong before the walk ends the run at once.
    let early = Diagnostics()
    let rootArgument = RawArguments.path(root)
    let walkRoot: ExportRoot
    do throws(ExportFailure) {
      walkRoot = try syntax.walkRoot(for: rootArgument.bytes)
    } catch {
      early.report("\(rootArgument.escapedDescription): \(error.message)")
      throw ExitCode.failure
    }
    let rootPath = FilePath(bytes: walkRoot.path)
    if let reason = excludedRootReason(rootPath, walkRoot, mechanisms, early) {
      early.report(
        "\(rootPath.escapedDescription): excluded from backups as a whole (\(reason)), so no "
          + "\(tool.rawValue) exclusion file is written: a backup of it should hold nothing")
      throw ExitCode.failure
    }
    if early.failures > 0 { throw ExitCode.failure }

    let destination: OutputFile
    if let output {
      do throws(SkipBackupError) {
        destination = try OutputFile.open(RawArguments.path(output))
      } catch {
        early.report(error)
        throw ExitCode.failure
      }
    } else {
      destination = .inPlace(STDOUT_FILENO)
    }
    let sink = OutputSink(descriptor: destination.descriptor)
    let run = WalkRun(showsProgress: !quiet.quiet) { diagnostics, progress in
      ExportVisitor(
        mechanisms: mechanisms, syntax: syntax, root: walkRoot,
        reporter: Reporter(output: Output(sink: sink), diagnostics: diagnostics, progress: progress)
      )
    }
    run.walk(
      rootPath,
      options: TreeWalkOptions(
        oneFileSystem: tree.oneFileSystem, followRootSymbolicLink: walkRoot.followsSymbolicLink))
    try run.finish {
      switch destination {
      case .inPlace(let descriptor):
        if descriptor != STDOUT_FILENO, case .failure = OutputDescriptor.close(descriptor) {
          run.diagnostics.report(
            "\(RawArguments.path(output!).escapedDescription): cannot be written")
        }
      case .replacement(let replacement):
        do throws(SkipBackupError) {
          try replacement.commit()
        } catch {
          run.diagnostics.report(error)
        }
      }
    }
  }

  /// Why ROOT is excluded as a whole, or `nil` when it is not.
  private func excludedRootReason(
    _ path: FilePath, _ root: ExportRoot, _ mechanisms: MechanismSet, _ diagnostics: Diagnostics
  ) -> String? {
    do throws(SkipBackupError) {
      let follows = root.followsSymbolicLink
      let marks = try mechanisms.marks(on: FileItem(path: path, followSymbolicLinks: follows))
      if !marks.isEmpty {
        return "marked: \(marks.names.joined(separator: ", "))"
      }
      if let above = try mechanisms.markedAncestor(of: path, followSymbolicLinks: follows) {
        return "below the marked directory \(above.escapedDescription)"
      }
    } catch {
      diagnostics.report(error)
    }
    return nil
  }
}

/// One walk thread's part of `export`: its own reporter, whose output
/// buffer is on the sink the file is written through. Rules come out in the
/// order the threads reach the items, which the backup tools do not mind.
private final class ExportVisitor: ReportingVisitor {
  let reporter: Reporter
  private let output: Output
  private let mechanisms: MechanismSet
  private let syntax: any ExclusionSyntax
  private let root: ExportRoot
  /// The length of the walk root's path, which every rule leaves out.
  private let rootLength: Int

  init(
    mechanisms: MechanismSet, syntax: any ExclusionSyntax, root: ExportRoot, reporter: Reporter
  ) {
    self.mechanisms = mechanisms
    self.syntax = syntax
    self.root = root
    self.reporter = reporter
    self.output = reporter.output
    // The walk's paths start with the root as FilePath spells it.
    self.rootLength = FilePath(bytes: root.path).bytes.count
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    if entry.depth == 0 { return .descend }
    let marks: MechanismSet
    do throws(SkipBackupError) {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    guard !marks.isEmpty else { return .descend }
    var relative = entry.pathBytes[rootLength...]
    if relative.first == UInt8(ascii: "/") { relative.removeFirst() }
    switch syntax.rule(root: root, relative: Array(relative)) {
    case .success(let rule):
      // On a terminal escaped as status shows names: a name can hold an
      // escape sequence that writes the clipboard or the window title.
      output.writeName(rule)
      output.write(syntax.terminator)
      output.endRecord()
    case .failure(let inexpressible):
      reporter.report(
        "\(entry.path.escapedDescription): excluded, but \(inexpressible.reason); "
          + "a backup with this file would include it")
    }
    return .skipChildren
  }
}
