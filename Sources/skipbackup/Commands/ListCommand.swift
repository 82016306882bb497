import ArgumentParser
import SkipBackupCore
import SystemPackage

struct ListCommand: ParsableCommand {
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

  @OptionGroup var mechanisms: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Stay on each ROOT's filesystem: directories where another filesystem is mounted are listed but not entered."
  )
  var oneFileSystem = false

  @Flag(
    name: [.customShort("0"), .customLong("null")],
    help: "End each path with a NUL byte instead of a newline.")
  var null = false

  @Flag(name: [.customShort("q"), .long], help: "Show no progress line on a long run.")
  var quiet = false

  @Argument(
    help: ArgumentHelp("The directories to walk.", valueName: "ROOT"), completion: .directory)
  var roots: [String]

  func run() throws {
    let mechanisms = try mechanisms.mechanisms(default: .all)
    let progress = Progress(enabled: !quiet)
    let diagnostics = Diagnostics(progress: progress)
    let terminator = null ? 0 : UInt8(ascii: "\n")
    let wantsExcluded = selection == .excluded
    let visitors = (0..<walkThreads).map { _ in
      ListVisitor(
        mechanisms: mechanisms, wantsExcluded: wantsExcluded, terminator: terminator,
        diagnostics: diagnostics, progress: progress)
    }
    let output = visitors[0].output
    for root in roots.map(RawArguments.path) {
      do throws(SkipBackupError) {
        // A root below a marked directory is excluded as a whole.
        if try mechanisms.markedAncestor(of: root) != nil {
          if wantsExcluded { output.write(root, terminator: terminator) }
          continue
        }
      } catch {
        diagnostics.report(error, after: output)
        continue
      }
      _ = walkTree(
        root: root, options: TreeWalkOptions(oneFileSystem: oneFileSystem), visitors: visitors)
    }
    for visitor in visitors { visitor.output.flush() }
    progress.erase()
    if diagnostics.failures > 0 { throw ExitCode.failure }
  }
}

/// One walk thread's part of `list`: its own output buffer and progress count.
private final class ListVisitor: TreeVisitor {
  let output = Output()
  private let mechanisms: MechanismSet
  private let wantsExcluded: Bool
  private let terminator: UInt8
  private let diagnostics: Diagnostics
  private var progress: ProgressCounter

  init(
    mechanisms: MechanismSet, wantsExcluded: Bool, terminator: UInt8, diagnostics: Diagnostics,
    progress: Progress
  ) {
    self.mechanisms = mechanisms
    self.wantsExcluded = wantsExcluded
    self.terminator = terminator
    self.diagnostics = diagnostics
    self.progress = ProgressCounter(progress)
  }

  func visit(_ entry: TreeEntry) -> TreeVisit {
    progress.tick()
    guard let marks = entry.marks(mechanisms, reportingTo: diagnostics, after: output) else {
      return .skipChildren
    }
    let excluded = !marks.isEmpty
    if excluded == wantsExcluded {
      output.write(entry.pathBytes)
      output.write(terminator)
      output.endRecord()
    }
    return excluded ? .skipChildren : .descend
  }

  func walkFailed(_ error: SkipBackupError) {
    diagnostics.report(error, after: output)
  }
}
