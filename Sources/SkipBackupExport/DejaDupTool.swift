import SkipBackupCore
import SkipBackupReport
import SystemPackage

/// Déjà Dup's settings as `run --for deja-dup` and `export --for deja-dup`
/// read them: through `gsettings`, the session's own backend.
package enum DejaDupSettings {
  /// The `org.gnome.DejaDup` keys, or `nil` (reported) when `gsettings`
  /// is not there to read them.
  static func keys(_ diagnostics: Diagnostics) -> GSettingsKeys? {
    guard let gsettings = findProgram(Array("gsettings".utf8)) else {
      diagnostics.report(
        "gsettings: not found on PATH; it reads and writes Déjà Dup's settings "
          + "(Debian: apt install libglib2.0-bin)")
      return nil
    }
    return GSettingsKeys(gsettings: gsettings, schema: DejaDupExport.schema)
  }

  /// The folders Déjà Dup saves: each entry of its `include-list` where
  /// Déjà Dup 44 resolves it (``DejaDupPlaces``); `nil` (reported) when
  /// the settings cannot be read.
  package static func savedFolders(_ diagnostics: Diagnostics) -> [[UInt8]]? {
    guard let settings = keys(diagnostics),
      let include = settings.get("include-list", diagnostics)
    else { return nil }
    return include.compactMap(DejaDupPlaces.current().resolve)
  }
}

/// The backup tools Déjà Dup 44 runs through its `custom-tool-wrapper`,
/// and which of their runs read the files it saves.
///
/// Déjà Dup reads the wrapper with `g_settings_get_string`, splits it with
/// `g_shell_parse_argv` (shell quoting, no expansion) and puts the words in
/// front of the tool's own (`ToolInstance.prefix_wrapper_args`, read in
/// libdeja.so 44.0's code, whose source is not among the stored ones): so
/// the wrapper gets every run of the tool, backups and all the others. A
/// backup goes through the view; a restore must write the real tree, and a
/// status, a listing or a cleanup reads only the backup's own files, so
/// those run as they are.
package enum DejaDupTool: CaseIterable, Sendable {
  case duplicity, restic, borg

  /// The program's name, as Déjà Dup runs it (found on PATH).
  var program: [UInt8] {
    switch self {
    case .duplicity: Array("duplicity".utf8)
    case .restic: Array("restic".utf8)
    case .borg: Array("borg".utf8)
    }
  }

  /// The action words, the first argument that is not an option, that
  /// make a run read the files it saves. Déjà Dup 44's duplicity runs,
  /// as its wrapper received them: `collection-status`, `full --dry-run`
  /// (the size, before the backup), then `full` or no action at all
  /// (duplicity's implied backup, incremental: the first word that is not
  /// an option is the folder it saves, `/`), and `restore` (a check of
  /// the new backup, and the user's restores).
  var backupActions: [[UInt8]] {
    switch self {
    case .duplicity: [Array("full".utf8), Array("incremental".utf8), Array("incr".utf8)]
    case .restic: [Array("backup".utf8)]
    case .borg: [Array("create".utf8)]
    }
  }

  /// The options, each with its `=`, whose value is the tool's own working
  /// state: duplicity's archive directory (`--archive-dir=`, under
  /// `~/.cache/deja-dup`) and temporary directory (`--tempdir=`), which
  /// Déjà Dup passes to every run, and restic's `--cache-dir=`.
  package static let stateOptions: [[UInt8]] = [
    Array("--archive-dir=".utf8), Array("--tempdir=".utf8), Array("--cache-dir=".utf8),
  ]

  /// What Déjà Dup includes of its own state in a backup: each
  /// `--include=` directory inside the `--archive-dir=` one. Déjà Dup 44
  /// passes `--include=~/.cache/deja-dup/metadata` first, backs it up, and
  /// restores it after the backup to check the backup; when `~/.cache` is
  /// marked (the sweep's xdg-cache rule), the view must still show it.
  package static func ownIncludes(_ command: [[UInt8]]) -> [[UInt8]] {
    func values(_ option: String) -> [[UInt8]] {
      let prefix = Array(option.utf8)
      return command.filter { $0.starts(with: prefix) }.map { Array($0.dropFirst(prefix.count)) }
    }
    let archives = values("--archive-dir=")
    return values("--include=").filter { include in
      archives.contains { path(include[...], below: $0) != nil }
    }
  }

  /// The tool `command` runs, by its program's last name; `nil` for
  /// another program.
  package init?(command: [[UInt8]]) {
    guard let first = command.first,
      let name = first.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).last,
      let tool = Self.allCases.first(where: { $0.program.elementsEqual(name) })
    else { return nil }
    self = tool
  }

  /// Whether `command` (this tool and its arguments) is a backup: its
  /// first word that is not an option is one of ``backupActions``, or,
  /// for duplicity, a local folder (an absolute path: duplicity's implied
  /// backup, where a URL first is its implied restore).
  package func backsUp(_ command: [[UInt8]]) -> Bool {
    guard let action = command.dropFirst().first(where: { $0.first != UInt8(ascii: "-") }) else {
      return false
    }
    return backupActions.contains(action)
      || (self == .duplicity && action.first == UInt8(ascii: "/"))
  }
}
