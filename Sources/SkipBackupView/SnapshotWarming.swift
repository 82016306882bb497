import SkipBackupCore
import SkipBackupWalk
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A look at every entry of the snapshots' ROOTs, on a thread of its own
/// while COMMAND runs, so that the first look at each inode of a fresh
/// snapshot is paid beside COMMAND rather than by it.
///
/// A snapshot is a new subvolume: the kernel builds each inode in memory on
/// the first look at it, though the blocks are the live tree's and in the
/// page cache. Where ``SnapshotInodes`` spared the walk those looks, a tool
/// that reads every entry paid them itself, on its one thread and through
/// the overlay; this pass pays them on another core, ahead of the tool, in
/// the order `find`, `tar` and `rsync` walk. What the tool reaches first,
/// it pays for, and the pass then finds in memory.
///
/// What the view hides it leaves alone: the tool never looks there (on a
/// swept home, most of the entries: node_modules, target, the caches), and
/// each inode it brought into memory would make the snapshot's deletion
/// longer (0.41 to 0.44 s for the 200,000-file tree read whole).
///
/// Stopped and joined by ``finish(stoppingEarly:)`` or when it ends, before
/// the snapshots are deleted: the pass holds directories of them open.
package struct SnapshotWarming: ~Copyable {
  private let state: State
  private var thread: pthread_t?

  /// A directory of a snapshot to look through, and the paths below it that
  /// its view hides, relative and sorted bytewise.
  package struct Root: Sendable {
    package let path: FilePath
    package let hidden: [[UInt8]]
    /// The directory, open for reading by whoever holds the snapshot
    /// (``SnapshotSet/directory(of:)``), for as long as the pass: read
    /// rather than `path`, which then only names it.
    package let directory: CInt?
    package init(path: FilePath, hidden: [[UInt8]] = [], directory: CInt? = nil) {
      self.path = path
      self.hidden = hidden
      self.directory = directory
    }

    /// Whether the view hides the entry at `relative`.
    func hides(_ relative: UnsafeBufferPointer<UInt8>.SubSequence) -> Bool {
      var (low, high) = (0, hidden.count)
      while low < high {
        let middle = (low + high) / 2
        if hidden[middle].lexicographicallyPrecedes(relative) {
          low = middle + 1
        } else {
          high = middle
        }
      }
      return low < hidden.count && hidden[low].elementsEqual(relative)
    }
  }

  /// Starts the pass over `roots`, directories of the run's snapshots; with
  /// no thread (the pass is only an optimization) when none can start.
  package init(roots: [Root]) {
    state = State(roots: roots)
    guard !roots.isEmpty else {
      thread = nil
      return
    }
    let context = Unmanaged.passRetained(state)
    var started = pthread_t()
    // Raw: no path and no descriptor: a thread, a limit or a count
    if system_pthread_create(&started, warm, context.toOpaque()) == 0 {
      thread = started
    } else {
      context.release()
      thread = nil
    }
  }

  deinit {
    guard let thread else { return }
    state.stopped.store(true, ordering: .relaxed)
    // Raw: no path and no descriptor: a thread, a limit or a count
    _ = system_pthread_join(thread)
  }

  /// Ends the pass, at once when `stoppingEarly` (COMMAND has ended; the
  /// directories being read are finished), or once it has looked at
  /// everything; how many entries it looked at.
  package consuming func finish(stoppingEarly: Bool = true) -> Int {
    if let started = thread {
      if stoppingEarly { state.stopped.store(true, ordering: .relaxed) }
      // Raw: no path and no descriptor: a thread, a limit or a count
      _ = system_pthread_join(started)
      thread = nil
    }
    return state.looked.load(ordering: .relaxed)
  }

  fileprivate final class State: Sendable {
    let roots: [Root]
    let stopped = Atomic<Bool>(false)
    let looked = Atomic<Int>(0)
    init(roots: [Root]) { self.roots = roots }

    func run() {
      for root in roots {
        // "/" walks as "/a"; any other root as "ROOT/a".
        let rootLength = root.path.bytes.count
        let start = rootLength == 1 ? 1 : rootLength + 1
        _ = walkTree(
          root: root.path,
          options: TreeWalkOptions(oneFileSystem: true, rootDirectory: root.directory),
          visit: { entry in
            if self.stopped.load(ordering: .relaxed) { return .skipChildren }
            if entry.depth > 0, !root.hidden.isEmpty, root.hides(entry.pathBytes[start...]) {
              return .skipChildren
            }
            self.looked.add(1, ordering: .relaxed)
            if entry.type.isDirectory { return .descend }
            // Only the lookup matters: what it says is not needed.
            _ = try? entry.item.status()
            return .descend
          },
          failure: { _ in })
      }
    }
  }
}

private func warm(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  Unmanaged<SnapshotWarming.State>.fromOpaque(argument!).takeRetainedValue().run()
  return nil
}
