import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The part of the tree one walk thread met, numbered in its own arrays;
/// ``BrowseTree/init(root:parts:)`` joins the parts.
///
/// A parallel walk hands directories to other threads. A thread that meets
/// an entry whose parent it did not visit itself records the parent as a
/// *stub*: the hash of its path below ROOT. Each part also keeps its
/// directories by that hash, so that after the walk every stub is found
/// among the directories of all the parts. The hash is FNV-1a over the path
/// below ROOT with a slash after each name (64 bits: a collision among a
/// million directories has odds of about 1 in 10^7).
package struct TreePart {
  package var nodes = NodeColumns()
  package var rules: [Int32: [UInt8]] = [:]
  package var problems: [Int32: String] = [:]
  /// Directories by the hash of their path below ROOT.
  package var directories: [UInt64: Int32] = [:]
  package var stubs: [UInt64] = []
  /// Directories that could not be opened or read, by path, with why.
  package var failedPaths: [([UInt8], String)] = []
}

/// FNV-1a over `bytes` and a slash, from `hash`.
@inline(__always)
package func pathHash(_ hash: UInt64, adding bytes: some Sequence<UInt8>) -> UInt64 {
  var hash = hash
  for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
  return (hash ^ 0x2F) &* 0x100_0000_01b3
}

package let rootPathHash: UInt64 = 0xcbf2_9ce4_8422_2325

/// One walk thread's part of `browse`: the sized walk, recording every
/// item it meets in its ``TreePart``, with its own bytes (disk usage, a
/// later link of an inode 0) and marks. The sums are the tree's to work out
/// (``BrowseTree/computeSums()``), so no bytes pass up the walk's chain.
package final class TreeBuilder: ReportingVisitor, SizeClassifier {
  package let reporter: Reporter
  package let mechanisms: MechanismSet
  package private(set) var part = TreePart()
  /// Only this visitor's thread touches it, one visit at a time, and the
  /// classification it calls back never does.
  @exclusivity(unchecked) private var walk: SizedWalk
  /// Each directory on the walk's chain, deepest last: its number (or, on
  /// the way to one handed over by another thread, a stub) and the hash of
  /// its path below ROOT.
  @exclusivity(unchecked) private var chain: [(node: Int32, hash: UInt64)] = []

  package init(mechanisms: MechanismSet, rootLength: Int, links: SharedLinks, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.reporter = reporter
    walk = SizedWalk(rule: SizeRule(links: links))
    walk.reset(rootLength: rootLength)
  }

  /// Hands the part over, leaving this visitor empty.
  package func takePart() -> TreePart {
    defer { part = TreePart() }
    return part
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    return walk.visit(entry, self)
  }

  package func walkFailed(_ error: SkipBackupError) {
    // A directory that could not be opened or read: shown on its row.
    let path = error.path.bytes
    part.failedPaths.append((path, error.description))
  }

  // MARK: - The classification

  private static func flags(_ entry: borrowing TreeEntry) -> NodeFlags {
    var flags: NodeFlags = []
    if entry.type.isDirectory { flags.insert(.directory) }
    if entry.type == .symbolicLink { flags.insert(.symbolicLink) }
    return flags
  }

  private static func name(_ entry: borrowing TreeEntry) -> UnsafeRawBufferPointer {
    entry.depth == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : entry.name
  }

  package func unreadable(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> TreeVisit {
    if reporter.isVanished(error, at: entry) { return .vanished }
    let node = part.nodes.add(
      name: Self.name(entry), parent: chain.last?.node ?? -1, bytes: 0,
      flags: Self.flags(entry).union(.unreadable))
    part.problems[node] = entry.located(error).description
    return .skipChildren
  }

  package func classify(_ entry: borrowing TreeEntry, _ item: SizedItem) -> SizedEntry {
    var flags = Self.flags(entry)
    if item.isDirectory { flags.insert(.directory) } else { flags.remove(.directory) }

    // Every item's own marks, below a marked directory too: clearing that
    // directory in the browser shows what stays out without a new walk.
    var marks: MechanismSet = []
    var rule: [UInt8]?
    var problem: String?
    if entry.type.isRegularOrDirectory {
      var ownNames = false
      do throws(SkipBackupError) {
        marks = try mechanisms.marks(on: entry.item, holdsOwnNames: &ownNames)
        if !marks.isEmpty && ownNames,
          let record = try? SweepRecord.read(from: entry.item)
        {
          rule = record.rule
        }
      } catch {
        // Gone since the listing: looked up again at the end of the walk,
        // as every command does, and left out if it is gone for good.
        if reporter.isVanished(error, at: entry) { return SizedEntry(visit: .vanished) }
        flags.insert(.unreadable)
        problem = entry.located(error).description
      }
    }

    let parent = chain.last
    let node = part.nodes.add(
      name: Self.name(entry), parent: parent?.node ?? -1, bytes: item.claim().bytes, flags: flags)
    part.nodes.marks[Int(node)] = marks
    if let rule { part.rules[node] = rule }
    if let problem { part.problems[node] = problem }

    guard item.entersDirectory else { return SizedEntry(visit: .skipChildren) }
    // Only a directory is looked for by its path's hash (a stub's parent).
    let hash = parent.map { pathHash($0.hash, adding: entry.name) } ?? rootPathHash
    part.directories[hash] = node
    chain.append((node, hash))
    return SizedEntry(visit: .descend)
  }

  package func rebuilt(
    name: UnsafeBufferPointer<UInt8>, depth: Int, length: Int, markedAncestorLength: Int?
  ) -> Bool {
    // A directory another thread visited: its path below ROOT names it.
    let hash = chain.last.map { pathHash($0.hash, adding: name) } ?? rootPathHash
    let stub = Int32(-2 - part.stubs.count)
    part.stubs.append(hash)
    chain.append((stub, hash))
    return false
  }

  package func leave(_ frame: SizedFrame, path: UnsafeBufferPointer<UInt8>) {
    chain.removeLast()
  }
}

extension BrowseTree {
  /// Joins the parts of a walk into one tree, numbered part after part
  /// (ROOT is the first item of the first part), finds each stub's
  /// directory, and lists each directory's entries.
  package init(rootPath: [UInt8], parts: [TreePart]) {
    self.init(rootPath: rootPath)
    var parts = parts
    var bases: [Int32] = []
    var total = 0
    for part in parts {
      bases.append(Int32(total))
      total += part.nodes.count
    }
    var directories: [UInt64: Int32] = [:]
    for (index, part) in parts.enumerated() {
      for (hash, node) in part.directories { directories[hash] = node + bases[index] }
    }
    var failed: [([UInt8], String)] = []
    for index in parts.indices {
      let base = bases[index]
      // Taken out of the array, so that its memory goes as soon as it is copied.
      let part = parts[index]
      parts[index] = TreePart()
      let stubs = part.stubs.map { directories[$0] ?? -1 }
      nodes.append(part.nodes) { $0 >= 0 ? $0 + base : ($0 == -1 ? -1 : stubs[Int(-2 - $0)]) }
      for (node, rule) in part.rules { rules[node + base] = rule }
      for (node, problem) in part.problems { problems[node + base] = problem }
      failed += part.failedPaths
    }
    // Only ROOT has no parent; a stub that matched nothing (which a path
    // hash collision could cause) puts its entries under ROOT.
    if count > 1 {
      for index in 1..<count where nodes.parent[index] < 0 { nodes.parent[index] = 0 }
    }
    var counts = [Int32](repeating: 0, count: count + 1)
    for index in 1..<max(count, 1) { counts[Int(nodes.parent[index]) + 1] += 1 }
    for index in 0..<count { counts[index + 1] += counts[index] }
    childStart = counts
    children = [Int32](repeating: 0, count: max(count - 1, 0))
    var next = counts
    for index in 1..<max(count, 1) {
      let owner = Int(nodes.parent[index])
      children[Int(next[owner])] = Int32(index)
      next[owner] += 1
    }
    for (path, problem) in failed {
      guard let node = node(at: path) else { continue }
      nodes.flags[Int(node)].insert(.unreadable)
      problems[node] = problem
    }
  }
}
