import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `export`: walks ROOT as the backup tool will read it and writes one rule
/// for each topmost excluded item, in the tool's own syntax.
package struct ExportRun: Sendable, Equatable {
  /// ROOT as given: the tool's reading of it decides the tree walked.
  package var root: FilePath
  package var tool: BackupTool
  package var mechanisms: MechanismSet
  /// Where the file goes (`-o`); standard output when `nil`.
  package var output: FilePath?
  /// Stay on ROOT's filesystem (`-x`).
  package var oneFileSystem = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// Where the file goes without `-o`, and where the failures are said.
  package var streams: Streams = .standard

  package init(
    root: FilePath, tool: BackupTool, mechanisms: MechanismSet, output: FilePath? = nil,
    oneFileSystem: Bool = false, quiet: Bool = false, streams: Streams = .standard
  ) {
    self.root = root
    self.tool = tool
    self.mechanisms = mechanisms
    self.output = output
    self.oneFileSystem = oneFileSystem
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let (mechanisms, tool) = (mechanisms, tool)
    // What is wrong before the walk ends the run at once.
    let early = Diagnostics(streams: streams)
    let rootArgument = root
    let walkRoot: ExportRoot
    do throws(ExportFailure) {
      walkRoot = try tool.walkRoot(for: rootArgument.bytes)
    } catch {
      early.report("\(rootArgument.escapedDescription): \(error.message)")
      throw .failure
    }
    let rootPath = FilePath(bytes: walkRoot.path)
    if let reason = excludedRootReason(rootPath, walkRoot, mechanisms, early) {
      early.report(
        "\(rootPath.escapedDescription): excluded from backups as a whole (\(reason)), so no "
          + "\(tool.rawValue) exclusion file is written: a backup of it should hold nothing")
      throw .failure
    }
    if early.failures > 0 { throw .failure }

    let destination: OutputFile
    if let output {
      do throws(SkipBackupError) {
        destination = try OutputFile.open(output)
      } catch {
        early.report(error)
        throw .failure
      }
    } else {
      destination = .inPlace(streams.output)
    }
    let run = WalkRun(
      streams: output == nil ? streams : streams.writingOutput(to: destination.descriptor),
      showsProgress: !quiet
    ) { diagnostics, progress in
      ExportVisitor(
        mechanisms: mechanisms, tool: tool, root: walkRoot,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    run.walk(
      rootPath,
      options: TreeWalkOptions(
        oneFileSystem: oneFileSystem, followRootSymbolicLink: walkRoot.followsSymbolicLink))
    try run.finish {
      if let replacement = destination.replacement {
        do throws(SkipBackupError) {
          try replacement.commit()
        } catch {
          run.diagnostics.report(error)
        }
      } else if let output, case .failure = OutputDescriptor.close(destination.descriptor) {
        run.diagnostics.report("\(output.escapedDescription): cannot be written")
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
  private let tool: BackupTool
  private let root: ExportRoot
  /// The length of the walk root's path, which every rule leaves out.
  private let rootLength: Int

  init(
    mechanisms: MechanismSet, tool: BackupTool, root: ExportRoot, reporter: Reporter
  ) {
    self.mechanisms = mechanisms
    self.tool = tool
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
    switch tool.rule(root: root, relative: Array(relative)) {
    case .success(let rule):
      // On a terminal escaped as status shows names: a name can hold an
      // escape sequence that writes the clipboard or the window title.
      output.writeName(rule)
      output.write(tool.terminator)
      output.endRecord()
    case .failure(let inexpressible):
      reporter.report(
        "\(entry.path.escapedDescription): excluded, but \(inexpressible.reason); "
          + "a backup with this file would include it")
    }
    return .skipChildren
  }
}
