import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The desktop backup apps whose own settings `export --for APP` fills:
/// each keeps its exclusions in a store of its own, which skipbackup
/// shares with the user (GSettings for Déjà Dup, Vorta's SQLite database).
package enum BackupApp: String, CaseIterable, Sendable {
  case dejaDup = "deja-dup"
  case vorta
}

/// `export --for deja-dup|vorta`: walks the folders the app saves (or each
/// ROOT) for the topmost excluded items and, with `apply`, writes them into
/// the app's settings beside the user's own entries, replacing those
/// skipbackup wrote before; without `apply`, prints what would be written.
package struct AppExportRun: Sendable, Equatable {
  package var app: BackupApp
  /// The folders to walk; empty: those the app saves.
  package var roots: [FilePath]
  /// Write the app's settings, rather than print them.
  package var apply = false
  /// Vorta's profile, by name; `nil`: every profile.
  package var profile: String?
  package var mechanisms: MechanismSet
  package var oneFileSystem = false
  package var quiet = false
  package var streams: Streams = .standard

  package init(
    app: BackupApp, roots: [FilePath], apply: Bool = false, profile: String? = nil,
    mechanisms: MechanismSet, oneFileSystem: Bool = false, quiet: Bool = false,
    streams: Streams = .standard
  ) {
    self.app = app
    self.roots = roots
    self.apply = apply
    self.profile = profile
    self.mechanisms = mechanisms
    self.oneFileSystem = oneFileSystem
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    let diagnostics = Diagnostics(streams: streams)
    switch app {
    case .dejaDup: DejaDupExport(export: self, diagnostics: diagnostics).run()
    case .vorta: VortaExport(export: self, diagnostics: diagnostics).run()
    }
    if diagnostics.failures > 0 { throw .failure }
  }

  /// ROOT arguments as absolute, lexically clean paths, as the apps name
  /// the folders they save.
  func absoluteRoots(_ diagnostics: Diagnostics) -> [[UInt8]] {
    roots.compactMap { root in
      guard let absolute = LexicalPath.goAbsolute(root.bytes) else {
        diagnostics.report(
          "\(root.escapedDescription): cannot tell the working directory, so the folder "
            + "cannot be named as the backup app names it")
        return nil
      }
      return absolute
    }
  }

  /// The topmost excluded items under each of `folders` (absolute paths),
  /// in byte order, without repeats; a folder below another is walked once.
  /// A folder that does not exist is skipped, as the apps skip it; one that
  /// is excluded as a whole is its own item.
  func topmostExcluded(under folders: [[UInt8]], _ diagnostics: Diagnostics) -> [[UInt8]] {
    let sorted = Array(Set(folders)).sorted { $0.lexicographicallyPrecedes($1) }
    var walked: [[UInt8]] = []
    for folder in sorted
    where !walked.contains(where: { LexicalPath.isBelowOrAt(folder, $0) }) {
      walked.append(folder)
    }
    var items: [[UInt8]] = []
    let mechanisms = mechanisms
    for folder in walked {
      let path = FilePath(bytes: folder)
      let looked = Result { () throws(SkipBackupError) in
        try FileItem(path: path, followSymbolicLinks: false).status()
      }
      if case .failure(let error) = looked, error.isNoSuchFile { continue }
      let run = WalkRun(streams: streams, showsProgress: !quiet) { diagnostics, progress in
        CollectingVisitor(
          mechanisms: mechanisms,
          reporter: Reporter(diagnostics: diagnostics, progress: progress))
      }
      switch run.placement(of: path, mechanisms) {
      case .below(let above):
        items.append(above.bytes)
        continue
      case .unreadable:
        diagnostics.report(
          "\(path.escapedDescription): not walked: the folders above it cannot be read")
        continue
      case .unmarked: break
      }
      run.walk(path, options: TreeWalkOptions(oneFileSystem: oneFileSystem))
      do throws(ReportedFailure) {
        try run.finish()
      } catch {
        diagnostics.report(
          "\(path.escapedDescription): not every item below could be read (said above), so "
            + "the backup app may still save some excluded items there")
      }
      for visitor in run.visitors { items += visitor.found }
    }
    return Array(Set(items)).sorted { $0.lexicographicallyPrecedes($1) }
  }
}

/// One walk thread's part of an app's export: the topmost excluded items
/// it met, as absolute paths.
final class CollectingVisitor: ReportingVisitor {
  let reporter: Reporter
  private let mechanisms: MechanismSet
  private(set) var found: [[UInt8]] = []

  init(mechanisms: MechanismSet, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.reporter = reporter
  }

  func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    let marks: MechanismSet
    do throws(SkipBackupError) {
      marks = try reporter.marks(mechanisms, of: entry)
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    guard !marks.isEmpty else { return .descend }
    found.append(Array(entry.pathBytes))
    return .skipChildren
  }
}

extension LexicalPath {
  /// Whether the clean absolute path `path` is `folder` or below it.
  static func isBelowOrAt(_ path: [UInt8], _ folder: [UInt8]) -> Bool {
    if path == folder || folder == [UInt8(ascii: "/")] { return true }
    return path.count > folder.count && path.starts(with: folder)
      && path[folder.count] == UInt8(ascii: "/")
  }
}

/// What `program` printed on standard output, run with `arguments` and
/// only `environment`; `nil` when it could not run or failed, which is
/// reported as `failing`, its exit status and the first line it wrote on
/// standard error.
func peerOutput(
  _ program: FilePath, _ arguments: [[UInt8]], environment: [[UInt8]], failing: String,
  _ diagnostics: Diagnostics
) -> [UInt8]? {
  let result: ProgramResult
  do throws(SkipBackupError) {
    result = try runProgram(program, arguments: arguments, environment: environment)
  } catch {
    diagnostics.report(error)
    return nil
  }
  guard result.status == 0 else {
    let said = result.errorOutput.split(separator: UInt8(ascii: "\n")).first.map {
      String(escapingForDisplay: $0)
    }
    diagnostics.report(
      "\(failing): failed (exit status \(result.status))" + (said.map { ": \($0)" } ?? ""))
    return nil
  }
  return result.output
}

/// The state skipbackup keeps of what it wrote into an app's settings, so
/// that a later run takes out only its own entries: one file a store under
/// `$XDG_STATE_HOME/skipbackup` (`~/.local/state/skipbackup`), each entry
/// ended by a NUL, replaced whole when it changes.
struct OwnedEntries {
  let file: FilePath

  init?(named name: String) {
    let state: [UInt8]
    if let value = environmentValue("XDG_STATE_HOME"), value.first == UInt8(ascii: "/") {
      state = value
    } else if let home = environmentValue("HOME"), !home.isEmpty {
      state = home + Array("/.local/state".utf8)
    } else {
      return nil
    }
    file = FilePath(bytes: state + Array("/skipbackup/\(name)".utf8))
  }

  /// The entries written last; none when the file is not there yet.
  func read() throws(SkipBackupError) -> [[UInt8]] {
    do throws(Errno) {
      let bytes = try readWholeFile(file, limit: 64 << 20)
      return bytes.split(separator: 0, omittingEmptySubsequences: true).map(Array.init)
    } catch {
      if error == .noSuchFileOrDirectory { return [] }
      throw SkipBackupError(.openat, error, path: file)
    }
  }

  /// Makes the directories above `file` that are missing (mode 0700), each
  /// in the one above it by descriptor: the deepest that is there is
  /// opened once, and each made is opened by its name, no link followed.
  static func makeDirectories(above file: FilePath) throws(SkipBackupError) {
    var directory = file.removingLastComponent()
    var missing: [FilePath.Component] = []
    while !directory.isEmpty, directory != "/",
      (try? FileItem(path: directory).status()) == nil, let last = directory.lastComponent
    {
      missing.append(last)
      directory = directory.removingLastComponent()
    }
    guard !missing.isEmpty else { return }
    var parent = try Descriptor.open(directory.isEmpty ? "." : directory, [.pathOnly, .directory])
    for name in missing.reversed() {
      let entry = FilePath(root: nil, [name])
      do throws(SkipBackupError) {
        try parent.makeDirectory(entry, mode: 0o700)
      } catch  where error.errno == .fileExists {}
      parent = try parent.open(entry, [.pathOnly, .directory, .noFollow])
    }
  }

  /// Replaces the file with `entries`, making its directories as needed.
  func write(_ entries: [[UInt8]]) throws(SkipBackupError) {
    try Self.makeDirectories(above: file)
    let destination = try OutputFile.open(file)
    guard let replacement = destination.replacement else {
      _ = OutputDescriptor.close(destination.descriptor)
      throw SkipBackupError(refusing: .notARegularFile, path: file, fileType: nil)
    }
    var bytes: [UInt8] = []
    for entry in entries { bytes += entry + [0] }
    let written = bytes.withUnsafeBytes { buffer in
      Result { () throws(SkipBackupError) in try replacement.write(buffer) }
    }
    try written.get()
    try replacement.commit()
  }
}

/// The entries that go into a list that the user and skipbackup share:
/// each of the user's own stays where it is; each of skipbackup's earlier
/// ones stays where it is while it is `wanted`, and goes when it is not;
/// the `wanted` ones not there yet come last, in their order. An entry the
/// user has too counts as the user's. The second value is what skipbackup
/// owns afterwards.
func mergedEntries(
  current: [[UInt8]], owned: [[UInt8]], wanted: [[UInt8]]
) -> (entries: [[UInt8]], owned: [[UInt8]]) {
  let ownedSet = Set(owned)
  let wantedSet = Set(wanted)
  var entries: [[UInt8]] = []
  var present = Set<[UInt8]>()
  var nowOwned: [[UInt8]] = []
  for entry in current where !present.contains(entry) || !ownedSet.contains(entry) {
    if ownedSet.contains(entry) {
      guard wantedSet.contains(entry) else { continue }
      nowOwned.append(entry)
    }
    entries.append(entry)
    present.insert(entry)
  }
  for entry in wanted where !present.contains(entry) {
    entries.append(entry)
    present.insert(entry)
    nowOwned.append(entry)
  }
  return (entries, nowOwned)
}

/// What `export --for` names: a backup tool, whose exclusion file is
/// written, or a backup app, whose own settings are.
package enum ExportTarget: Equatable, Sendable {
  case tool(BackupTool)
  case app(BackupApp)

  package init?(rawValue: String) {
    if let tool = BackupTool(rawValue: rawValue) {
      self = .tool(tool)
    } else if let app = BackupApp(rawValue: rawValue) {
      self = .app(app)
    } else {
      return nil
    }
  }

  package var rawValue: String {
    switch self {
    case .tool(let tool): tool.rawValue
    case .app(let app): app.rawValue
    }
  }

  package static let allCases: [ExportTarget] =
    BackupTool.allCases.map(ExportTarget.tool) + BackupApp.allCases.map(ExportTarget.app)
}
