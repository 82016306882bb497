import ArgumentParser
import SkipBackupCore
import SystemPackage

struct StatusCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Tell whether each item is excluded from backups.",
    discussion: """
      Prints one line an item: [Excluded] or [Included], four spaces, and the path, as \
      tmutil isexcluded does. An item is excluded when it carries a mark itself or when a \
      directory above it does. With --verbose the line also says which marks the item carries \
      and which directory an inherited exclusion comes from. With --format json each item is a \
      JSON object on a line of its own:

        {"path": "a", "excluded": true, "marks": ["xdg"], "inherited_from": null}

      A path that is not valid UTF-8 also gets "path_base64" with its exact bytes. By default \
      every attribute mechanism counts (all: legacy, resource and xdg).

      Exit status: 0 when every item was read, 1 when any could not be, 64 for a usage error.
      """)

  enum Format: String, ExpressibleByArgument, CaseIterable {
    case text, json
  }

  @OptionGroup var mechanisms: MechanismOptions
  @OptionGroup var items: ItemOptions

  @Option(
    help: ArgumentHelp(
      "How to print each item: text, a line as tmutil prints it, or json, one JSON object a line.",
      valueName: "text|json"))
  var format: Format = .text

  @Flag(
    name: [.customShort("v"), .long],
    help:
      "Also say which marks each item carries and which directory an inherited exclusion comes from."
  )
  var verbose = false

  @Flag(name: [.customShort("q"), .long], help: "Show no progress line on a long run.")
  var quiet = false
  @OptionGroup var paths: PathArguments

  func validate() throws {
    try items.validate(paths)
  }

  func run() throws {
    let report = StatusReport(format: format, verbose: verbose)
    let diagnostics = Diagnostics()
    let mechanisms = try mechanisms.mechanisms(default: .all)
    let progress = Progress(enabled: items.recursive && !quiet)
    diagnostics.beforeWriting = {
      progress.erase()
      report.output.flush()  // what came before the message is written before it
    }
    items.forEachPath(paths, diagnostics) { path in
      do throws(SkipBackupError) {
        if items.recursive {
          let above = try mechanisms.markedAncestor(
            of: path, followSymbolicLinks: items.dereference)
          walk(path, above, mechanisms, report, diagnostics, progress)
        } else {
          let status = try mechanisms.status(of: path, followSymbolicLinks: items.dereference)
          report.write(path.bytes, marks: status.marks, inheritedFrom: status.inheritedFrom?.bytes)
        }
      } catch {
        diagnostics.report(error)
      }
    }
    progress.erase()
    report.output.flush()
    if diagnostics.failures > 0 { throw ExitCode.failure }
  }

  /// Where an item's inherited exclusion comes from, in a walk.
  private enum Inheritance {
    case none
    /// A directory above the walk's root.
    case above(FilePath)
    /// A directory in the walk: the first `length` bytes of the item's path.
    case within(length: Int)
  }

  private func walk(
    _ root: FilePath, _ above: FilePath?, _ mechanisms: MechanismSet, _ report: StatusReport,
    _ diagnostics: Diagnostics, _ progress: Progress
  ) {
    let start: Inheritance = above.map { .above($0) } ?? .none
    _ = walkTree(
      root: root, options: items.walkOptions, context: start,
      visit: { entry, inherited in
        progress.tick()
        var marks = MechanismSet([])
        if entry.type == .regular || entry.type == .directory {
          do throws(SkipBackupError) {
            marks = try mechanisms.marks(on: entry.item)
          } catch  where error.isNoSuchFile && entry.depth > 0 {
            return .skipChildren  // gone since it was listed
          } catch {
            diagnostics.report(entry.depth > 0 ? entry.located(error) : error)
            return .skipChildren
          }
        }
        let from: [UInt8]? =
          switch inherited {
          case .none: nil
          case .above(let directory): directory.bytes
          case .within(let length): Array(entry.pathBytes[..<length])
          }
        report.write(entry.pathBytes, marks: marks, inheritedFrom: from)
        // Below a marked directory, the nearest marked directory is this one.
        return .descend(marks.isEmpty ? inherited : .within(length: entry.pathBytes.count))
      },
      failure: { diagnostics.report($0) })
  }
}

/// Prints status lines, as text or JSON Lines.
final class StatusReport {
  let format: StatusCommand.Format
  let verbose: Bool
  let output = Output()

  init(format: StatusCommand.Format, verbose: Bool) {
    self.format = format
    self.verbose = verbose
  }

  func write(_ path: some Collection<UInt8>, marks: MechanismSet, inheritedFrom: [UInt8]?) {
    let excluded = !marks.isEmpty || inheritedFrom != nil
    switch format {
    case .json:
      var line = JSONLine()
      line.path("path", path)
      line.bool("excluded", excluded)
      line.strings("marks", marks.names)
      if let inheritedFrom {
        line.path("inherited_from", inheritedFrom)
      } else {
        line.null("inherited_from")
      }
      output.write(line.finish())
    case .text:
      output.write(excluded ? "[Excluded]    " : "[Included]    ")
      output.write(path)
      if verbose {
        var details: [String] = []
        if !marks.isEmpty { details.append("marked: " + marks.names.joined(separator: ", ")) }
        if let inheritedFrom {
          details.append("inherited from " + String(escapingForDisplay: inheritedFrom))
        }
        if !details.isEmpty { output.write("    (" + details.joined(separator: "; ") + ")") }
      }
      output.write(UInt8(ascii: "\n"))
    }
  }
}

extension FilePath {
  /// The path's bytes, without a terminator.
  var bytes: [UInt8] {
    withPlatformString { pointer in
      Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
