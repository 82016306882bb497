import SkipBackupCore
import SkipBackupReport
import SkipBackupSizes
import SkipBackupSweep
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One walk thread's part of `du`: the sized walk, with du's
/// classification of each entry (which side it is on: included, a topmost
/// excluded item, or inside one, with its marks and sweep rule), the counts
/// of each side, the bytes by mechanism and by rule, and the largest items.
///
/// A topmost excluded directory keeps its total apart; an included or inner
/// excluded directory passes its bytes up. A directory this thread saw
/// whole goes straight into the top lists, so memory stays flat; one whose
/// bytes other threads may hold part of (``SizedFrame/split``, or not
/// ``SizedFrame/owned``) is kept by path, as a ``Partial``, and summed
/// across threads after the walk
/// (``DiskUsage/init(root:visitors:mechanisms:top:rule:)``).
package final class UsageVisitor: ReportingVisitor, SizeClassifier {
  package let mechanisms: MechanismSet
  package let reporter: Reporter
  /// Only this visitor's thread touches it, one visit at a time, and the
  /// classification it calls back never does: an access check
  /// (`swift_beginAccess`) per visit is spared.
  @exclusivity(unchecked) private var walk: SizedWalk
  /// What is known of ROOT before the walk.
  private var rootExclusion: RootExclusion?

  package private(set) var included = UsageCounts()
  package private(set) var excluded = UsageCounts()
  package private(set) var byMechanism: [Int64]
  package private(set) var byRule: [String: Int64] = [:]
  package private(set) var topExcluded: TopPaths
  package private(set) var topIncluded: TopPaths
  /// Directories whose bytes other threads may hold part of.
  package private(set) var partials: [[UInt8]: Partial] = [:]
  /// Each directory on the walk's chain, deepest last.
  @exclusivity(unchecked) private var marks: [Mark] = []
  /// The sweep rules met, which a ``Mark`` names by index, so that the
  /// chain holds no reference to retain.
  private var ruleNames: [String] = []

  package enum Kind {
    /// An included directory: its included bytes.
    case included
    /// A topmost excluded directory: all its bytes.
    case excludedTop
    /// A directory below a topmost excluded one: its bytes go to that one.
    case excludedInner
  }

  private struct Mark {
    var kind: Kind
    var bits: MechanismSet = []
    /// An index into `ruleNames`; -1 for none.
    var rule: Int32 = -1
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
    self.reporter = reporter
    walk = SizedWalk(rule: SizeRule(apparentSize: apparentSize, links: links))
    byMechanism = Array(repeating: 0, count: mechanisms.count)
    topExcluded = TopPaths(limit: top)
    topIncluded = TopPaths(limit: top)
  }

  /// Starts over for the next ROOT.
  package func reset(
    rootLength: Int, rootExclusion: RootExclusion?,
    earlierRoots: [(device: dev_t, inode: ino_t)] = []
  ) {
    walk.reset(rootLength: rootLength, earlierRoots: earlierRoots)
    self.rootExclusion = rootExclusion
    included = UsageCounts()
    excluded = UsageCounts()
    byMechanism = Array(repeating: 0, count: mechanisms.count)
    byRule = [:]
    topExcluded = TopPaths(limit: topExcluded.limit)
    topIncluded = TopPaths(limit: topIncluded.limit)
    partials = [:]
    marks.removeAll(keepingCapacity: true)
  }

  package func visit(_ entry: borrowing TreeEntry) -> TreeVisit {
    reporter.tick()
    return walk.visit(entry, self)
  }

  /// After the walk: leaves every directory still on the chain.
  package func finish() {
    walk.finish(self)
  }

  // MARK: - The classification

  package func unreadable(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> TreeVisit {
    reporter.unreadable(error, at: entry)
  }

  package func classify(_ entry: borrowing TreeEntry, _ item: SizedItem) -> SizedEntry {
    let (size, counts) = item.claim()
    // Excluded: below a topmost excluded directory, or marked itself.
    var bits: MechanismSet = []
    var rule: Int32 = -1
    let inherited = entry.markedAncestorLength != nil
    if entry.depth == 0, let rootExclusion {
      bits = rootExclusion.bits
      rule = index(ofRule: rootExclusion.rule)
    } else if !inherited {
      var ownNames = false
      do throws(SkipBackupError) {
        bits = try reporter.marks(mechanisms, of: entry, holdsOwnNames: &ownNames)
      } catch {
        // Its size was read, so it counts, as included, as `du -s` counts it.
        _ = reporter.unreadable(error, at: entry)
      }
      if !bits.isEmpty && ownNames { rule = index(ofRule: SweepRecord.ruleName(of: entry.item)) }
    }
    let isExcluded = inherited || !bits.isEmpty

    if counts {
      if isExcluded {
        if item.isDirectory { excluded.directories += 1 } else { excluded.files += 1 }
        excluded.bytes += size
      } else {
        if item.isDirectory { included.directories += 1 } else { included.files += 1 }
        included.bytes += size
      }
    }

    if item.entersDirectory {
      let kind: Kind = !bits.isEmpty ? .excludedTop : (inherited ? .excludedInner : .included)
      marks.append(Mark(kind: kind, bits: bits, rule: rule))
      // Below a topmost excluded directory nothing else is read: a nested
      // mark keeps the topmost one as the entries' marked ancestor.
      return SizedEntry(
        visit: !bits.isEmpty ? .descendMarked : .descend, bytes: size,
        passesUp: kind != .excludedTop)
    }
    if !bits.isEmpty {
      // A marked file: complete here.
      record(excludedTop: entry.pathBytes, bytes: size, bits: bits, rule: rule)
      return SizedEntry(visit: .skipChildren)
    }
    return SizedEntry(visit: .skipChildren, bytes: size, passesUp: true)
  }

  package func rebuilt(
    name: UnsafeBufferPointer<UInt8>, depth: Int, length: Int, markedAncestorLength: Int?
  ) -> Bool {
    var kind = Kind.included
    if let marked = markedAncestorLength {
      kind = length < marked ? .included : (length == marked ? .excludedTop : .excludedInner)
    }
    marks.append(Mark(kind: kind))
    return kind != .excludedTop
  }

  package func leave(_ frame: SizedFrame, path: UnsafeBufferPointer<UInt8>) {
    let mark = marks.removeLast()
    // The root is not ranked among the included directories.
    guard mark.kind != .excludedInner, !(mark.kind == .included && frame.depth == 0) else {
      return
    }
    let complete = frame.owned && !frame.split && (mark.kind == .included || frame.sawEntry)
    if complete {
      if mark.kind == .included {
        if topIncluded.admits(frame.bytes) {
          topIncluded.offer(SizedPath(path: Array(path), bytes: frame.bytes))
        }
      } else {
        record(excludedTop: path, bytes: frame.bytes, bits: mark.bits, rule: mark.rule)
      }
    } else if frame.owned || frame.bytes != 0 {
      // A thread that saw nothing of a handed-over directory adds nothing.
      let partial = Partial(
        kind: mark.kind, bytes: frame.bytes, owned: frame.owned, bits: mark.bits,
        rule: ruleName(mark.rule))
      partials[Array(path), default: Partial(kind: mark.kind, bytes: 0, owned: false, bits: [])]
        .merge(partial)
    }
  }

  private func index(ofRule name: String?) -> Int32 {
    guard let name else { return -1 }
    if let index = ruleNames.firstIndex(of: name) { return Int32(index) }
    ruleNames.append(name)
    return Int32(ruleNames.count - 1)
  }

  private func ruleName(_ index: Int32) -> String? {
    index < 0 ? nil : ruleNames[Int(index)]
  }

  private func record(
    excludedTop path: some Collection<UInt8>, bytes: Int64, bits: MechanismSet, rule: Int32
  ) {
    for (index, mechanism) in mechanisms.members.enumerated() where bits.includes(mechanism) {
      byMechanism[index] += bytes
    }
    if let rule = ruleName(rule) { byRule[rule, default: 0] += bytes }
    if topExcluded.admits(bytes) { topExcluded.offer(SizedPath(path: Array(path), bytes: bytes)) }
  }
}

extension DiskUsage {
  /// The usage of one ROOT from its walk's visitors.
  package init(root: [UInt8], visitors: [UsageVisitor], mechanisms: Int, top: Int, rule: SizeRule) {
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
        if !partial.owned { partial.bytes += Self.ownBytes(of: path, rule) }
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

  private static func ownBytes(of path: [UInt8], _ rule: SizeRule) -> Int64 {
    let item = FileItem(path: FilePath(bytes: path), followSymbolicLinks: false)
    guard let status = try? item.status() else { return 0 }
    return rule.bytes(status)
  }
}
