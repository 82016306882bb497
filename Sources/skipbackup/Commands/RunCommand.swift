import ArgumentParser
import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupView

struct RunCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Run COMMAND where each ROOT shows exactly what list --included lists.",
    discussion: """
      Walks each ROOT once, as list does, then runs COMMAND in a private mount namespace where \
      each ROOT, at its own path, is a read-only overlayfs that hides every excluded item: no \
      excluded item appears in a listing, in stat, or by opening it by name. Any backup tool \
      then leaves out what is marked, with no exclusion file: \
      skipbackup run ~ -- restic backup ~. Included items keep their type, mode, owner, times, \
      size, link target, link count and extended attributes. Everything outside the ROOTs is \
      as before. Nothing is mounted in the caller's namespace, and the view vanishes with \
      COMMAND, even when it is killed. Without --snapshot nothing is written to disk: the view's \
      top layer is a tmpfs in memory. With --snapshot the snapshots are written to each ROOT's \
      filesystem while COMMAND runs (see below).

      Without --snapshot the view is of the live tree. From before each ROOT is walked until \
      COMMAND starts, the ROOTs are watched (fanotify): a change the view would show wrongly \
      (a directory moved in, an item marked or unmarked, a marked file linked in) makes run \
      walk them again, at most three times, and once the view is mounted refuses the run; a \
      ROOT that cannot be watched is noted. The watch does not see a nodump flag changed, a \
      mark set through a hard link outside ROOT, or a change on NFS or FUSE, and what changes \
      once COMMAND runs shows through the view: --snapshot is the answer there. See \
      docs/backups.md, What the live view promises.

      With --snapshot (btrfs), each ROOT is first frozen: a read-only snapshot of the btrfs \
      subvolume that holds it (one for the ROOTs on one subvolume) is walked instead of the \
      live tree and shown at ROOT's own path, so COMMAND sees one instant of each ROOT, \
      without what was marked at that instant, and nothing that changes while it runs: a \
      consistent backup, marks or not. A btrfs subvolume nested below a ROOT is frozen too, in \
      a snapshot of its own (with -x it is the empty directory list -x lists), and a \
      read-only one is shown as it is; what another filesystem mounts below a ROOT is not \
      frozen, and shows as an empty directory, a mounted file as it is. Each snapshot is \
      deleted when COMMAND ends, and kept meanwhile in SUBVOLUME/.skipbackup-snapshots (a \
      nested subvolume's beside its ROOT's; .skipbackup-snapshots.UID where that one is \
      another user's), a directory marked excluded by every mechanism, which stays, empty, for \
      the next run; \
      one left by a run that was killed is deleted by the user's next run --snapshot on that \
      filesystem. Root may snapshot any subvolume; anyone else only their own, on a \
      filesystem mounted with user_subvol_rm_allowed. A ROOT that cannot be snapshotted (not \
      btrfs, a read-only filesystem, full) is an error, and COMMAND does not run.

      The skipbackup process becomes COMMAND (exec), which keeps the process, the environment, the working \
      directory, the standard streams and the signals; the exit status is COMMAND's, and a \
      shell reports a signal as 128+N. With --snapshot, COMMAND runs as its child instead, \
      with the same streams, environment and directory; skipbackup passes on the signals other \
      processes send it, dies with COMMAND's status or signal, and takes COMMAND along when it \
      is killed. When HOME is inside a ROOT, the XDG_CACHE_HOME, \
      XDG_CONFIG_HOME, XDG_STATE_HOME and XDG_DATA_HOME that fall inside it point at the real \
      directories, through /proc/self/fd/N of the real HOME, so that the tools keep their real \
      caches and keys while the backup reads the view. As root it works on any tree; anyone else runs in a user \
      namespace that maps them to themselves, where files of other owners show as the overflow \
      user (nobody); the kernel lets no such view cover a mount, so a ROOT with a filesystem \
      mounted below it is refused (with --snapshot it is not: a snapshot holds no mount). A \
      ROOT that is excluded, or below a marked directory, is an error. Without -x a filesystem \
      mounted below a ROOT gets a view of its own, its marks honoured; with -x it, and a btrfs \
      subvolume nested in the ROOT's, shows as the empty directory list -x lists. A file mounted on a file \
      shows as the mounted file, its marks honoured. Each view has its real mount's nosuid, \
      nodev, noexec and atime options, and each directory the real one's inode flags (chattr \
      d, A, i, a). With ROOT /, COMMAND's root directory is the view, and /proc, /sys, /dev, \
      /run and /tmp are the real ones, writable as they are: skipbackup run -x / -- restic \
      backup --one-file-system /. An item the overlay would hide or change (a character device \
      0/0, an attribute named trusted.overlay.*, or user.overlay.* for an ordinary user) is an \
      error that names it: skipbackup export's recipes back such a tree up. --sweep first runs \
      skipbackup sweep on each ROOT with the user's rules. \
      \(MechanismHelp.byDefault). See docs/backups.md.

      With --for deja-dup there is no ROOT: run is Deja Dup's custom-tool-wrapper \
      (gsettings set org.gnome.DejaDup custom-tool-wrapper 'skipbackup run --for deja-dup --', \
      or skipbackup-desktop apps on deja-dup-wrapper), and COMMAND is the tool Deja Dup runs \
      (duplicity, restic, borg). A backup (duplicity full, or its implied backup; restic \
      backup; borg create) sees the view at each folder Deja Dup saves (its include-list, \
      resolved as export --for deja-dup resolves it), and each --archive-dir=, --tempdir= \
      or --cache-dir= directory inside one is the real directory, through /proc/self/fd/N, \
      and each --include= inside the --archive-dir= one (Deja Dup's metadata, which it \
      restores to check the backup) shows as it is, even below a marked ~/.cache; \
      every other run of the tool (a status, a restore, a cleanup) runs as it is. Another \
      program is refused. See docs/desktop.md.

      Exit status: COMMAND's; 1 when the view could not be made exactly or the tree changed \
      while it was made (each failure says what and why, and COMMAND does not run), 126 when \
      COMMAND cannot be run, 127 when it is not found, 64 for a usage error.
      """)

  @OptionGroup var options: RunOptions

  @Argument(
    parsing: .captureForPassthrough,
    help: ArgumentHelp(
      "The directories the view filters, then --, then the command to run and its arguments.",
      valueName: "ROOT... -- COMMAND"),
    completion: .directory)
  var words: [String]

  /// The ROOTs and COMMAND: everything after the options, split at the
  /// first `--` that follows a ROOT (a `--` before the first ROOT only ends
  /// the options). No COMMAND at all (`nil`) when no `--` follows.
  private var split: (roots: [String], command: [String]?) {
    var words = self.words[...]
    if words.first == "--" { words = words.dropFirst() }
    guard let terminator = words.firstIndex(of: "--") else { return (Array(words), nil) }
    return (Array(words[..<terminator]), Array(words[(terminator + 1)...]))
  }

  /// With --for: COMMAND is every word after the options (a first -- only ends them).
  private var appCommand: [String] {
    words.first == "--" ? Array(words.dropFirst()) : words
  }

  func validate() throws {
    // The words are captured as they come, --help among them when it comes first.
    if let first = words.first, first == "--help" || first == "-h" {
      throw CleanExit.helpRequest(self)
    }
    if let app = options.app {
      if options.snapshot || options.oneFileSystem {
        throw ValidationError(
          "--for \(app.rawValue) takes no --snapshot or -x: the folders are the app's own.")
      }
      if appCommand.isEmpty {
        throw ValidationError("Give the COMMAND the app runs after --for \(app.rawValue) --.")
      }
      return
    }
    let (roots, command) = split
    // The words after the first ROOT are not parsed as options: an option
    // there would be taken for a ROOT. After a leading --, any name is a ROOT.
    if words.first != "--", let option = roots.first(where: { $0.hasPrefix("-") }) {
      // First of the words: no option of run's, which the parser would
      // have taken, so a misspelt one.
      if option == roots.first { throw ValidationError(Self.unknown(option)) }
      throw ValidationError(
        "\(option): options go before the ROOTs (a ROOT that starts with - goes after a first --).")
    }
    if roots.isEmpty { throw ValidationError("Give at least one ROOT, then --, then COMMAND.") }
    guard let command else {
      // `run -- tar ...`: the -- only ended the options, and the first
      // word of COMMAND was taken for a ROOT.
      let taken = words.first == "--" ? " (a -- before the first ROOT only ends the options)" : ""
      throw ValidationError(
        "Give at least one ROOT, then --, then COMMAND: no -- follows \(roots[0])\(taken).")
    }
    if command.isEmpty { throw ValidationError("Give the COMMAND to run after ROOT... --.") }
  }

  /// The parser's own words for an option it does not know, with the
  /// nearest of run's, as every other command says it: run's options
  /// parsed alone, where no word is taken for a ROOT.
  private static func unknown(_ option: String) -> String {
    do {
      _ = try RunOptions.parse([option])
    } catch {
      return RunOptions.message(for: error)
    }
    return "Unknown option '\(option)'."
  }

  func run() throws {
    if let app = try appEngine { try app.run() } else { try engine.run() }
  }

  /// With --for, the app's engine: no ROOTs, the folders are the app's.
  var appEngine: AppToolRun? {
    get throws {
      guard let app = options.app else { return nil }
      return AppToolRun(
        app: app, command: appCommand.map(RawArguments.bytes),
        mechanisms: try options.mechanismOptions.mechanisms(default: .all),
        sweepFirst: options.sweep)
    }
  }

  /// The engine's configuration, from the parsed command line.
  var engine: ViewRun {
    get throws {
      let (roots, command) = split
      return ViewRun(
        roots: roots.map(RawArguments.path), command: (command ?? []).map(RawArguments.bytes),
        mechanisms: try options.mechanismOptions.mechanisms(default: .all),
        oneFileSystem: options.oneFileSystem, sweepFirst: options.sweep,
        snapshot: options.snapshot, quiet: options.quiet.quiet)
    }
  }
}

/// run's options, apart from the words they come before, so that a
/// misspelt one can be parsed alone, for the parser's own message.
struct RunOptions: ParsableArguments {
  @OptionGroup var mechanismOptions: MechanismOptions

  @Flag(
    name: [.customShort("x"), .customLong("one-file-system")],
    help:
      "Leave filesystems mounted below each ROOT, and btrfs subvolumes nested in its own, out of the view: each shows as the empty directory list -x lists (without -x, each is a view of its own, its marks honoured)."
  )
  var oneFileSystem = false

  @Flag(help: "Run skipbackup sweep on each ROOT first, with the user's rules.")
  var sweep = false

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp(
      "Wrap the backup app's own runs of its tool, given as COMMAND with no ROOT: a backup "
        + "sees the view of each folder the app saves, its state kept real; any other run "
        + "runs as it is (Deja Dup's custom-tool-wrapper).",
      valueName: "app"))
  var app: WrappedApp?

  @Flag(
    help: ArgumentHelp(
      "Take a read-only btrfs snapshot of the subvolume that holds each ROOT, and show COMMAND "
        + "the snapshot, at ROOT's own path, without what was marked at that instant."))
  var snapshot = false

  @OptionGroup var quiet: QuietOption
}
