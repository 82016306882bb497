import ArgumentParser
import SkipBackupCore
import SystemPackage

/// What `mark` and `clear` share: going through the items, writing or
/// removing marks, saying what changed, and the exit status.
struct MarkingRun {
  enum Action {
    case mark, clear

    var verb: String { self == .mark ? "mark" : "clear" }
    var past: String { self == .mark ? "marked" : "cleared" }
    var unchanged: String { self == .mark ? "already marked" : "not marked" }
  }

  let action: Action
  let mechanisms: MechanismSet
  let items: ItemOptions
  let paths: PathArguments
  let reporting: ReportingOptions
  let dryRun: Bool

  private let output = Output()
  private let diagnostics = Diagnostics()

  init(
    action: Action, mechanisms: MechanismSet, items: ItemOptions, paths: PathArguments,
    reporting: ReportingOptions, dryRun: Bool
  ) {
    self.action = action
    self.mechanisms = mechanisms
    self.items = items
    self.paths = paths
    self.reporting = reporting
    self.dryRun = dryRun
  }

  private struct Counts {
    var changed = 0
    var unchanged = 0
    var skipped = 0
    var otherFilesystem = 0
    var vanished = 0
  }

  func run() throws {
    var counts = Counts()
    let progress = Progress(enabled: items.recursive && !reporting.quiet)
    diagnostics.beforeWriting = {
      progress.erase()
      output.flush()  // what came before the message is written before it
    }
    items.forEachPath(paths, diagnostics) { path in
      if items.recursive {
        walk(path, &counts, progress)
      } else {
        applyToPath(path, &counts)
      }
    }
    progress.erase()
    output.flush()
    if reporting.verbose { summarize(counts) }
    if diagnostics.failures > 0 { throw ExitCode.failure }
  }

  /// One PATH, not recursive: a symbolic link is refused unless `-L`.
  private func applyToPath(_ path: FilePath, _ counts: inout Counts) {
    let item = FileItem(path: path, followSymbolicLinks: items.dereference)
    if !items.dereference, let refusal = symbolicLinkRefusal(item) {
      diagnostics.report(refusal)
      return
    }
    apply(item, path, &counts)
  }

  private func walk(_ root: FilePath, _ counts: inout Counts, _ progress: Progress) {
    let walked = walkTree(
      root: root, options: items.walkOptions,
      visit: { entry in
        progress.tick()
        if entry.isOnOtherFilesystem {
          counts.otherFilesystem += 1
          return .skipChildren
        }
        switch entry.type {
        case .regular, .directory:
          guard apply(entry.item, entry, &counts) else { return .skipChildren }
        case .symbolicLink where entry.depth == 0:
          diagnostics.report(symbolicLinkError(entry.item))
        case _ where entry.depth == 0:
          // A device, FIFO or socket given as PATH is handled as without -R:
          // the kernel's refusal is reported, not counted as skipped.
          _ = apply(entry.item, entry, &counts)
        default:
          counts.skipped += 1  // links, devices, FIFOs and sockets keep no user attributes
        }
        return .descend
      },
      failure: { diagnostics.report($0) })
    counts.vanished += walked.vanished
  }

  /// Marks or clears an entry of a walk; returns whether the walk may go on
  /// into it: not when it is gone, or has been replaced by a symbolic link or
  /// a special file since its directory was listed.
  private func apply(_ item: FileItem, _ entry: TreeEntry, _ counts: inout Counts) -> Bool {
    do {
      try apply(item, &counts) { entry.path }
    } catch  where error.isNoSuchFile && entry.depth > 0 {
      counts.vanished += 1
      return false
    } catch  where error.isRefusalOfASpecialFile && entry.depth > 0 {
      // Swapped in during the walk: skipped as if met on the way, and not followed.
      counts.skipped += 1
      return false
    } catch {
      diagnostics.report(entry.depth > 0 ? entry.located(error) : error)
    }
    return true
  }

  private func apply(_ item: FileItem, _ path: FilePath, _ counts: inout Counts) {
    do {
      try apply(item, &counts) { path }
    } catch {
      diagnostics.report(error)
    }
  }

  /// Marks or clears `item`, or with `--dry-run` says whether it would.
  private func apply(
    _ item: FileItem, _ counts: inout Counts, path: () -> FilePath
  ) throws(SkipBackupError) {
    let changed: Bool
    if dryRun {
      let marks = try mechanisms.marks(on: item)
      changed = action == .mark ? marks.count < mechanisms.count : !marks.isEmpty
    } else {
      changed = action == .mark ? try mechanisms.mark(item) : try mechanisms.clear(item)
    }
    guard changed else {
      counts.unchanged += 1
      return
    }
    counts.changed += 1
    if dryRun {
      output.write("would \(action.verb) ")
      output.write(path(), terminator: UInt8(ascii: "\n"))
    } else if reporting.verbose {
      output.write("\(action.past) ")
      output.write(path(), terminator: UInt8(ascii: "\n"))
    }
  }

  private func symbolicLinkRefusal(_ item: FileItem) -> SkipBackupError? {
    guard let status = try? item.status(), status.st_mode & S_IFMT == S_IFLNK else { return nil }
    return symbolicLinkError(item)
  }

  private func symbolicLinkError(_ item: FileItem) -> SkipBackupError {
    SkipBackupError(
      symbolicLinkRefusalAt: item.displayPath, call: action == .mark ? "mark" : "clear")
  }

  private func summarize(_ counts: Counts) {
    var parts = [
      "\(dryRun ? "would \(action.verb)" : action.past) \(counts.changed)",
      "\(action.unchanged) \(counts.unchanged)",
      "skipped \(counts.skipped) (symbolic links, devices, FIFOs and sockets)",
    ]
    if items.oneFileSystem {
      parts.append("not entered \(counts.otherFilesystem) (other filesystems)")
    }
    if counts.vanished > 0 { parts.append("vanished \(counts.vanished)") }
    parts.append("errors \(diagnostics.failures)")
    diagnostics.note(parts.joined(separator: ", "))
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension SkipBackupError {
  /// Whether the kernel refused because the item is a symbolic link, a
  /// device, a FIFO or a socket, which keep no user attributes.
  fileprivate var isRefusalOfASpecialFile: Bool {
    guard errno == .notPermitted, let fileType else { return false }
    return fileType != .regular && fileType != .directory
  }
}
