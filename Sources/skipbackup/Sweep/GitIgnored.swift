import SkipBackupCore
import Synchronization
import SystemPackage

/// What git ignores in the work trees a sweep meets, asked of git itself
/// (`git ls-files --others --ignored --exclude-standard --directory -z`),
/// once per work tree, and kept by directory: for each directory, the names
/// in it that git ignores. Walk threads share it; a work tree is asked when
/// its top directory is entered, before any of its entries is visited.
final class GitIgnored: Sendable {
  let git: FilePath
  private let names = Mutex<[[UInt8]: Set<[UInt8]>]>([:])
  private let any = Atomic<Bool>(false)

  init(git: FilePath) {
    self.git = git
  }

  /// Asks git about the work tree at `top` (a path as the walk has it);
  /// returns what went wrong, for a message, or `nil`.
  func scan(workTree top: [UInt8]) -> String? {
    let run = Result { () throws(SkipBackupError) in
      try runProgram(
        git,
        arguments: [
          Array("-C".utf8), top, Array("ls-files".utf8), Array("-z".utf8), Array("--others".utf8),
          Array("--ignored".utf8), Array("--exclude-standard".utf8), Array("--directory".utf8),
        ])
    }
    let result: ProgramResult
    switch run {
    case .success(let value): result = value
    case .failure(let error): return error.description
    }
    guard result.status == 0 else {
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

  /// The names git ignores in the directory at `path`, or `nil` for none.
  func ignored(in path: UnsafeBufferPointer<UInt8>) -> Set<[UInt8]>? {
    guard any.load(ordering: .acquiring) else { return nil }
    let key = Array(path)
    return names.withLock { $0[key] }
  }
}
