/// The backup tools `export` writes for, each with its syntax (a type of
/// its own, by the tool's reading of its file) and the command line that
/// uses the file.
package enum BackupTool: String, CaseIterable, Sendable {
  case rsync, tar, restic, borg

  /// What ends each rule in the tool's file.
  package var terminator: UInt8 {
    switch self {
    case .rsync: RsyncExclusions().terminator
    case .tar: TarExclusions().terminator
    case .restic: ResticExclusions().terminator
    case .borg: BorgExclusions().terminator
    }
  }

  /// The tree the tool reads when it is given `root` (the ROOT argument's
  /// bytes) in the documented command line.
  package func walkRoot(for root: [UInt8]) throws(ExportFailure) -> ExportRoot {
    switch self {
    case .rsync: try RsyncExclusions().walkRoot(for: root)
    case .tar: try TarExclusions().walkRoot(for: root)
    case .restic: try ResticExclusions().walkRoot(for: root)
    case .borg: try BorgExclusions().walkRoot(for: root)
    }
  }

  /// The rule that excludes the item at `relative` below `root` (its path
  /// from the walk's root, components joined by `/`, never empty), matching
  /// that item, and what is under it, and nothing else.
  package func rule(root: ExportRoot, relative: [UInt8]) -> Result<[UInt8], Inexpressible> {
    switch self {
    case .rsync: RsyncExclusions().rule(root: root, relative: relative)
    case .tar: TarExclusions().rule(root: root, relative: relative)
    case .restic: ResticExclusions().rule(root: root, relative: relative)
    case .borg: BorgExclusions().rule(root: root, relative: relative)
    }
  }

  /// The recommended recipe: the list or the export, then the tool that
  /// reads it. docs/backups.md shows the same lines, the tests run them on
  /// the tricky-name tree, and scripts/benchmark-backup times them. The list
  /// or exclusion file goes to a temporary file outside ROOT (with `ROOT=.`
  /// a file in the working directory would be backed up too).
  ///
  /// rsync's list leaves out ROOT itself: --files-from implies --dirs, and
  /// with --dirs rsync copies a listed `.` with everything one level below
  /// it, marked items too (measured with rsync 3.5.0).
  ///
  /// rsync and tar read an include list (`list --included`), whose cost does
  /// not grow with the number of marks: rsync matches every name against
  /// every exclusion rule in turn (exclude.c's check_filter walks the rule
  /// list), 39x the time of a repeat run on 200,000 files with 20,040 marks.
  /// tar's include list also names paths with newlines, which its
  /// --exclude-from cannot. restic and borg back up a listed directory with
  /// everything in it, so they keep the exclusion file; borg looks its `pf:`
  /// rules up in a dictionary. docs/performance.md has the measurements.
  package var recipe: String {
    switch self {
    case .rsync:
      """
      LIST=$(mktemp) &&
        (cd "$ROOT" && skipbackup list --included -0 . >"$LIST") &&
        sed -z -i '/^\\.$/d' "$LIST" &&
        rsync -a --from0 --files-from="$LIST" --no-implied-dirs "$ROOT/" "$DEST/"
      """
    case .tar:
      """
      LIST=$(mktemp) &&
        (cd "$ROOT" && skipbackup list --included -0 . >"$LIST") &&
        tar --create --file=backup.tar --null --no-recursion --verbatim-files-from \\
          -C "$ROOT" -T "$LIST"
      """
    case .restic:
      """
      ROOT=$(cd "$ROOT" && pwd) && EXCLUDE=$(mktemp) &&
        skipbackup export --for restic -o "$EXCLUDE" "$ROOT" &&
        restic backup --exclude-file="$EXCLUDE" "$ROOT"
      """
    case .borg:
      """
      EXCLUDE=$(mktemp) &&
        skipbackup export --for borg -o "$EXCLUDE" "$ROOT" &&
        borg create --exclude-from="$EXCLUDE" \\
          "::{hostname}-{now:%Y-%m-%dT%H:%M:%S.%f}" "$ROOT"
      """
    }
  }

  /// An rsync mirror that also drops what was marked or deleted since the
  /// last run: an include list copies without recursing, so rsync's
  /// --delete has no directory to clean; this one pays for its exclusion
  /// file with a cost that grows with the number of marks.
  package static let rsyncMirrorRecipe = """
    EXCLUDE=$(mktemp) &&
      skipbackup export --for rsync -o "$EXCLUDE" "$ROOT" &&
      rsync -a --delete --delete-excluded --from0 --exclude-from="$EXCLUDE" \\
        "$ROOT/" "$DEST/"
    """
}
