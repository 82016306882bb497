import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// An empty repository of a backup program, made by the program itself once
/// a test process and copied for each test that wants one.
///
/// `restic init` costs 1.6 s of CPU here (it calibrates its key derivation
/// anew each time) and `borg init -e none` 0.5 s; `cp -a` of the one made
/// first costs a few milliseconds and is the same empty repository. Copies
/// share the repository's ID, which restic and borg key their caches and
/// borg its security records by: each test gives its own cache and base
/// directories (`RESTIC_CACHE_DIR`, `BORG_BASE_DIR`), as BackupPlace does.
public enum EmptyRepository: Sendable {
  /// restic's, with the password `skipbackup`.
  case restic
  /// borg 1.2's, unencrypted (`-e none`).
  case borg

  /// Copies the repository to `path`, which must not exist; root-owned.
  public func copy(to path: String) -> ProcessResult {
    run(["cp", "-a", Argument(template), Argument(path)])
  }

  private var template: String {
    switch self {
    case .restic: resticTemplate
    case .borg: borgTemplate
    }
  }
}

private let resticTemplate: String = made(
  ["restic", "init", "-q"],
  environment: { place in
    [
      "RESTIC_REPOSITORY": place + "/repository", "RESTIC_PASSWORD": "skipbackup",
      "RESTIC_CACHE_DIR": place + "/cache",
    ]
  })

private let borgTemplate: String = made(
  ["borg", "init", "-e", "none"],
  environment: { place in
    [
      "BORG_REPO": place + "/repository", "BORG_PASSPHRASE": "",
      "BORG_BASE_DIR": place + "/base",
    ]
  })

/// Runs `command` to make `PLACE/repository`, and returns its path.
private func made(_ command: [Argument], environment: (String) -> [String: String]) -> String {
  let place = try! TemporaryDirectory(prefix: "skipbackup-repository")
  keepUntilExit(place)
  let result = run(command, environment: environment(place.path))
  precondition(result.status == 0, "cannot make the template repository: \(result)")
  return place.path + "/repository"
}
