import Foundation
import Testing
import TestSupport

/// `export --for deja-dup|vorta`: the desktop backup apps' own settings,
/// read and written by the apps' peers (gsettings with the keyfile backend,
/// Vorta's own peewee models), with hostile names and the user's entries.
@Suite(.serialized, .onTestThreads) struct BackupAppTests {
  /// A home of its own: every place GLib, Vorta and skipbackup's state look.
  struct Home {
    let directory: TemporaryDirectory
    var path: String { directory.path }

    init() throws {
      directory = try TemporaryDirectory(prefix: "skipbackup-home")
    }

    var environment: [String: String] {
      [
        "HOME": path, "XDG_CONFIG_HOME": path + "/.config", "XDG_DATA_HOME": path + "/.local/share",
        "XDG_STATE_HOME": path + "/.local/state", "GSETTINGS_BACKEND": "keyfile",
      ]
    }

    func tool(_ arguments: Argument...) -> ProcessResult {
      run([Argument(skipbackupPath)] + arguments, environment: environment)
    }

    func gsettings(_ arguments: Argument...) -> ProcessResult {
      run(["gsettings"] + arguments, environment: environment)
    }

    /// Déjà Dup's exclude-list as Python's GLib-free reading of gsettings'
    /// own output: the strings, by `ast.literal_eval`, which reads GVariant's
    /// quoting of these names the same way.
    func excludeList() throws -> [String] {
      let printed = try check(gsettings("get", "org.gnome.DejaDup", "exclude-list")).output
      let parsed = try check(
        run(
          [
            "/usr/bin/python3", "-c",
            Argument(
              "import ast,sys,json; t=sys.argv[1].strip(); t=t[3:] if t.startswith('@as') else t; "
                + "print(json.dumps(ast.literal_eval(t)))"), Argument(printed),
          ]))
      return try JSONDecoder().decode([String].self, from: Data(parsed.standardOutput))
    }

    var keyfile: String { path + "/.config/glib-2.0/settings/keyfile" }
  }

  private func modificationTime(_ path: String) -> Date? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
  }

  @Test func dejaDupExcludeListHoldsTheMarksBesideTheUsersEntries() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    for name in ["keep", "Videos/big.iso", "VMs/disk.img", "it's here", "a b/inner", "kept dir/x"] {
      home.directory.file(name)
    }
    let newline = home.directory.file("new\nline")
    // A tab, an accent and a zero-width space (a format character, which
    // GLib prints escaped).
    let unusual = home.directory.file("tab\there \u{E9}\u{200B}")
    let dollar = home.directory.file("$USER notes")
    let foreign = home.directory.file(named: [0x66, 0xFF])
    try check(
      home.tool(
        "mark", Argument(h + "/Videos/big.iso"), Argument(h + "/VMs"), Argument(h + "/it's here"),
        Argument(h + "/a b"), Argument(newline), Argument(unusual), Argument(dollar),
        Argument(bytes: foreign)))
    try check(
      home.gsettings(
        "set", "org.gnome.DejaDup", "exclude-list", "['$TRASH', '/srv/user entry', '$DOWNLOAD']"))

    // Without --apply: the list as gsettings set takes it, nothing written.
    let printed = home.tool("export", "--for", "deja-dup")
    #expect(printed.status == 1, "\(printed)")
    let refused = printed.errors.split(separator: "\n").map(String.init)
    #expect(refused.count == 2, "\(printed)")
    #expect(refused.contains { $0.contains("$USER notes") && $0.contains("$USER") }, "\(printed)")
    #expect(refused.contains { $0.contains("f\\xff") && $0.contains("UTF-8") }, "\(printed)")
    #expect(try home.excludeList() == ["$TRASH", "/srv/user entry", "$DOWNLOAD"])
    let ours = [
      h + "/VMs", h + "/Videos/big.iso", h + "/a b", h + "/it's here", h + "/new\nline", unusual,
    ]
    .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    // What was printed is what gsettings set takes.
    try check(
      home.gsettings(
        "set", "org.gnome.DejaDup", "exclude-list",
        Argument(String(printed.output.dropLast()))))
    #expect(try home.excludeList() == ["$TRASH", "/srv/user entry", "$DOWNLOAD"] + ours)
    try check(
      home.gsettings(
        "set", "org.gnome.DejaDup", "exclude-list", "['$TRASH', '/srv/user entry', '$DOWNLOAD']"))

    let applied = home.tool("export", "--for", "deja-dup", "--apply")
    #expect(applied.status == 1, "\(applied)")
    #expect(try home.excludeList() == ["$TRASH", "/srv/user entry", "$DOWNLOAD"] + ours)
    // What was printed is what gsettings prints, character for character.
    #expect(
      try check(home.gsettings("get", "org.gnome.DejaDup", "exclude-list")).output
        == printed.output)

    // A second run with no change writes nothing.
    let before = modificationTime(home.keyfile)
    Thread.sleep(forTimeInterval: 0.05)
    #expect(home.tool("export", "--for", "deja-dup", "--apply").status == 1)
    #expect(modificationTime(home.keyfile) == before)

    // The user adds an entry in Déjà Dup; ten mark/clear cycles keep it,
    // and the others, where they are.
    try check(
      home.gsettings(
        "set", "org.gnome.DejaDup", "exclude-list",
        Argument(
          "['$TRASH', '/srv/user entry', '$DOWNLOAD', "
            + ours.map {
              "'\($0.replacingOccurrences(of: "'", with: "\\'").replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t"))'"
            }
            .joined(separator: ", ") + ", '\(h)/keep']")))
    for cycle in 0..<10 {
      try check(home.tool("clear", Argument(h + "/VMs"), Argument(h + "/Videos/big.iso")))
      #expect(home.tool("export", "--for", "deja-dup", "--apply").status == 1)
      let cleared = try home.excludeList()
      #expect(
        cleared
          == [
            "$TRASH", "/srv/user entry", "$DOWNLOAD", h + "/a b", h + "/it's here",
            h + "/new\nline", unusual, h + "/keep",
          ], "cycle \(cycle)")
      try check(home.tool("mark", Argument(h + "/VMs"), Argument(h + "/Videos/big.iso")))
      #expect(home.tool("export", "--for", "deja-dup", "--apply").status == 1)
      let marked = try home.excludeList()
      #expect(
        marked
          == [
            "$TRASH", "/srv/user entry", "$DOWNLOAD", h + "/a b", h + "/it's here",
            h + "/new\nline", unusual, h + "/keep", h + "/VMs", h + "/Videos/big.iso",
          ], "cycle \(cycle)")
    }
  }

  /// The dconf backend, GSettings' default in a desktop session: each step
  /// in a D-Bus session of its own (`dbus-run-session`), the settings in
  /// dconf's database under the home, read back by `dconf` itself.
  @Test func dejaDupExcludeListThroughDconf() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    home.directory.file("Videos/big.iso")
    let runtime = home.directory.directory("run")
    chmod(runtime, 0o700)
    var environment = home.environment
    environment["GSETTINGS_BACKEND"] = "dconf"
    environment["XDG_RUNTIME_DIR"] = runtime
    func session(_ arguments: [Argument]) -> ProcessResult {
      run(["dbus-run-session", "--"] + arguments, environment: environment)
    }
    try check(home.tool("mark", Argument(h + "/Videos/big.iso")))
    try check(session(["gsettings", "set", "org.gnome.DejaDup", "exclude-list", "['$TRASH']"]))
    try check(session([Argument(skipbackupPath), "export", "--for", "deja-dup", "--apply"]))
    let read = try check(session(["dconf", "read", "/org/gnome/deja-dup/exclude-list"]))
    #expect(read.output == "['$TRASH', '\(h)/Videos/big.iso']\n", "\(read)")
  }

  /// Déjà Dup's next backup, as duplicity runs it: `deja-dup --backup`
  /// needs a session, a keyring and a configured location, so duplicity
  /// runs here with the include and exclude arguments Déjà Dup's
  /// DuplicityJob.process_include_excludes builds from the two lists (each
  /// exclude inside an include before that include, `[`, `?` and `*`
  /// bracketed, then `--exclude=**`), and the backup is restored to look at.
  @Test func duplicityRunAsDejaDupRunsItLeavesTheMarkedItemsOut() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    for name in [
      "keep", "Videos/big.iso", "VMs/disk.img", "it's [1]", "a b/inner", "new\nline", "mine/x",
    ] {
      home.directory.file(name)
    }
    try check(
      home.tool(
        "mark", Argument(h + "/Videos/big.iso"), Argument(h + "/VMs"), Argument(h + "/it's [1]"),
        Argument(h + "/a b"), Argument(h + "/new\nline")))
    try check(home.gsettings("set", "org.gnome.DejaDup", "include-list", "['$HOME']"))
    try check(
      home.gsettings(
        "set", "org.gnome.DejaDup", "exclude-list", Argument("['$TRASH', '\(h)/mine']")))
    try check(home.tool("export", "--for", "deja-dup", "--apply"))

    func resolved(_ entry: String) -> String {
      entry.hasPrefix("$HOME")
        ? h + entry.dropFirst(5)
        : entry.hasPrefix("$TRASH") ? h + "/.local/share/Trash" + entry.dropFirst(6) : entry
    }
    func escaped(_ path: String) -> String {
      path.replacingOccurrences(of: "[", with: "[[]").replacingOccurrences(of: "?", with: "[?]")
        .replacingOccurrences(of: "*", with: "[*]")
    }
    let excludes = try home.excludeList().map(resolved)
    #expect(excludes.count == 7, "\(excludes)")
    var arguments: [String] = []
    for exclude in excludes where exclude.hasPrefix(h + "/") {
      arguments.append("--exclude=" + escaped(exclude))
    }
    arguments.append("--include=" + escaped(h))
    for exclude in excludes where !exclude.hasPrefix(h + "/") {
      arguments.append("--exclude=" + escaped(exclude))
    }
    arguments += [
      "--exclude=**", "--exclude-if-present=CACHEDIR.TAG", "--exclude-if-present=.deja-dup-ignore",
    ]

    let place = try TemporaryDirectory(prefix: "skipbackup-duplicity")
    defer { withExtendedLifetime(place) {} }
    try check(
      run(
        (["duplicity", "full", "--no-encryption", "--archive-dir", "\(place.path)/cache"]
          + arguments + ["/", "file://\(place.path)/backup"]).map { Argument($0) },
        environment: home.environment))
    try check(
      run(
        [
          "duplicity", "restore", "--no-encryption", "--archive-dir",
          Argument(place.path + "/cache"),
          Argument("file://" + place.path + "/backup"), Argument(place.path + "/restored"),
        ], environment: home.environment))
    let restored = place.path + "/restored" + h
    #expect(FileManager.default.fileExists(atPath: restored + "/keep"))
    #expect(FileManager.default.fileExists(atPath: restored + "/Videos"))
    for gone in ["/Videos/big.iso", "/VMs", "/it's [1]", "/a b", "/new\nline", "/mine"] {
      #expect(!FileManager.default.fileExists(atPath: restored + gone), "\(gone)")
    }
  }

  @Test func dejaDupIncludeListNamesAreResolvedAsDejaDupResolvesThem() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    home.directory.file("Stuff/skip me")
    home.directory.file("Elsewhere/skip me too")
    home.directory.file("Outside/not saved")
    home.directory.file(".config/user-dirs.dirs", "XDG_DOCUMENTS_DIR=\"$HOME/Stuff\"\n")
    try check(
      home.tool(
        "mark", Argument(h + "/Stuff/skip me"), Argument(h + "/Elsewhere/skip me too"),
        Argument(h + "/Outside/not saved")))
    try check(
      home.gsettings("set", "org.gnome.DejaDup", "include-list", "['$DOCUMENTS', 'Elsewhere']"))
    try check(home.gsettings("set", "org.gnome.DejaDup", "exclude-list", "@as []"))
    try check(home.tool("export", "--for", "deja-dup", "--apply"))
    #expect(try home.excludeList() == [h + "/Elsewhere/skip me too", h + "/Stuff/skip me"])
    // ROOT given: only what is under it.
    try check(home.tool("export", "--for", "deja-dup", "--apply", Argument(h + "/Outside")))
    #expect(try home.excludeList() == [h + "/Outside/not saved"])
  }

  /// Vorta's own models make the database and read it back; `borg create`
  /// then runs with the arguments Vorta 0.8's borg/create.py builds.
  @Test func vortaProfilesGetABlockOfTheirOwnAndBorgLeavesTheItemsOut() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    for name in [
      "data/keep", "data/VM/disk.img", "data/big.iso", "data/it's", "data/new\nline", "other/x",
    ] {
      home.directory.file(name)
    }
    let foreign = home.directory.file(named: [0x66, 0xFF], in: "data")
    try check(
      home.tool(
        "mark", Argument(h + "/data/VM"), Argument(h + "/data/big.iso"), Argument(h + "/data/it's"),
        Argument(h + "/data/new\nline"), Argument(bytes: foreign), Argument(h + "/other/x")))
    let vorta = """
      import os, sys
      from peewee import SqliteDatabase
      from vorta.store.connection import init_db
      os.makedirs(os.path.join(os.environ['XDG_DATA_HOME'], 'Vorta'), exist_ok=True)
      db = SqliteDatabase(os.path.join(os.environ['XDG_DATA_HOME'], 'Vorta', 'settings.db'),
                          pragmas={'journal_mode': 'wal'})
      init_db(db)
      from vorta.store.models import BackupProfileModel, SourceFileModel
      """ + "\n"
    try check(
      run(
        [
          "/usr/bin/python3", "-c",
          Argument(
            vorta + """
              a = BackupProfileModel.create(name='Default', exclude_patterns='*.tmp\\n~/cache')
              SourceFileModel.create(dir=os.environ['HOME'] + '/data', profile=a)
              b = BackupProfileModel.create(name='Other')
              SourceFileModel.create(dir=os.environ['HOME'] + '/other', profile=b)
              """),
        ], environment: home.environment))
    func patterns(_ name: String) throws -> String? {
      let result = try check(
        run(
          [
            "/usr/bin/python3", "-c",
            Argument(
              vorta
                + "import json; print(json.dumps(BackupProfileModel.get(BackupProfileModel.name == sys.argv[1]).exclude_patterns))"
            ), Argument(name),
          ], environment: home.environment))
      return try JSONDecoder().decode(String?.self, from: Data(result.standardOutput))
    }

    try check(home.tool("export", "--for", "vorta", "--apply", "--profile", "Other"))
    #expect(try patterns("Default") == "*.tmp\n~/cache")
    let other = try #require(try patterns("Other"))
    #expect(other.hasPrefix("# skipbackup: begin"), "\(other)")
    #expect(other.contains("pf:\(h.dropFirst())/other/x"), "\(other)")

    try check(home.tool("export", "--for", "vorta", "--apply"))
    let first = try #require(try patterns("Default"))
    #expect(first.hasPrefix("*.tmp\n~/cache\n# skipbackup: begin"), "\(first)")
    // Again, with no change: the same text.
    try check(home.tool("export", "--for", "vorta", "--apply"))
    #expect(try patterns("Default") == first)

    // borg create as Vorta runs it: the patterns through its split, strip
    // and expanduser into --exclude-from, the source folders last.
    let place = try TemporaryDirectory(prefix: "skipbackup-borg")
    defer { withExtendedLifetime(place) {} }
    let borgEnvironment = home.environment.merging([
      "BORG_REPO": place.path + "/repo", "BORG_PASSPHRASE": "",
      "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
      "BORG_BASE_DIR": place.path + "/base",
    ]) { $1 }
    try check(run(["borg", "init", "-e", "none"], environment: borgEnvironment))
    try check(
      run(
        [
          "/usr/bin/python3", "-c",
          Argument(
            vorta + """
              import subprocess, tempfile
              profile = BackupProfileModel.get(BackupProfileModel.name == 'Default')
              cmd = ['borg', 'create', '--list', '--info', '--filter=AM', '-C', profile.compression]
              exclude_dirs = []
              for p in profile.exclude_patterns.split('\\n'):
                  if p.strip():
                      exclude_dirs.append(os.path.expanduser(p.strip()))
              pattern_file = tempfile.NamedTemporaryFile('w', delete=True)
              pattern_file.write('\\n'.join(exclude_dirs))
              pattern_file.flush()
              cmd.extend(['--exclude-from', pattern_file.name])
              cmd.append('::vorta')
              for f in SourceFileModel.select().where(SourceFileModel.profile == profile.id):
                  cmd.append(f.dir)
              sys.exit(subprocess.run(cmd).returncode)
              """),
        ], environment: borgEnvironment))
    let listed = try check(
      run(["borg", "list", "--format", "{path}{NUL}", "::vorta"], environment: borgEnvironment))
    let stored = Set(listed.nulSeparated)
    let root = Array(h.utf8.dropFirst()) + Array("/data".utf8)
    #expect(stored.contains(root + Array("/keep".utf8)), "\(listed)")
    for gone in ["/VM", "/VM/disk.img", "/big.iso", "/it's", "/new\nline"] {
      #expect(!stored.contains(root + Array(gone.utf8)), "\(gone)")
    }
    #expect(!stored.contains(Array(h.utf8.dropFirst()) + Array(foreign.dropFirst(h.utf8.count))))

    // Cleared: the block goes, the user's patterns stay as they were.
    try check(
      home.tool(
        "clear", Argument(h + "/data/VM"), Argument(h + "/data/big.iso"),
        Argument(h + "/data/it's"),
        Argument(h + "/data/new\nline"), Argument(bytes: foreign)))
    try check(home.tool("export", "--for", "vorta", "--apply", "--profile", "Default"))
    #expect(try patterns("Default") == "*.tmp\n~/cache")
  }

  @Test func vortaWaitsForAWriterThatHoldsTheDatabase() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    home.directory.file("data/skip")
    try check(home.tool("mark", Argument(h + "/data/skip")))
    let database = h + "/.local/share/Vorta/settings.db"
    home.directory.directory(".local/share/Vorta")
    try check(
      run(
        [
          "sqlite3", Argument(database),
          Argument(
            "CREATE TABLE backupprofilemodel (id INTEGER PRIMARY KEY, name TEXT, exclude_patterns TEXT);"
              + "CREATE TABLE sourcedirmodel (id INTEGER PRIMARY KEY, dir TEXT, profile_id INTEGER);"
              + "INSERT INTO backupprofilemodel VALUES (1, 'Default', 'mine');"
              + "INSERT INTO sourcedirmodel VALUES (1, '\(h)/data', 1);"),
        ]))
    // A writer holds the database for a second, then changes the user's
    // pattern: skipbackup's write comes after it and keeps its change.
    let holder = BackgroundThread {
      _ = run(
        [
          "/usr/bin/python3", "-c",
          Argument(
            "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); "
              + "c.execute('BEGIN IMMEDIATE'); time.sleep(1); "
              + "c.execute(\"UPDATE backupprofilemodel SET exclude_patterns='mine, changed'\"); "
              + "c.execute('COMMIT')"), Argument(database),
        ])
    }
    Thread.sleep(forTimeInterval: 0.3)
    try check(home.tool("export", "--for", "vorta", "--apply"))
    holder.wait()
    let patterns = try check(
      run(["sqlite3", Argument(database), "SELECT exclude_patterns FROM backupprofilemodel"]))
    #expect(patterns.output.hasPrefix("mine, changed\n# skipbackup: begin"), "\(patterns)")
    #expect(patterns.output.contains("pf:\(h.dropFirst())/data/skip\n"), "\(patterns)")
  }

  /// docs/backups.md's borgmatic recipe, run by borgmatic 1.7: the archive
  /// holds what `list --included` lists, and nothing of `list --excluded`.
  @Test func borgmaticRecipeLeavesOutExactlyTheExcludedItems() throws {
    let home = try Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    for name in [
      "me/keep", "me/VM/disk.img", "me/big.iso", "me/it's", "me/a b", "me/new\nline", "me/kept/x",
    ] {
      home.directory.file(name)
    }
    let foreign = home.directory.file(named: [0x66, 0xFF], in: "me")
    try check(
      home.tool(
        "mark", Argument(h + "/me/VM"), Argument(h + "/me/big.iso"), Argument(h + "/me/it's"),
        Argument(h + "/me/a b"), Argument(h + "/me/new\nline"), Argument(bytes: foreign)))
    let exclude = h + "/.local/state/skipbackup/borgmatic-home.exclude"
    home.directory.directory(".local/state/skipbackup")
    let config = home.directory.file(
      "config.yaml",
      """
      location:
          source_directories:
              - \(h)/me
          repositories:
              - \(h)/repo
          exclude_from:
              - \(exclude)
      hooks:
          before_backup:
              - \(skipbackupPath) export --for borg -q -o \(exclude) \(h)/me

      """)
    let environment = home.environment.merging([
      "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes", "BORG_BASE_DIR": h + "/borg-base",
    ]) { $1 }
    try check(
      run(
        ["borgmatic", "--config", Argument(config), "init", "--encryption", "none"],
        environment: environment))
    try check(run(["borgmatic", "--config", Argument(config), "create"], environment: environment))
    let archives = try check(
      run(
        ["borg", "list", "--format", "{archive}{NL}", Argument(h + "/repo")],
        environment: environment))
    let archive = try #require(archives.lines.first)
    let listed = try check(
      run(
        ["borg", "list", "--format", "{path}{NUL}", Argument(h + "/repo::" + archive)],
        environment: environment))
    let stored = Set(listed.nulSeparated)
    let included = try check(skipbackup("list", "--included", "-0", Argument(h + "/me")))
    #expect(stored == Set(included.nulSeparated.map { Array($0.dropFirst()) }), "\(listed)")
    let excluded = try check(skipbackup("list", "--excluded", "-0", Argument(h + "/me")))
    #expect(excluded.nulSeparated.count == 6)
    #expect(stored.isDisjoint(with: excluded.nulSeparated.map { Array($0.dropFirst()) }))
  }

  @Test func usageErrors() throws {
    #expect(skipbackup("export", "--for", "rsync", "--apply", ".").status == 64)
    #expect(skipbackup("export", "--for", "deja-dup", "--profile", "x").status == 64)
    #expect(skipbackup("export", "--for", "vorta", "-o", "f").status == 64)
    #expect(skipbackup("export", "--for", "borg").status == 64)
  }
}
