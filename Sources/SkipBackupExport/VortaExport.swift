import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `export --for vorta`: borg patterns for the topmost excluded items under
/// each profile's source folders, in a block of the profile's exclusion
/// patterns that skipbackup owns, between two comment lines.
///
/// From Vorta 0.8.10's source: the profiles are the rows of
/// `backupprofilemodel` in `$XDG_DATA_HOME/Vorta/settings.db` (appdirs'
/// `user_data_dir`, `~/.local/share/Vorta`), their source folders the rows of
/// `sourcedirmodel`; `borg/create.py` splits `exclude_patterns` at newlines,
/// strips each line, skips the empty ones, expands a leading `~`, and hands
/// the rest to `borg create --exclude-from`, which skips `#` lines. The
/// patterns are borg 1.2's (``BorgExclusions``) for the absolute folder
/// names Vorta passes to `borg create`; a `pf:` line is valid UTF-8 and a
/// `re:` line ASCII, as Python's text file needs.
///
/// The database is written through the `sqlite3` program: SQLite's own
/// locking, a busy timeout while Vorta holds a transaction, and a write that
/// changes a profile only if its patterns are still those read (else read
/// again, and retry), so that nothing Vorta wrote in between is lost.
struct VortaExport {
  let export: AppExportRun
  let diagnostics: Diagnostics

  static let begin = Array(
    "# skipbackup: begin (what is marked \"do not back up\"; export --for vorta --apply rewrites it)"
      .utf8)
  static let end = Array("# skipbackup: end".utf8)

  /// How long the `sqlite3` program waits for Vorta's transaction, in
  /// milliseconds, before a write is tried again.
  static let busyTimeout = 10_000
  static let attempts = 5

  struct Profile {
    var id: Int
    var name: [UInt8]
    var patterns: [UInt8]?
  }

  static func databasePath() -> FilePath? {
    if let data = environmentValue("XDG_DATA_HOME"), !data.isEmpty {
      return FilePath(bytes: data + Array("/Vorta/settings.db".utf8))
    }
    guard let home = environmentValue("HOME"), !home.isEmpty else { return nil }
    return FilePath(bytes: home + Array("/.local/share/Vorta/settings.db".utf8))
  }

  func run() {
    guard let database = Self.databasePath() else {
      diagnostics.report("HOME is not set, so Vorta's settings cannot be found")
      return
    }
    do {
      _ = try FileItem(path: database).status()
    } catch {
      diagnostics.report(
        error.description + " (Vorta's settings database: start Vorta once to make it)")
      return
    }
    guard let sqlite = findProgram(Array("sqlite3".utf8)) else {
      diagnostics.report(
        "sqlite3: not found on PATH; it reads and writes Vorta's settings database "
          + "(Debian: apt install sqlite3)")
      return
    }
    let store = SQLiteProgram(sqlite: sqlite, database: database)
    guard var profiles = readProfiles(store) else { return }
    if let name = export.profile {
      profiles = profiles.filter { $0.name == Array(name.utf8) }
      if profiles.isEmpty {
        diagnostics.report(
          "\(database.escapedDescription): Vorta has no profile named \(String(escapingForDisplay: Array(name.utf8)[...]))"
        )
        return
      }
    }
    guard let sources = readSources(store) else { return }
    var walked: [[[UInt8]]: [[UInt8]]] = [:]
    let given = export.roots.isEmpty ? nil : export.absoluteRoots(diagnostics)
    for profile in profiles {
      let folders =
        given
        ?? sources.filter { $0.profile == profile.id }.map {
          LexicalPath.pythonNormalized($0.folder)
        }
        .filter { $0.first == UInt8(ascii: "/") }
      let items: [[UInt8]]
      if let known = walked[folders] {
        items = known
      } else {
        items = export.topmostExcluded(under: folders, diagnostics)
        walked[folders] = items
      }
      let root = ExportRoot(path: [UInt8(ascii: "/")], followsSymbolicLink: false)
      var rules: [[UInt8]] = []
      for item in items {
        switch BorgExclusions().rule(root: root, relative: Array(item.dropFirst())) {
        case .success(let rule): rules.append(rule)
        case .failure(let reason):
          diagnostics.report(
            "\(FilePath(bytes: item).escapedDescription): excluded, but \(reason.reason); "
              + "Vorta would back it up")
        }
      }
      guard export.apply else {
        var text = Array("# Vorta profile ".utf8) + profile.name + [UInt8(ascii: "\n")]
        for rule in rules { text += rule + [UInt8(ascii: "\n")] }
        if case .failure = OutputDescriptor.writeAll(text, to: export.streams.output) {
          diagnostics.report("standard output: cannot be written")
          return
        }
        continue
      }
      write(rules, to: profile, store, database)
    }
  }

  /// `patterns` with skipbackup's block taken out and, when there are
  /// `rules`, a new one put at the end; the user's lines stay as they are.
  static func patterns(_ patterns: [UInt8]?, with rules: [[UInt8]]) -> [UInt8]? {
    var lines = (patterns ?? []).split(
      separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false
    )
    .map(Array.init)
    if let first = lines.firstIndex(of: begin) {
      let last = lines[first...].firstIndex(of: end) ?? lines.count - 1
      // The line break before the block went with the split: the user's
      // text comes back as it was.
      lines.removeSubrange(first...last)
    }
    var user = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    if lines.isEmpty { user = [] }
    guard !rules.isEmpty else {
      if patterns == nil { return nil }
      return user
    }
    var text = user
    if !text.isEmpty { text += [UInt8(ascii: "\n")] }
    text += begin
    for rule in rules { text += [UInt8(ascii: "\n")] + rule }
    text += [UInt8(ascii: "\n")] + end
    return text
  }

  private func write(
    _ rules: [[UInt8]], to profile: Profile, _ store: SQLiteProgram, _ database: FilePath
  ) {
    var profile = profile
    for _ in 0..<Self.attempts {
      let updated = Self.patterns(profile.patterns, with: rules)
      if updated == profile.patterns { return }
      let statement =
        "UPDATE backupprofilemodel SET exclude_patterns = \(SQLiteProgram.literal(updated)) "
        + "WHERE id = \(profile.id) AND exclude_patterns IS \(SQLiteProgram.literal(profile.patterns)); "
        + "SELECT changes();"
      guard let output = store.run(statement, diagnostics) else { return }
      if output.split(separator: UInt8(ascii: "\n")).last.map(Array.init) == Array("1".utf8) {
        return
      }
      // Vorta changed the profile since it was read: read it again.
      guard let profiles = readProfiles(store),
        let again = profiles.first(where: { $0.id == profile.id })
      else { return }
      profile = again
    }
    diagnostics.report(
      "\(database.escapedDescription): Vorta's profile \(String(escapingForDisplay: profile.name[...])) "
        + "changed under every one of \(Self.attempts) writes; its patterns are not updated")
  }

  private func readProfiles(_ store: SQLiteProgram) -> [Profile]? {
    guard
      let rows = store.rows(
        "SELECT id, hex(name), exclude_patterns IS NULL, hex(exclude_patterns) "
          + "FROM backupprofilemodel ORDER BY id;", diagnostics)
    else { return nil }
    return rows.compactMap { row in
      guard row.count == 4, let id = Int(String(decoding: row[0], as: UTF8.self)) else {
        return nil
      }
      return Profile(
        id: id, name: SQLiteProgram.unhex(row[1]),
        patterns: row[2] == Array("1".utf8) ? nil : SQLiteProgram.unhex(row[3]))
    }
  }

  private func readSources(_ store: SQLiteProgram) -> [(profile: Int, folder: [UInt8])]? {
    guard
      let rows = store.rows(
        "SELECT profile_id, hex(dir) FROM sourcedirmodel ORDER BY id;", diagnostics)
    else { return nil }
    return rows.compactMap { row in
      guard row.count == 2, let id = Int(String(decoding: row[0], as: UTF8.self)) else {
        return nil
      }
      return (id, SQLiteProgram.unhex(row[1]))
    }
  }
}

/// An SQLite database through the `sqlite3` program: each statement one
/// run, waiting out another process's lock for ``VortaExport/busyTimeout``;
/// text goes in and comes out as hexadecimal, so no byte of it is quoted or
/// split.
struct SQLiteProgram {
  let sqlite: FilePath
  let database: FilePath

  func run(_ sql: String, _ diagnostics: Diagnostics) -> [UInt8]? {
    let arguments: [[UInt8]] =
      [
        "-batch", "-bail", "-noheader", "-list", "-separator", "|", "-cmd",
        ".timeout \(VortaExport.busyTimeout)",
      ]
      .map { Array($0.utf8) } + [database.bytes, Array(sql.utf8)]
    return peerOutput(
      sqlite, arguments, environment: [],
      failing: "\(database.escapedDescription): \(sqlite.escapedDescription)", diagnostics)
  }

  func rows(_ sql: String, _ diagnostics: Diagnostics) -> [[[UInt8]]]? {
    guard let output = run(sql, diagnostics) else { return nil }
    return output.split(separator: UInt8(ascii: "\n")).map {
      $0.split(separator: UInt8(ascii: "|"), omittingEmptySubsequences: false).map(Array.init)
    }
  }

  /// `text` as an SQL literal of type TEXT, or NULL.
  static func literal(_ text: [UInt8]?) -> String {
    guard let text else { return "NULL" }
    return
      "CAST(X'\(String(decoding: text.flatMap { hexDigits(UInt32($0), width: 2) }, as: UTF8.self))' AS TEXT)"
  }

  static func unhex(_ hex: [UInt8]) -> [UInt8] {
    func value(_ digit: UInt8) -> UInt8 {
      switch digit {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
      default: digit &- UInt8(ascii: "a") &+ 10
      }
    }
    return stride(from: 0, to: hex.count - 1, by: 2).map {
      value(hex[$0]) << 4 | value(hex[$0 + 1])
    }
  }
}
