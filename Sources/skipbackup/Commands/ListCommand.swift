import ArgumentParser
import SkipBackupCore
import SystemPackage

struct ListCommand: ParsableCommand, MountPointHelp {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "Walk each ROOT and print the excluded items, or the included ones.",
    discussion: """
      With --excluded (the default) prints the topmost excluded items: a marked directory is \
      printed and what is under it is not. With --included prints every item that no mark \
      excludes, symbolic links and other special files among them: the set a backup should hold. \
      Paths are printed byte for byte, one a line, or ended by NUL bytes with --null for \
      xargs -0 and rsync --from0. The walk never follows a symbolic link and never leaves ROOT. \
      By default every attribute mechanism counts (all: legacy, resource and xdg).

      Exit status: 0 when every item was read, 1 when any could not be, 64 for a usage error.
      """)

  enum Selection: String, EnumerableFlag {
    case excluded, included

    static func help(for value: Selection) -> ArgumentHelp? {
      switch value {
      case .excluded: "Print the topmost excluded items."
      case .included: "Print every item that no mark excludes."
      }
    }
  }

  @Flag var selection: Selection = .excluded

  static let oneFileSystemHelp =
    "Stay on each ROOT's filesystem: directories where another filesystem is mounted are listed but not entered."
  @OptionGroup var tree: TreeOptions<ListCommand>

  @Flag(
    name: [.customShort("0"), .customLong("null")],
    help: "End each path with a NUL byte instead of a newline.")
  var null = false

  @OptionGroup var quiet: QuietOption

  @Argument(
    help: ArgumentHelp("The directories to walk.", valueName: "ROOT"), completion: .directory)
  var roots: [String]

  func run() throws {
    let mechanisms = try tree.mechanisms(default: .all)
    let terminator = null ? 0 : UInt8(ascii: "\n")
    let wantsExcluded = selection == .excluded
    let run = WalkRun(showsProgress: !quiet.quiet) { diagnostics, progress in
      ListVisitor(
        mechanisms: mechanisms, wantsExcluded: wantsExcluded, terminator: terminator,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    let output = run.visitors[0].reporter.output
    for root in roots.map(RawArguments.path) {
      switch run.placement(of: root, mechanisms) {
      case .unmarked:
        run.walk(root, options: TreeWalkOptions(oneFileSystem: tree.oneFileSystem))
      case .below:
        // Excluded as a whole.
        if wantsExcluded { output.write(root, terminator: terminator) }
      case .unreadable: continue
      }
    }
    try run.finish()
  }
}

/// One walk thread's part of `list`: its own reporter (output buffer and
/// progress count).
private final class ListVisitor: ReportingVisitor {
  let reporter: Reporter
  private let output: Output
  private let mechanisms: MechanismSet
  private let wantsExcluded: Bool
  private let terminator: UInt8

  init(mechanisms: MechanismSet, wantsExcluded: Bool, terminator: UInt8, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.wantsExcluded = wantsExcluded
    self.terminator = terminator
    self.reporter = reporter
    self.output = reporter.output
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    let marks: MechanismSet
    do throws(SkipBackupError) {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    let excluded = !marks.isEmpty
    if excluded == wantsExcluded {
      if terminator == 0 {
        output.write(entry.pathBytes)
      } else {
        output.writeName(entry.pathBytes)
      }
      output.write(terminator)
      output.endRecord()
    }
    return excluded ? .skipChildren : .descend
  }
}
