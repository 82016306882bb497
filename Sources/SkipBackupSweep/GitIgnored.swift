import SkipBackupCore
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// What git ignores in the work trees a sweep meets, asked of git itself
/// (`git ls-files --others --ignored --exclude-standard --directory -z`),
/// once per work tree, and kept by directory: for each directory, the names
/// in it that git ignores. Walk threads share it; a work tree is asked when
/// its top directory is entered, before any of its entries is visited.
package final class GitIgnored: Sendable {
  package let git: FilePath
  private let names = Locked<[[UInt8]: Set<[UInt8]>]>([:])
  private let any = Atomic<Bool>(false)
  /// The directories git was asked about and gave no answer for (exit
  /// 128 on an index.lock, a repository it distrusts): what it ignores
  /// below them is unknown, which is not "nothing".
  private let unanswered = Locked<[[UInt8]]>([])
  private let anyUnanswered = Atomic<Bool>(false)

  package init(git: FilePath) {
    self.git = git
  }

  /// What git is run with before `-C TOP ls-files`: the work tree is the
  /// user's, but its `.git` may come from anyone (an unpacked archive, a
  /// clone), and a repository's own configuration can name programs for
  /// git to run. `ls-files --others --ignored` reads the index, the
  /// directories and the ignore files, and no file's content, so of all
  /// the settings that run something (see git-config(1)) it can reach
  /// only these, each turned off here, where a command-line setting wins
  /// over every configuration file and every file those include:
  /// - `core.fsmonitor`, run to ask what changed (a repository set up
  ///   with `git config core.fsmonitor 'touch PWNED; echo'` ran it);
  /// - hooks (`core.hooksPath` into a directory that holds nothing);
  /// - a pager (`--no-pager`; git starts one only on a terminal anyway);
  /// - a transport: in a partial clone a missing ignore file in the index
  ///   is fetched, which runs `core.sshCommand`, `remote.*.uploadpack` or
  ///   an `ext::` command; `protocol.allow=never` here, and
  ///   `GIT_ALLOW_PROTOCOL` (which overrides every `protocol.*.allow` a
  ///   repository sets) in the environment, stop any transport starting.
  /// Filters (`filter.*`), `textconv` and diff drivers run only on a
  /// file's content, which `ls-files` never reads; their names are the
  /// repository's own and cannot be listed in advance.
  package static let options: [[UInt8]] = [
    "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
    "-c", "protocol.allow=never", "-c", "core.sshCommand=false",
  ].map { Array($0.utf8) }

  /// The environment git gets: the caller's `GIT_DIR`, `GIT_WORK_TREE`,
  /// `GIT_CONFIG_*`, `GIT_EXEC_PATH`, `GIT_SSH_COMMAND`... would each
  /// change what git reads or runs, so none is passed on. What is: `HOME`
  /// and `XDG_CONFIG_HOME`, because the user's own configuration is where
  /// `core.excludesFile` (by default `~/.config/git/ignore`) says what
  /// the user ignores everywhere, and the system's and the user's files
  /// are theirs, not a repository's; `PATH` without its relative entries
  /// (git runs in the work tree, where `.` would find the repository's
  /// programs); the locale, for git's messages.
  package static func environment() -> [[UInt8]] {
    var variables: [[UInt8]] = [
      "GIT_ALLOW_PROTOCOL=none", "GIT_NO_LAZY_FETCH=1", "GIT_TERMINAL_PROMPT=0",
      "GIT_OPTIONAL_LOCKS=0",
    ].map { Array($0.utf8) }
    for name in ["HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "LC_MESSAGES", "LC_CTYPE"] {
      guard let value = environmentValue(name) else { continue }
      variables.append(Array("\(name)=".utf8) + value)
    }
    let path = environmentValue("PATH") ?? Array("/usr/bin:/bin".utf8)
    let absolute = path.split(separator: UInt8(ascii: ":")).filter { $0.first == UInt8(ascii: "/") }
    variables.append(Array("PATH=".utf8) + Array(absolute.joined(separator: [UInt8(ascii: ":")])))
    return variables
  }

  /// Asks git about the work tree at `top` (a path as the walk has it, the
  /// work tree's top or a directory in it: git answers for what is below);
  /// returns what went wrong, for a message, or `nil`. When git gives no
  /// answer, what it ignores there is unknown, not nothing.
  package func scan(workTree top: [UInt8]) -> String? {
    let run = Result { () throws(SkipBackupError) in
      try runProgram(
        git,
        arguments: Self.options + [
          Array("-C".utf8), top, Array("ls-files".utf8), Array("-z".utf8), Array("--others".utf8),
          Array("--ignored".utf8), Array("--exclude-standard".utf8), Array("--directory".utf8),
        ], environment: Self.environment())
    }
    let result: ProgramResult
    switch run {
    case .success(let value): result = value
    case .failure(let error):
      noAnswer(top)
      return error.description
    }
    guard result.status == 0 else {
      noAnswer(top)
      let said = result.errorOutput.split(separator: UInt8(ascii: "\n")).first.map {
        String(escapingForDisplay: $0)
      }
      return "\(String(escapingForDisplay: top)): git ls-files could not say what git ignores here "
        + "(exit status \(result.status)\(said.map { ": " + $0 } ?? ""))"
    }
    var found: [[UInt8]: Set<[UInt8]>] = [:]
    for record in result.output.split(separator: 0) {
      var relative = Array(record)
      while relative.last == UInt8(ascii: "/") { relative.removeLast() }
      guard !relative.isEmpty else { continue }
      var directory = top
      let name: [UInt8]
      if let slash = relative.lastIndex(of: UInt8(ascii: "/")) {
        if directory.last != UInt8(ascii: "/") { directory.append(UInt8(ascii: "/")) }
        directory += relative[..<slash]
        name = Array(relative[(slash + 1)...])
      } else {
        name = relative
      }
      found[directory, default: []].insert(name)
    }
    guard !found.isEmpty else { return nil }
    names.withLock { names in
      for (directory, ignored) in found { names[directory, default: []].formUnion(ignored) }
    }
    any.store(true, ordering: .releasing)
    return nil
  }

  private func noAnswer(_ top: [UInt8]) {
    unanswered.withLock { $0.append(top) }
    anyUnanswered.store(true, ordering: .releasing)
  }

  /// Whether the directory at `path` is at or below one git gave no answer for.
  package func isUnanswered(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
    guard anyUnanswered.load(ordering: .acquiring) else { return false }
    return unanswered.withLock { tops in
      tops.contains { top in
        path.starts(with: top) && (path.count == top.count || path[top.count] == UInt8(ascii: "/"))
      }
    }
  }

  /// Whether the directory at the absolute path `path` lies inside a git
  /// work tree that starts above it: some directory above holds `.git`.
  /// Then a sweep of it asks git there (git answers for what is below the
  /// directory it runs in), or the records of what git ignores would be
  /// taken for marks git no longer wants.
  package static func isInsideWorkTree(_ path: [UInt8]) -> Bool {
    var parent = path
    while let slash = parent.lastIndex(of: UInt8(ascii: "/")) {
      parent.removeSubrange(slash...)
      let candidate = FilePath(
        platformString: (parent + Array("/.git".utf8)).map { CChar(bitPattern: $0) } + [0])
      if (try? FileItem(path: candidate, followSymbolicLinks: false).status()) != nil {
        return true
      }
    }
    return false
  }

  /// The names git ignores in the directory at `path`, or `nil` for none.
  package func ignored(in path: UnsafeBufferPointer<UInt8>) -> Set<[UInt8]>? {
    guard any.load(ordering: .acquiring) else { return nil }
    let key = Array(path)
    return names.withLock { $0[key] }
  }
}
