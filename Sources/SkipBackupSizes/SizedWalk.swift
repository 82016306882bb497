import SkipBackupCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One walk thread's part of a sized walk: what `du`, `browse` and the
/// sweep's sizes count, the same way, as GNU du counts it.
///
/// - An item counts its disk usage (`st_blocks` x 512) or, with
///   ``SizeRule/apparentSize``, its `st_size`.
/// - An inode with several links counts once, where it is met first, across
///   every thread and every ROOT of a run (``SharedLinks``); a directory
///   always counts.
/// - A mount point below ROOT, with `oneFileSystem`, is left out
///   altogether, and so is an earlier ROOT of the run met again below this one.
/// - Bytes are summed bottom-up on a chain of frames, one per directory on
///   the current path: an entry adds to its parent's frame, a frame adds to
///   its parent's when the walk leaves it, unless the caller's
///   classification keeps its total apart (a topmost excluded directory).
///
/// A parallel walk hands directories to other threads, so a directory's
/// bytes may be spread over several threads: a thread that starts on a
/// handed-over directory rebuilds the chain above it from the path (frames
/// it does not own, ``SizedFrame/owned``), and a thread that leaves a
/// directory without meeting any of its entries (empty, or handed over)
/// flags every directory above as ``SizedFrame/split``. What a directory
/// whose bytes are split adds up to is the caller's to join after the walk.
///
/// The caller classifies each entry (``SizeClassifier``): the walk is held
/// by the caller's visitor, which is its classifier too, and forwards each
/// visit. What the caller keeps of each directory on the chain (du's side
/// and marks, browse's node) it keeps on a stack of its own, pushed where
/// the walk opens a frame and popped where the walk leaves it, so that the
/// walk is no generic type: a walk generic over the caller's mark is
/// `package`, and Swift 6.3 does not specialize it in the caller's module
/// even when `@inlinable`, so every visit went through generic metadata
/// lookups (du's CPU time 1.32x on the 200,000-file tree), while a
/// class-bound protocol costs one indirect call a visit.
package struct SizedWalk {
  private let rule: SizeRule
  /// The earlier ROOTs of this run, by device and inode, met again below
  /// this one: left out, as `du -s x/sub x` leaves `x/sub` out of `x`, so
  /// that a total counts each item once.
  private var earlierRoots: [(device: dev_t, inode: ino_t)] = []
  /// The length of ROOT's path as the walk spells it (without trailing
  /// slashes), where a chain rebuilt from a path starts.
  private var rootLength = 0

  /// The directories on the way down to the current entry, deepest last.
  private var frames: [SizedFrame] = []
  /// The path of the deepest frame; every frame's path is a prefix of it.
  private var chainPath: [UInt8] = []

  package init(rule: SizeRule) {
    self.rule = rule
  }

  /// Starts over for the next ROOT, whose path is `rootLength` bytes long.
  /// The classifier's stack must be empty too.
  package mutating func reset(
    rootLength: Int, earlierRoots: [(device: dev_t, inode: ino_t)] = []
  ) {
    self.rootLength = rootLength
    self.earlierRoots = earlierRoots
    frames.removeAll(keepingCapacity: true)
    chainPath.removeAll(keepingCapacity: true)
  }

  /// Sees one entry of the walk, classified by `classifier`: what the
  /// visitor's `visit` returns.
  package mutating func visit(
    _ entry: borrowing TreeEntry, _ classifier: any SizeClassifier
  ) -> TreeVisit {
    // GNU du -x leaves a mount point out altogether.
    if entry.isOnOtherFilesystem { return .skipChildren }
    if entry.depth > 0 { placeInChain(entry, classifier) }
    let status: stat
    do throws(SkipBackupError) {
      status = try entry.item.status()
    } catch {
      return classifier.unreadable(error, at: entry)
    }
    if entry.depth > 0, !earlierRoots.isEmpty,
      earlierRoots.contains(where: { $0.device == status.st_dev && $0.inode == status.st_ino })
    {
      return .skipChildren
    }
    let item = SizedItem(status, entry.type.isDirectory, rule)
    let sized = classifier.classify(entry, item)
    if item.entersDirectory, sized.visit.descends {
      let path = entry.pathBytes
      chainPath.removeAll(keepingCapacity: true)
      chainPath.append(contentsOf: path)
      frames.append(
        SizedFrame(
          length: path.count, depth: entry.depth, bytes: sized.bytes, passesUp: sized.passesUp,
          owned: true, split: false, sawEntry: false))
    } else if sized.passesUp && !frames.isEmpty {
      frames[frames.count - 1].bytes += sized.bytes
    }
    return sized.visit
  }

  /// After the walk: leaves every directory still on the chain.
  package mutating func finish(_ classifier: any SizeClassifier) {
    while !frames.isEmpty { popFrame(classifier) }
  }

  // MARK: - The chain

  /// Makes the top frame the entry's parent: leaves the directories the
  /// walk is done with, or, when the entry comes from a directory handed
  /// over by another thread, rebuilds the frames above it.
  private mutating func placeInChain(
    _ entry: borrowing TreeEntry, _ classifier: any SizeClassifier
  ) {
    while let top = frames.last, top.depth >= entry.depth { popFrame(classifier) }
    let path = entry.pathBytes
    var parentLength = path.count - entry.nameLength - 1
    if parentLength == 0 { parentLength = 1 }  // the root `/`
    if let top = frames.last, top.depth == entry.depth - 1, top.length == parentLength,
      chainPath.withUnsafeBufferPointer({
        bytesEqual($0.baseAddress!, path.baseAddress!, count: parentLength)
      })
    {
      frames[frames.count - 1].sawEntry = true
      return
    }
    while !frames.isEmpty { popFrame(classifier) }
    // The directories from ROOT down to the parent, from the path: a name
    // never holds a slash.
    chainPath.removeAll(keepingCapacity: true)
    chainPath.append(contentsOf: UnsafeBufferPointer(rebasing: path[..<parentLength]))
    var length = rootLength
    var start = rootLength
    var depth = 0
    while true {
      let passesUp = chainPath.withUnsafeBufferPointer {
        classifier.rebuilt(
          name: UnsafeBufferPointer(rebasing: $0[start..<length]), depth: depth, length: length,
          markedAncestorLength: entry.markedAncestorLength)
      }
      frames.append(
        SizedFrame(
          length: length, depth: depth, bytes: 0, passesUp: passesUp, owned: false, split: true,
          sawEntry: true))
      if length >= parentLength { break }
      // The next name starts after the slash (the root `/` ends in one).
      start = chainPath[length - 1] == 0x2F ? length : length + 1
      var next = start
      while next < parentLength && chainPath[next] != 0x2F { next += 1 }
      if next == length { next += 1 }
      length = next
      depth += 1
    }
  }

  private mutating func popFrame(_ classifier: any SizeClassifier) {
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
    if frame.passesUp && !frames.isEmpty { frames[frames.count - 1].bytes += frame.bytes }
    chainPath.withUnsafeBufferPointer {
      classifier.leave(frame, path: UnsafeBufferPointer(rebasing: $0[..<frame.length]))
    }
  }
}

extension TreeVisit {
  /// The walk goes into the directory. A switch: `==` on the enum of
  /// another module was a call through `Equatable`'s witness.
  fileprivate var descends: Bool {
    switch self {
    case .descend, .descendMarked: true
    case .skipChildren, .vanished: false
    }
  }
}

/// One directory on a sized walk's chain.
package struct SizedFrame {
  /// The length of the directory's path: a prefix of the chain's path.
  package var length: Int
  package var depth: Int
  /// The bytes this thread met of it: its own (when ``owned``) and what
  /// passed up to it from below.
  package var bytes: Int64
  /// Whether its bytes go on to the directory above when the walk leaves it.
  package var passesUp: Bool
  /// Visited by this thread (its own bytes are in ``bytes``), rather than
  /// rebuilt above a handed-over directory.
  package var owned: Bool
  /// Some of its bytes may be on another thread.
  package var split: Bool
  /// This thread met one of its entries.
  package var sawEntry: Bool
}

/// What a sized walk asks of its caller for each entry: a closed set of
/// callers (du's counts by side, browse's tree, the sweep's subtree
/// total), each the visitor of its walk thread.
///
/// The walk opens a frame for a directory it enters (``SizedItem/entersDirectory``,
/// and a visit that descends) and for each directory it rebuilds above a
/// handed-over one, and leaves each frame once: a classifier that keeps
/// something of each directory pushes it in ``classify(_:_:)`` and
/// ``rebuilt(name:depth:length:markedAncestorLength:)`` and pops it in
/// ``leave(_:path:)``; the top of its stack is then the entry's parent.
package protocol SizeClassifier: AnyObject {
  /// An entry whose status could not be read: nothing of it counts.
  func unreadable(_ error: SkipBackupError, at entry: borrowing TreeEntry) -> TreeVisit

  /// An entry with its status read: what it is, and where its bytes go.
  /// `item.claim()` gives its bytes under the run's rule, once.
  func classify(_ entry: borrowing TreeEntry, _ item: SizedItem) -> SizedEntry

  /// A directory on the way down to one handed over by another thread,
  /// named by its path (`name` is empty for ROOT): whether its bytes pass up.
  func rebuilt(
    name: UnsafeBufferPointer<UInt8>, depth: Int, length: Int, markedAncestorLength: Int?
  ) -> Bool

  /// A directory the walk has left, its bytes summed; `path` is valid for
  /// the call only.
  func leave(_ frame: SizedFrame, path: UnsafeBufferPointer<UInt8>)
}

/// What the caller makes of one entry.
package struct SizedEntry {
  /// What the walk does next.
  package var visit: TreeVisit
  /// The bytes it adds: for a directory the walk enters, its own, where its
  /// frame starts.
  package var bytes: Int64
  /// Whether ``bytes`` (or, for a directory, its total when the walk
  /// leaves it) go on to the directory above.
  package var passesUp: Bool

  package init(visit: TreeVisit, bytes: Int64 = 0, passesUp: Bool = false) {
    self.visit = visit
    self.bytes = bytes
    self.passesUp = passesUp
  }
}

/// An entry of a sized walk, its status read.
package struct SizedItem {
  /// Its status says directory.
  package let isDirectory: Bool
  /// A directory the walk enters when the classification descends: the
  /// listing said directory too.
  package let entersDirectory: Bool
  /// Its bytes under the run's rule, before the link rule.
  package let bytes: Int64
  private let device: UInt64
  private let inode: UInt64
  /// A file with several links, counted only where it is met first.
  private let isLinked: Bool
  private unowned(unsafe) let links: SharedLinks

  /// Inlined: a call would retain the rule's link set, which the item
  /// only borrows.
  @inline(__always)
  init(_ status: stat, _ listedAsDirectory: Bool, _ rule: borrowing SizeRule) {
    isDirectory = status.st_mode & S_IFMT == S_IFDIR
    entersDirectory = isDirectory && listedAsDirectory
    bytes = rule.bytes(status)
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    isLinked = !isDirectory && status.st_nlink > 1
    links = rule.links
  }

  /// The bytes the entry counts, and whether it counts: an inode with
  /// several links counts once, where it is met first, as GNU du counts
  /// it; a later link counts nothing. Claim once, when the entry is known
  /// to count (an entry found gone afterwards is met again at the end of
  /// the walk, where its first link must still count).
  package func claim() -> (bytes: Int64, counts: Bool) {
    if isLinked && !links.firstVisit(device: device, inode: inode) { return (0, false) }
    return (bytes, true)
  }
}

/// How a run counts bytes: disk usage or apparent size, and the inodes
/// with several links met so far.
package struct SizeRule: Sendable {
  /// `st_size` rather than disk usage (`--apparent-size`).
  package let apparentSize: Bool
  package let links: SharedLinks

  package init(apparentSize: Bool = false, links: SharedLinks = SharedLinks()) {
    self.apparentSize = apparentSize
    self.links = links
  }

  /// An item's own bytes: disk usage in blocks of 512 bytes (`st_blocks`,
  /// stat(2)), as `du` counts it, or `st_size`.
  package func bytes(_ status: stat) -> Int64 {
    apparentSize ? Int64(status.st_size) : Int64(status.st_blocks) * 512
  }
}
