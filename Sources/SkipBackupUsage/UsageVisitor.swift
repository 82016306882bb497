import SkipBackupCore
import SystemPackage
import SkipBackupReport
import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One walk thread's part of `du`: its counts, and the sizes of the
/// directories on its way down, for the top lists.
///
/// Bytes are summed bottom-up on a chain of frames, one per directory on the
/// current path: an entry adds to its parent's frame, a frame adds to its
/// parent's when the walk leaves it. A parallel walk hands directories to
/// other threads, so a directory's bytes may be spread over several threads:
/// a thread that starts on a handed-over directory rebuilds the chain above
/// it from the path (frames it does not own), and a thread that sees a
/// directory without meeting any of its entries (empty, or handed over)
/// flags every directory above as split. Split directories are summed
/// across threads at the end by path; the others go straight into the top
/// lists, so memory stays flat.
package final class UsageVisitor: ReportingVisitor {
  package let mechanisms: MechanismSet
  package let reporter: Reporter
  private let apparentSize: Bool
  private let links: SharedLinks

  /// Set for each ROOT before its walk.
  package var rootExclusion: RootExclusion?
  package var rootLength = 0

  package private(set) var included = UsageCounts()
  package private(set) var excluded = UsageCounts()
  package private(set) var byMechanism: [Int64]
  package private(set) var byRule: [String: Int64] = [:]
  package private(set) var topExcluded: TopPaths
  package private(set) var topIncluded: TopPaths
  /// Directories whose bytes other threads may hold part of.
  package private(set) var partials: [[UInt8]: Partial] = [:]

  /// The path of the deepest frame; every frame's path is a prefix of it.
  private var chainPath: [UInt8] = []
  private var frames: [Frame] = []

  package enum Kind {
    /// An included directory: its included bytes.
    case included
    /// A topmost excluded directory: all its bytes.
    case excludedTop
    /// A directory below a topmost excluded one: its bytes go to that one.
    case excludedInner
  }

  package struct Frame {
    package var length: Int
    package var depth: Int
    package var kind: Kind
    package var bytes: Int64 = 0
    /// Visited by this thread (its own bytes are in `bytes`), rather than
    /// rebuilt above a handed-over directory.
    package var owned: Bool
    /// Some of its bytes may be on another thread.
    package var split = false
    package var sawEntry = false
    package var bits: MechanismSet = []
    package var rule: String?
  }

  /// A directory's bytes as one thread saw them.
  package struct Partial {
    package var kind: Kind
    package var bytes: Int64
    /// The thread that visited the directory itself contributed: its own
    /// bytes are counted, and for an excluded one its marks are known.
    package var owned: Bool
    package var bits: MechanismSet
    package var rule: String?

    package mutating func merge(_ other: Partial) {
      bytes += other.bytes
      if other.owned {
        owned = true
        bits = other.bits
        rule = other.rule
      }
    }
  }

  package init(
    mechanisms: MechanismSet, apparentSize: Bool, top: Int, links: SharedLinks, reporter: Reporter
  ) {
    self.mechanisms = mechanisms
    self.apparentSize = apparentSize
    self.links = links
    self.reporter = reporter
    self.byMechanism = Array(repeating: 0, count: mechanisms.count)
    self.topExcluded = TopPaths(limit: top)
    self.topIncluded = TopPaths(limit: top)
  }

  /// The earlier ROOTs of this run, by device and inode, met again below
  /// this one: left out, as `du -s x/sub x` leaves `x/sub` out of `x`, so
  /// that a total counts each item once.
  private var earlierRoots: [(device: dev_t, inode: ino_t)] = []

  /// Starts over for the next ROOT.
  package func reset(
    rootLength: Int, rootExclusion: RootExclusion?,
    earlierRoots: [(device: dev_t, inode: ino_t)] = []
  ) {
    self.rootLength = rootLength
    self.rootExclusion = rootExclusion
    self.earlierRoots = earlierRoots
    included = UsageCounts()
    excluded = UsageCounts()
    byMechanism = Array(repeating: 0, count: mechanisms.count)
    byRule = [:]
    topExcluded = TopPaths(limit: topExcluded.limit)
    topIncluded = TopPaths(limit: topIncluded.limit)
    partials = [:]
    chainPath.removeAll(keepingCapacity: true)
    frames.removeAll(keepingCapacity: true)
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    // GNU du -x leaves a mount point out altogether.
    if entry.isOnOtherFilesystem { return .skipChildren }
    let status: stat
    do throws(SkipBackupError) {
      status = try entry.item.status()
    } catch {
      return reporter.unreadable(error, at: entry)
    }
    let isDirectory = status.st_mode & S_IFMT == S_IFDIR
    if entry.depth > 0, !earlierRoots.isEmpty,
      earlierRoots.contains(where: { $0.device == status.st_dev && $0.inode == status.st_ino })
    {
      return .skipChildren
    }
    var size = apparentSize ? Int64(status.st_size) : Int64(status.st_blocks) * 512
    // A hard-linked inode counts once, where it is met first; the set holds
    // only inodes with several links, which are few.
    let counts =
      isDirectory || status.st_nlink < 2
      || links.firstVisit(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    if !counts { size = 0 }

    if entry.depth > 0 { placeInChain(entry) }

    // Excluded: below a topmost excluded directory, or marked itself.
    var bits: MechanismSet = []
    var rule: String?
    let inherited = entry.markedAncestorLength != nil
    if entry.depth == 0, let rootExclusion {
      bits = rootExclusion.bits
      rule = rootExclusion.rule
    } else if !inherited {
      var ownNames = false
      do throws(SkipBackupError) {
        bits = try reporter.marks(mechanisms, of: entry, holdsOwnNames: &ownNames)
      } catch {
        // Its size was read, so it counts, as included, as `du -s` counts it.
        _ = reporter.unreadable(error, at: entry)
      }
      if !bits.isEmpty && ownNames { rule = SweepRecord.ruleName(of: entry.item) }
    }
    let isExcluded = inherited || !bits.isEmpty

    if counts {
      if isExcluded {
        if isDirectory { excluded.directories += 1 } else { excluded.files += 1 }
        excluded.bytes += size
      } else {
        if isDirectory { included.directories += 1 } else { included.files += 1 }
        included.bytes += size
      }
    }

    let descends = isDirectory && entry.type.isDirectory
    if descends {
      let kind: Kind = !bits.isEmpty ? .excludedTop : (inherited ? .excludedInner : .included)
      chainPath.removeAll(keepingCapacity: true)
      chainPath.append(contentsOf: entry.pathBytes)
      frames.append(
        Frame(
          length: entry.pathBytes.count, depth: entry.depth, kind: kind, bytes: size, owned: true,
          bits: bits, rule: rule))
      // Below a topmost excluded directory nothing else is read: a nested
      // mark keeps the topmost one as the entries' marked ancestor.
      return !bits.isEmpty ? .descendMarked : .descend
    }
    if !bits.isEmpty {
      // A marked file: complete here.
      record(excludedTop: entry.pathBytes, bytes: size, bits: bits, rule: rule)
    } else if !frames.isEmpty {
      frames[frames.count - 1].bytes += size
    }
    return .skipChildren
  }

  /// After the walk: leaves every directory still on the chain.
  package func finish() {
    while !frames.isEmpty { popFrame() }
  }

  // MARK: - The chain

  /// Makes the top frame the entry's parent: leaves the directories the
  /// walk is done with, or, when the entry comes from a directory handed
  /// over by another thread, rebuilds the frames above it.
  private func placeInChain(_ entry: borrowing TreeEntry) {
    while let top = frames.last, top.depth >= entry.depth { popFrame() }
    let path = entry.pathBytes
    let parentLength = Self.parentLength(of: path)
    if let top = frames.last, top.depth == entry.depth - 1, top.length == parentLength,
      chainPath.withUnsafeBufferPointer({
        bytesEqual($0.baseAddress!, path.baseAddress!, count: parentLength)
      })
    {
      frames[frames.count - 1].sawEntry = true
      return
    }
    while !frames.isEmpty { popFrame() }
    // The directories from the root down to the parent, from the path: a
    // name never holds a slash.
    chainPath.removeAll(keepingCapacity: true)
    chainPath.append(contentsOf: UnsafeBufferPointer(rebasing: path[..<parentLength]))
    let marked = entry.markedAncestorLength
    var length = rootLength
    var depth = 0
    while true {
      let kind: Kind
      if let marked {
        kind = length < marked ? .included : (length == marked ? .excludedTop : .excludedInner)
      } else {
        kind = .included
      }
      frames.append(
        Frame(length: length, depth: depth, kind: kind, owned: false, split: true, sawEntry: true))
      if length >= parentLength { break }
      var next = length + 1
      if chainPath[length - 1] == 0x2F { next = length }  // the root `/`
      while next < parentLength && chainPath[next] != 0x2F { next += 1 }
      if next == length { next += 1 }
      length = next
      depth += 1
    }
  }

  /// The length of the parent's path in `path`: up to the last slash, or
  /// `/` itself.
  private static func parentLength(of path: UnsafeBufferPointer<UInt8>) -> Int {
    var index = path.count - 1
    while index > 0 && path[index] != 0x2F { index -= 1 }
    return index == 0 ? 1 : index
  }

  private func popFrame() {
    let frame = frames.removeLast()
    if frame.owned && !frame.sawEntry {
      // Empty, or handed to another thread: the directories above may have
      // bytes elsewhere.
      var index = frames.count - 1
      while index >= 0 && !frames[index].split {
        frames[index].split = true
        index -= 1
      }
    }
    switch frame.kind {
    case .included, .excludedInner:
      if !frames.isEmpty { frames[frames.count - 1].bytes += frame.bytes }
    case .excludedTop:
      break
    }
    // The root is not ranked among the included directories.
    guard frame.kind != .excludedInner, !(frame.kind == .included && frame.depth == 0) else {
      return
    }
    let complete =
      frame.owned && !frame.split && (frame.kind == .included || frame.sawEntry)
    let path = chainPath[..<frame.length]
    if complete {
      if frame.kind == .included {
        if topIncluded.admits(frame.bytes) {
          topIncluded.offer(SizedPath(path: Array(path), bytes: frame.bytes))
        }
      } else {
        record(excludedTop: path, bytes: frame.bytes, bits: frame.bits, rule: frame.rule)
      }
    } else if frame.owned || frame.bytes != 0 {
      // A thread that saw nothing of a handed-over directory adds nothing.
      let partial = Partial(
        kind: frame.kind, bytes: frame.bytes, owned: frame.owned, bits: frame.bits,
        rule: frame.rule)
      partials[Array(path), default: Partial(kind: frame.kind, bytes: 0, owned: false, bits: [])]
        .merge(partial)
    }
  }

  private func record(
    excludedTop path: some Collection<UInt8>, bytes: Int64, bits: MechanismSet, rule: String?
  ) {
    addToMechanisms(bytes: bytes, bits: bits, rule: rule)
    if topExcluded.admits(bytes) { topExcluded.offer(SizedPath(path: Array(path), bytes: bytes)) }
  }

  private func addToMechanisms(bytes: Int64, bits: MechanismSet, rule: String?) {
    for (index, mechanism) in mechanisms.members.enumerated() where bits.includes(mechanism) {
      byMechanism[index] += bytes
    }
    if let rule { byRule[rule, default: 0] += bytes }
  }
}

extension DiskUsage {
  /// The usage of one ROOT from its walk's visitors.
  package init(
    root: [UInt8], visitors: [UsageVisitor], mechanisms: Int, top: Int, apparentSize: Bool
  ) {
    self.init(root: root, mechanisms: mechanisms)
    var partials: [[UInt8]: UsageVisitor.Partial] = [:]
    var excludedTop = TopPaths(limit: top)
    var includedTop = TopPaths(limit: top)
    for visitor in visitors {
      visitor.finish()
      included += visitor.included
      excluded += visitor.excluded
      for index in byMechanism.indices { byMechanism[index] += visitor.byMechanism[index] }
      byRule.merge(visitor.byRule, uniquingKeysWith: +)
      for (path, partial) in visitor.partials {
        if partials[path] == nil {
          partials[path] = partial
        } else {
          partials[path]!.merge(partial)
        }
      }
    }
    let members = visitors.first?.mechanisms.members ?? []
    for (path, var partial) in partials {
      switch partial.kind {
      case .excludedTop:
        for (index, mechanism) in members.enumerated()
        where partial.bits.includes(mechanism) {
          byMechanism[index] += partial.bytes
        }
        if let rule = partial.rule { byRule[rule, default: 0] += partial.bytes }
        excludedTop.offer(SizedPath(path: path, bytes: partial.bytes))
      case .included:
        // A directory handed over before the thread that visited it met
        // any of its entries: its own bytes were counted there, and are
        // read again here for the ranking.
        if !partial.owned { partial.bytes += Self.ownBytes(of: path, apparentSize: apparentSize) }
        includedTop.offer(SizedPath(path: path, bytes: partial.bytes))
      case .excludedInner:
        break
      }
    }
    for visitor in visitors {
      for item in visitor.topExcluded.items where partials[item.path] == nil {
        excludedTop.offer(item)
      }
      for item in visitor.topIncluded.items where partials[item.path] == nil {
        includedTop.offer(item)
      }
    }
    topExcluded = excludedTop.items
    topIncludedDirectories = includedTop.items
  }

  private static func ownBytes(of path: [UInt8], apparentSize: Bool) -> Int64 {
    let item = (path + [0]).withUnsafeBufferPointer { pointer in
      FileItem(
        path: FilePath(
          platformString: UnsafeRawPointer(pointer.baseAddress!).assumingMemoryBound(to: CChar.self)
        ),
        followSymbolicLinks: false)
    }
    guard let status = try? item.status() else { return 0 }
    return apparentSize ? Int64(status.st_size) : Int64(status.st_blocks) * 512
  }
}
