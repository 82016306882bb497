import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `export --for deja-dup`: the topmost excluded items under the folders
/// Déjà Dup saves, in its GSettings `exclude-list`.
///
/// The settings are read and written by `gsettings` itself, the peer, so
/// that whichever backend the session uses (dconf, or the keyfile of
/// `GSETTINGS_BACKEND=keyfile`) is the one written, as Déjà Dup reads it;
/// one `gsettings set` of the whole list is one change of the key, which
/// Déjà Dup reads whole.
struct DejaDupExport {
  let export: AppExportRun
  let diagnostics: Diagnostics

  static let schema = "org.gnome.DejaDup"

  func run() {
    guard let settings = DejaDupSettings.keys(diagnostics) else { return }
    let folders: [[UInt8]]
    if export.roots.isEmpty {
      guard let saved = DejaDupSettings.savedFolders(diagnostics) else { return }
      folders = saved
    } else {
      folders = export.absoluteRoots(diagnostics)
    }
    guard let current = settings.get("exclude-list", diagnostics) else { return }
    var wanted: [[UInt8]] = []
    for item in export.topmostExcluded(under: folders, diagnostics) {
      if let reason = DejaDupPlaces.unnameableReason(item) {
        diagnostics.report(
          "\(FilePath(bytes: item).escapedDescription): excluded, but Déjà Dup's exclude-list "
            + "cannot name it (\(reason)); Déjà Dup would back it up "
            + "(skipbackup run leaves it out)")
        continue
      }
      wanted.append(item)
    }
    guard let state = OwnedEntries(named: "deja-dup-exclude-list") else {
      diagnostics.report(
        "HOME is not set, so skipbackup has nowhere to keep which exclude-list entries are its own")
      return
    }
    let owned: [[UInt8]]
    do throws(SkipBackupError) {
      owned = try state.read()
    } catch {
      diagnostics.report(error)
      return
    }
    let merged = mergedEntries(current: current, owned: owned, wanted: wanted)
    guard export.apply else {
      let text = GVariantText.stringArray(merged.entries) + [UInt8(ascii: "\n")]
      if case .failure = OutputDescriptor.writeAll(text, to: export.streams.output) {
        diagnostics.report("standard output: cannot be written")
      }
      return
    }
    do throws(SkipBackupError) {
      if merged.entries != current {
        // Claimed before the write: entries written but not recorded would
        // become the user's own, and stay for ever.
        if Set(owned + merged.owned) != Set(owned) { try state.write(owned + merged.owned) }
        guard settings.set("exclude-list", merged.entries, diagnostics) else { return }
      }
      if merged.owned != owned { try state.write(merged.owned) }
    } catch {
      diagnostics.report(error)
    }
  }
}

/// Keys of one GSettings schema, through the `gsettings` program: the
/// session's own backend, whatever it is.
struct GSettingsKeys {
  let gsettings: FilePath
  let schema: String

  /// What `gsettings` needs of this process's environment to reach the
  /// same settings the session's apps do.
  static func environment() -> [[UInt8]] {
    let names = [
      "HOME", "USER", "LOGNAME", "PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS",
      "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "GSETTINGS_BACKEND", "GSETTINGS_SCHEMA_DIR",
      "DCONF_PROFILE", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
    ]
    return names.compactMap { name in environmentValue(name).map { Array("\(name)=".utf8) + $0 } }
  }

  private func gsettings(
    _ arguments: [[UInt8]], _ diagnostics: Diagnostics
  ) -> [UInt8]? {
    peerOutput(
      gsettings, arguments, environment: Self.environment(),
      failing: "\(gsettings.escapedDescription) "
        + arguments.prefix(3).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " "),
      diagnostics)
  }

  /// The strings of `key`, an `as`.
  func get(_ key: String, _ diagnostics: Diagnostics) -> [[UInt8]]? {
    let arguments = ["get", schema, key].map { Array($0.utf8) }
    guard let output = gsettings(arguments, diagnostics) else { return nil }
    guard let strings = GVariantText.parseStringArray(output) else {
      diagnostics.report(
        "gsettings get \(schema) \(key): printed what is not a list of strings: "
          + String(escapingForDisplay: output[...]))
      return nil
    }
    return strings
  }

  /// Sets `key` to `strings`, in one write.
  func set(_ key: String, _ strings: [[UInt8]], _ diagnostics: Diagnostics) -> Bool {
    let arguments =
      ["set", schema, key].map { Array($0.utf8) } + [GVariantText.stringArray(strings)]
    return gsettings(arguments, diagnostics) != nil
  }
}

/// Where Déjà Dup 44's entries lead: libdeja/DirHandling.vala's
/// `parse_keywords` and `parse_dir`, with GLib's answers for the home
/// directory (`$HOME`), the data directory (`$XDG_DATA_HOME`, for `$TRASH`),
/// the user's name (the password database) and the user's special folders
/// (`user-dirs.dirs`, as GLib's `load_user_special_dirs` reads it).
struct DejaDupPlaces {
  var home: [UInt8]
  var dataHome: [UInt8]
  var userName: [UInt8]
  /// `$DESKTOP` and the others, each the folder GLib says, or `nil`.
  var special: [(keyword: [UInt8], folder: [UInt8]?)]

  /// The keywords Déjà Dup replaces at the start of an entry, each with
  /// the `user-dirs.dirs` variable GLib reads for it.
  static let keywords: [(keyword: String, variable: String)] = [
    ("$DESKTOP", "XDG_DESKTOP_DIR"), ("$DOCUMENTS", "XDG_DOCUMENTS_DIR"),
    ("$DOWNLOAD", "XDG_DOWNLOAD_DIR"), ("$MUSIC", "XDG_MUSIC_DIR"),
    ("$PICTURES", "XDG_PICTURES_DIR"), ("$PUBLIC_SHARE", "XDG_PUBLICSHARE_DIR"),
    ("$TEMPLATES", "XDG_TEMPLATES_DIR"), ("$VIDEOS", "XDG_VIDEOS_DIR"),
  ]

  static func current() -> DejaDupPlaces {
    let home = environmentValue("HOME") ?? []
    var dataHome = home + Array("/.local/share".utf8)
    if let value = environmentValue("XDG_DATA_HOME"), !value.isEmpty { dataHome = value }
    var configHome = home + Array("/.config".utf8)
    if let value = environmentValue("XDG_CONFIG_HOME"), !value.isEmpty { configHome = value }
    let userDirs = Self.userDirs(
      (try? readWholeFile(FilePath(bytes: configHome + Array("/user-dirs.dirs".utf8)))) ?? [],
      home: home)
    var special: [(keyword: [UInt8], folder: [UInt8]?)] = []
    for (keyword, variable) in keywords {
      var folder = userDirs[Array(variable.utf8)]
      // GLib's own default, for historical compatibility: only the desktop has one.
      if folder == nil, keyword == "$DESKTOP" {
        folder = buildFilename(home, Array("Desktop".utf8))
      }
      special.append((Array(keyword.utf8), folder))
    }
    return DejaDupPlaces(
      home: home, dataHome: dataHome, userName: userName() ?? environmentValue("USER") ?? [],
      special: special)
  }

  /// The login name of the real user, as `g_get_user_name` reads it.
  static func userName() -> [UInt8]? {
    // A user database that cannot be read answers as one without the
    // user: the caller falls back to $USER, as GLib's g_get_user_name does.
    (try? loginName(of: system_getuid(), reporting: "/etc/passwd")) ?? nil
  }

  /// `user-dirs.dirs` as GLib 2.74's `load_user_special_dirs` reads it: a
  /// line `XDG_NAME_DIR="$HOME/relative"` or `XDG_NAME_DIR="/absolute"`, up
  /// to the last quote, one trailing slash dropped.
  static func userDirs(_ file: [UInt8], home: [UInt8]) -> [[UInt8]: [UInt8]] {
    var folders: [[UInt8]: [UInt8]] = [:]
    for line in file.split(separator: UInt8(ascii: "\n")) {
      var rest = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      guard
        let name = keywords.lazy.map({ Array($0.variable.utf8) }).first(where: {
          rest.starts(with: $0)
        })
      else { continue }
      rest = rest.dropFirst(name.count).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      guard rest.first == UInt8(ascii: "=") else { continue }
      rest = rest.dropFirst().drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      guard rest.first == UInt8(ascii: "\"") else { continue }
      rest = rest.dropFirst()
      var relative = false
      if rest.starts(with: Array("$HOME".utf8)) {
        rest = rest.dropFirst(5)
        relative = true
      } else if rest.first != UInt8(ascii: "/") {
        continue
      }
      guard let end = rest.lastIndex(of: UInt8(ascii: "\"")) else { continue }
      var value = Array(rest[..<end])
      if value.count > 1, value.last == UInt8(ascii: "/") { value.removeLast() }
      folders[name] = relative ? buildFilename(home, value) : value
    }
    return folders
  }

  /// GLib's `g_build_filename(first, second)`: one slash between them.
  static func buildFilename(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
    var head = first
    while head.count > 1, head.last == UInt8(ascii: "/") { head.removeLast() }
    let tail = second.drop { $0 == UInt8(ascii: "/") }
    if tail.isEmpty { return head }
    if head.isEmpty { return Array(tail) }
    if head == [UInt8(ascii: "/")] { return head + tail }
    return head + [UInt8(ascii: "/")] + tail
  }

  /// The folder Déjà Dup reads for `entry`, or `nil` when it skips it.
  func resolve(_ entry: [UInt8]) -> [UInt8]? {
    var result = entry
    if result.starts(with: Array("$HOME".utf8)) {
      result = Self.replacing(Array("$HOME".utf8), with: home, in: result)
    } else if result.starts(with: Array("$TRASH".utf8)) {
      result = Self.replacing(
        Array("$TRASH".utf8), with: Self.buildFilename(dataHome, Array("Trash".utf8)), in: result)
    } else if let (keyword, folder) = special.first(where: { result.starts(with: $0.keyword) }) {
      guard let folder else { return nil }
      result = Self.replacing(keyword, with: folder, in: result)
    }
    result = Self.replacing(Array("$USER".utf8), with: userName, in: result)
    if result.first != UInt8(ascii: "/") {
      // A URI (`scheme:`) names no local folder to walk.
      if let colon = result.firstIndex(of: UInt8(ascii: ":")),
        result[..<colon].allSatisfy({ isSchemeCharacter($0) }), colon > 0
      {
        return nil
      }
      result = Self.buildFilename(home, result)
    }
    return LexicalPath.goClean(result)
  }

  private func isSchemeCharacter(_ byte: UInt8) -> Bool {
    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
      || (byte >= 0x30 && byte <= 0x39)
      || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
  }

  /// Every `keyword` in `text` replaced, as Vala's `string.replace`.
  static func replacing(_ keyword: [UInt8], with value: [UInt8], in text: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var index = 0
    while index < text.count {
      if text.count - index >= keyword.count,
        text[index..<(index + keyword.count)].elementsEqual(keyword)
      {
        result += value
        index += keyword.count
      } else {
        result.append(text[index])
        index += 1
      }
    }
    return result
  }

  /// Why Déjà Dup's exclude-list cannot hold `path` as it is, or `nil`.
  static func unnameableReason(_ path: [UInt8]) -> String? {
    if !UTF8Scanner.isValid(path) {
      return "its name is not UTF-8, and GSettings holds only UTF-8 strings"
    }
    if replacing(Array("$USER".utf8), with: [], in: path) != path {
      return "Déjà Dup replaces $USER in every entry with the user's name"
    }
    for keyword in ["$HOME", "$TRASH"] + keywords.map(\.keyword)
    where path.starts(with: Array(keyword.utf8)) {
      return "Déjà Dup replaces a leading \(keyword)"
    }
    return nil
  }
}
