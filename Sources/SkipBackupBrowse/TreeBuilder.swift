import SkipBackupCore
import SkipBackupReport
import SkipBackupSweep
import SkipBackupUsage

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

/// One walk thread's visitor for `browse`: records every item it meets,
/// with its own bytes and marks, in its ``TreePart``.
package final class TreeBuilder: ReportingVisitor {
  package let reporter: Reporter
  package let mechanisms: MechanismSet
  private let links: SharedLinks
  /// Where the first name below ROOT starts in a path of the walk.
  private let componentStart: Int
  package private(set) var part = TreePart()

  /// The directories on the way down to the current entry: depth, length
  /// of their path, number (or stub) and path hash.
  private var frames: [(depth: Int, length: Int, node: Int32, hash: UInt64)] = []
  /// The path of the deepest frame.
  private var chainPath: [UInt8] = []

  package init(mechanisms: MechanismSet, rootLength: Int, links: SharedLinks, reporter: Reporter) {
    self.mechanisms = mechanisms
    self.links = links
    self.reporter = reporter
    self.componentStart = rootLength == 1 ? 1 : rootLength + 1
  }

  /// Hands the part over, leaving this visitor empty.
  package func takePart() -> TreePart {
    defer { part = TreePart() }
    return part
  }

  package func walkFailed(_ error: SkipBackupError) {
    // A directory that could not be opened or read: shown on its row.
    let path = error.path.bytes
    part.failedPaths.append((path, error.description))
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    // du -x leaves a mount point out altogether, and so does browse -x.
    if entry.isOnOtherFilesystem { return .skipChildren }
    var parentNode: Int32 = -1
    var parentHash = rootPathHash
    if entry.depth > 0 { (parentNode, parentHash) = parentInChain(entry) }
    let name = entry.depth == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : entry.name
    var flags: NodeFlags = []
    if entry.type.isDirectory { flags.insert(.directory) }
    if entry.type == .symbolicLink { flags.insert(.symbolicLink) }

    let status: stat
    do throws(SkipBackupError) {
      status = try entry.item.status()
    } catch {
      if reporter.isVanished(error, at: entry) { return .vanished }
      let node = part.nodes.add(
        name: name, parent: parentNode, bytes: 0, flags: flags.union(.unreadable))
      part.problems[node] = entry.located(error).description
      return .skipChildren
    }
    let isDirectory = status.st_mode & S_IFMT == S_IFDIR
    if isDirectory { flags.insert(.directory) } else { flags.remove(.directory) }

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
        if reporter.isVanished(error, at: entry) { return .vanished }
        flags.insert(.unreadable)
        problem = entry.located(error).description
      }
    }

    var size = Int64(status.st_blocks) * 512
    // A hard-linked inode counts once, where it is met first, as du counts it.
    if !isDirectory && status.st_nlink > 1
      && !links.firstVisit(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    {
      size = 0
    }
    let node = part.nodes.add(name: name, parent: parentNode, bytes: size, flags: flags)
    part.nodes.marks[Int(node)] = marks
    if let rule { part.rules[node] = rule }
    if let problem { part.problems[node] = problem }

    guard isDirectory && entry.type.isDirectory else { return .skipChildren }
    // Only a directory is looked for by its path's hash (a stub's parent).
    let hash =
      entry.depth == 0
      ? rootPathHash : pathHash(parentHash, adding: UnsafeRawBufferPointer(entry.name))
    part.directories[hash] = node
    let length = entry.pathBytes.count
    chainPath.removeAll(keepingCapacity: true)
    chainPath.append(contentsOf: entry.pathBytes)
    frames.append((entry.depth, length, node, hash))
    return .descend
  }

  /// The entry's parent (its number, or a stub) and the hash of its path:
  /// the top frame when the walk goes on where it was, or a new stub when
  /// the entry comes from a directory another thread visited.
  private func parentInChain(_ entry: borrowing TreeEntry) -> (Int32, UInt64) {
    while let top = frames.last, top.depth >= entry.depth { frames.removeLast() }
    let path = entry.pathBytes
    var parentLength = path.count - entry.nameLength - 1
    if parentLength == 0 { parentLength = 1 }  // the root `/`
    if let top = frames.last, top.depth == entry.depth - 1, top.length == parentLength,
      chainPath.withUnsafeBufferPointer({
        bytesEqual($0.baseAddress!, path.baseAddress!, count: parentLength)
      })
    {
      return (top.node, top.hash)
    }
    // A directory handed over: its path below ROOT names it.
    frames.removeAll(keepingCapacity: true)
    chainPath.removeAll(keepingCapacity: true)
    chainPath.append(contentsOf: UnsafeBufferPointer(rebasing: path[..<parentLength]))
    var hash = rootPathHash
    if parentLength > componentStart {
      for component in chainPath[componentStart...].split(separator: 0x2F) {
        hash = pathHash(hash, adding: component)
      }
    }
    let stub = Int32(-2 - part.stubs.count)
    part.stubs.append(hash)
    frames.append((entry.depth - 1, parentLength, stub, hash))
    return (stub, hash)
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
