import Foundation
import Testing

// The backup tools whose behaviour `skipbackup explain` states, run as it
// says they are run: the check of every claim it makes, by the engine's
// tests and the tool's.

/// The paths a plain run of `tool` puts in the backup of `root`, relative
/// to it, with exactly the options `skipbackup explain` names for that
/// tool: borg2, borg1 (`--exclude-nodump --exclude-caches`), restic and
/// tar (`--exclude-caches`), rsync. Repositories and copies go in `work`.
public func backedUp(_ tool: String, root: String, work: String) throws -> Set<String> {
  let parent = (root as NSString).deletingLastPathComponent
  let environment = [
    "BORG_REPO": work + "/borg", "BORG_PASSPHRASE": "", "BORG_BASE_DIR": work + "/borg-base",
    "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
    "RESTIC_REPOSITORY": work + "/restic", "RESTIC_PASSWORD": "skipbackup",
    "RESTIC_CACHE_DIR": work + "/restic-cache", "BORG2": try borg2Path(), "WORK": work,
  ]
  let command: String
  switch tool {
  case "borg2":
    command = "$BORG2 repo-create -e none && $BORG2 create a root && $BORG2 list a --short"
  case "borg1":
    try #require(EmptyRepository.borg.copy(to: work + "/borg").status == 0)
    command = "borg create --exclude-nodump --exclude-caches ::a root && borg list --short ::a"
  case "restic":
    try #require(EmptyRepository.restic.copy(to: work + "/restic").status == 0)
    command = "restic backup -q --exclude-caches root >/dev/null && restic ls latest"
  case "tar":
    command = "tar --create --exclude-caches --file=- root | tar --list --file=-"
  case "rsync":
    command =
      "rsync -a root/ \"$WORK/copy/\" && cd \"$WORK/copy\" && find . | sed 's|^\\.|root|'"
  default:
    preconditionFailure(tool)
  }
  let result = run(
    ["sh", "-c", Argument(command)], directory: parent, environment: environment)
  try #require(result.status == 0, "\(tool): \(result)")
  var paths: Set<String> = []
  for line in result.lines where !line.hasPrefix("snapshot ") {
    var path = Substring(line)
    while path.hasPrefix("/") { path = path.dropFirst() }
    while path.hasSuffix("/") { path = path.dropLast() }
    guard path.hasPrefix("root/") else { continue }
    paths.insert(String(path.dropFirst("root/".count)))
  }
  try #require(paths.contains("unmarked-dir/in"), "\(tool): \(result)")
  return paths
}
