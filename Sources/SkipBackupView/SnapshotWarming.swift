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
/// Stopped and joined by ``finish(stoppingEarly:)`` or when it ends, before
/// the snapshots are deleted: the pass holds directories of them open.
package struct SnapshotWarming: ~Copyable {
  private let state: State
  private var thread: pthread_t?

  /// Starts the pass over `roots`, directories of the run's snapshots; with
  /// no thread (the pass is only an optimization) when none can start.
  package init(roots: [FilePath]) {
    state = State(roots: roots)
    guard !roots.isEmpty else {
      thread = nil
      return
    }
    let context = Unmanaged.passRetained(state)
    var started = pthread_t()
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
    _ = system_pthread_join(thread)
  }

  /// Ends the pass, at once when `stoppingEarly` (COMMAND has ended; the
  /// directories being read are finished), or once it has looked at
  /// everything; how many entries it looked at.
  package consuming func finish(stoppingEarly: Bool = true) -> Int {
    if let started = thread {
      if stoppingEarly { state.stopped.store(true, ordering: .relaxed) }
      _ = system_pthread_join(started)
      thread = nil
    }
    return state.looked.load(ordering: .relaxed)
  }

  fileprivate final class State: Sendable {
    let roots: [FilePath]
    let stopped = Atomic<Bool>(false)
    let looked = Atomic<Int>(0)
    init(roots: [FilePath]) { self.roots = roots }

    func run() {
      for root in roots {
        _ = walkTree(
          root: root, options: TreeWalkOptions(oneFileSystem: true),
          visit: { entry in
            if self.stopped.load(ordering: .relaxed) { return .skipChildren }
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
