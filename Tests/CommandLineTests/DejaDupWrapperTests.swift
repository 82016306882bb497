import Foundation
import Testing
import TestSupport

/// `run --for deja-dup` as Déjà Dup's `custom-tool-wrapper`: the real
/// `deja-dup --backup` (44), headless (Xvfb, a D-Bus session, the keyfile
/// backend), backs up its include-list through the view, and the backup is
/// restored by duplicity to look at.
@Suite(.serialized, .onTestThreads) struct DejaDupWrapperTests {
  @Test func dejaDupsOwnBackupThroughTheWrapperLeavesTheMarkedItemsOut() throws {
    let home = try BackupAppTests.Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    let place = try TemporaryDirectory(prefix: "skipbackup-dejadup")
    defer { withExtendedLifetime(place) {} }
    let runtime = place.directory("run")
    chmod(runtime, 0o700)
    var environment = home.environment
    // The document portal's FUSE mount goes to $XDG_RUNTIME_DIR/doc, as in
    // a desktop session, not into the home (~/.cache/doc without one),
    // where the view would refuse a FUSE mount below a ROOT.
    environment["XDG_RUNTIME_DIR"] = runtime
    environment["XDG_CACHE_HOME"] = h + "/.cache"

    home.directory.file("keep/kept")
    home.directory.file("VMs/disk.img")
    home.directory.file("big.iso")
    let unmarkedHostile = home.directory.file("kept 'quote' $USER\nline")
    let newline = home.directory.file("new\nline")
    let dollar = home.directory.file("$USER notes")
    let spaced = home.directory.file("a 'b' c")
    let foreign = home.directory.file(named: [0x66, 0xFF])
    // ~/.cache marked, as the sweep's xdg-cache rule marks it: Déjà Dup's
    // archive directory and its metadata, which it backs up and restores
    // after the backup to check it, are below it.
    home.directory.directory(".cache")
    try check(
      home.tool(
        "mark", Argument(h + "/.cache"), Argument(h + "/VMs"), Argument(h + "/big.iso"),
        Argument(newline),
        Argument(dollar), Argument(spaced), Argument(bytes: foreign)))

    let destination = place.path + "/backup"
    for (schema, key, value) in [
      ("org.gnome.DejaDup", "backend", "'local'"),
      ("org.gnome.DejaDup.Local", "folder", "'\(destination)'"),
      ("org.gnome.DejaDup", "include-list", "['$HOME']"),
      ("org.gnome.DejaDup", "exclude-list", "@as []"),
      // Not the first run: no welcome assistant.
      ("org.gnome.DejaDup", "last-run", "'2026-01-01T00:00:00Z'"),
      ("org.gnome.DejaDup", "custom-tool-wrapper", "'\(skipbackupPath) run --for deja-dup --'"),
    ] {
      try check(
        run(
          ["gsettings", "set", Argument(schema), Argument(key), Argument(value)],
          environment: environment))
    }
    // An unencrypted backup of source / there already, so that Déjà Dup
    // does not ask for a password (its first backup does, in a dialog).
    let empty = place.directory("empty")
    try check(
      run(
        [
          "duplicity", "full", "--no-encryption", Argument("--archive-dir=\(place.path)/seed"),
          Argument("--include=\(empty)"), "--exclude=**", "/", Argument("file://\(destination)"),
        ], environment: environment))

    // A failed backup or check waits in a dialog: the timeout ends it.
    let backup = run(
      ["timeout", "150", "xvfb-run", "-a", "dbus-run-session", "--", "deja-dup", "--backup"],
      environment: environment)
    #expect(backup.status == 0, "\(backup)")

    // The archive directory under ~/.cache/deja-dup is the real one, written.
    let archive = h + "/.cache/deja-dup"
    let written = try FileManager.default.subpathsOfDirectory(atPath: archive)
    #expect(
      written.contains { $0.contains("duplicity-inc.") && $0.hasSuffix(".manifest") }, "\(written)")

    let restored = place.path + "/restored"
    try check(
      run(
        [
          "duplicity", "restore", "--no-encryption", Argument("--archive-dir=\(place.path)/cache"),
          Argument("file://\(destination)"), Argument(restored),
        ], environment: environment))
    let inside = restored + h
    #expect(FileManager.default.fileExists(atPath: inside + "/keep/kept"))
    #expect(FileManager.default.fileExists(atPath: inside + "/.cache/deja-dup/metadata/README"))
    #expect(FileManager.default.fileExists(atPath: restored + unmarkedHostile))
    for gone in [h + "/VMs", h + "/big.iso", newline, dollar, spaced] {
      #expect(!FileManager.default.fileExists(atPath: restored + gone), "\(gone)")
    }
    // The name that is not UTF-8, looked for as bytes.
    let listed = try check(
      run([
        "/usr/bin/python3", "-c",
        "import os,sys; n=os.listdir(sys.argv[1].encode()); print(b'f\\xff' in n, b'keep' in n)",
        Argument(inside),
      ]))
    #expect(listed.output == "False True\n", "\(listed)")
  }

  /// Déjà Dup's other runs of the tool (a status, a restore) run as they
  /// are, not through the view; a program Déjà Dup does not run is refused.
  @Test func onlyABackupGoesThroughTheView() throws {
    let home = try BackupAppTests.Home()
    defer { withExtendedLifetime(home) {} }
    let h = home.path
    home.directory.file("data/marked")
    try check(home.tool("mark", Argument(h + "/data/marked")))
    try check(home.gsettings("set", "org.gnome.DejaDup", "include-list", "['$HOME']"))
    let bin = home.directory.directory("bin")
    // A duplicity that lists what it sees and the archive directory it got.
    let fake = home.directory.file(
      "bin/duplicity",
      "#!/bin/sh\nls \"$HOME/data\"\nfor a; do case \"$a\" in --archive-dir=*) echo \"$a\"; touch \"${a#--archive-dir=}/written\";; esac; done\n"
    )
    chmod(fake, 0o755)
    home.directory.directory(".cache/deja-dup")
    var environment = home.environment
    environment["PATH"] =
      bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    func wrapped(_ arguments: String...) -> ProcessResult {
      run(
        [Argument(skipbackupPath), "run", "--for", "deja-dup", "--", "duplicity"]
          + arguments.map { Argument($0) }, environment: environment)
    }
    let archive = "--archive-dir=\(h)/.cache/deja-dup"
    // The implied backup (no action word), as Déjà Dup's incremental runs
    // it: the archive directory, in the view of $HOME, is the real one.
    let backup = try check(wrapped("--include=\(h)/data", "/", "file:///nowhere", archive))
    #expect(!backup.output.contains("marked"), "\(backup)")
    #expect(backup.output.contains("--archive-dir=/proc/self/fd/"), "\(backup)")
    #expect(FileManager.default.fileExists(atPath: h + "/.cache/deja-dup/written"))
    let full = try check(wrapped("full", "--dry-run", "/", "file:///nowhere", archive))
    #expect(!full.output.contains("marked"), "\(full)")
    for action in ["collection-status", "restore", "remove-older-than"] {
      let other = try check(wrapped(action, "file:///nowhere", archive))
      #expect(other.output.contains("marked"), "\(action): \(other)")
      #expect(other.output.contains(archive), "\(action): \(other)")
    }
    let unknown = run(
      [Argument(skipbackupPath), "run", "--for", "deja-dup", "--", "rsync", "-a", "/", "/x"],
      environment: environment)
    #expect(unknown.status == 1, "\(unknown)")
    #expect(unknown.errors.contains("rsync: not a backup tool Déjà Dup runs"), "\(unknown)")
  }
}
