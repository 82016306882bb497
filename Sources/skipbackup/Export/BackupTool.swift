import ArgumentParser

/// The backup tools `export` writes for, each with its syntax and the
/// command line that uses the file.
enum BackupTool: String, ExpressibleByArgument, CaseIterable {
  case rsync, tar, restic, borg

  var syntax: any ExclusionSyntax {
    switch self {
    case .rsync: RsyncExclusions()
    case .tar: TarExclusions()
    case .restic: ResticExclusions()
    case .borg: BorgExclusions()
    }
  }

  /// The recipe: the export, then the tool's command that reads the file.
  /// docs/backups.md shows the same lines, and the tests run them.
  var recipe: String {
    switch self {
    case .rsync:
      """
      skipbackup export --for rsync -o exclude.rsync "$ROOT" &&
        rsync -a --from0 --exclude-from=exclude.rsync "$ROOT/" "$DEST/"
      """
    case .tar:
      """
      skipbackup export --for tar -o exclude.tar "$ROOT" &&
        tar --create --file=backup.tar --anchored --wildcards \\
          --exclude-from=exclude.tar -C "$ROOT" .
      """
    case .restic:
      """
      skipbackup export --for restic -o exclude.restic "$ROOT" &&
        restic backup --exclude-file=exclude.restic "$ROOT"
      """
    case .borg:
      """
      skipbackup export --for borg -o exclude.borg "$ROOT" &&
        borg create --exclude-from=exclude.borg ::{now} "$ROOT"
      """
    }
  }
}
