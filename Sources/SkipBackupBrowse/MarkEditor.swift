import SkipBackupCore
import SystemPackage
import SkipBackupMarking
import SkipBackupReport
import SkipBackupSweep

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Marks and clears items from the browser, one at a time, through the very
/// per-item code of `mark` and `clear` (``MarkingWorker``): idempotent, ctime
/// kept where nothing changes, a sweep's record removed as `mark` and
/// `clear` remove it (a mark made by hand is the person's own). Each change
/// is kept, so that `u` can take the last one back.
package final class MarkEditor {
  /// What one key did to one item.
  package struct Change {
    package let action: MarkingRun.Action
    package let node: Int32
    /// The mechanisms whose mark the change wrote (mark) or removed (clear).
    package let mechanisms: MechanismSet
    /// The sweep's record the change removed, written back on undo.
    package let record: SweepRecord?
  }

  /// The mechanisms counted, marked with `m` and cleared with `c`: `-m`'s
  /// set for all three, or each command's default without it (`du`
  /// counts all, `mark` writes resource, `clear` removes all).
  package let counted: MechanismSet
  package let marking: MechanismSet
  package let clearing: MechanismSet
  package private(set) var history: [Change] = []
  /// How many `m`, `c` and `u` failed (each said why on the screen): the
  /// exit status is 1 after any, since a change was asked for and not made.
  package private(set) var failures = 0

  /// ROOT, open: each item is reached from it one name at a time, so that
  /// a directory on the way swapped for a symbolic link since the walk
  /// leads no mark out of the tree.
  private let root: Descriptor
  private let rootPath: FilePath

  package init(
    counted: MechanismSet, marking: MechanismSet, clearing: MechanismSet,
    root: consuming Descriptor,
    rootPath: FilePath
  ) {
    self.counted = counted
    self.marking = marking
    self.clearing = clearing
    self.root = root
    self.rootPath = rootPath
  }

  /// What one listing of an item's attribute names (``ItemAttributes``)
  /// says of it: its marks among the mechanisms counted, marked and
  /// cleared, and its sweep's record.
  private struct ItemState {
    package var marks: MechanismSet
    package var record: SweepRecord?
  }

  /// The item's state, read once before a change and once after it: the
  /// change's own effect and the row both come from that one reading.
  private func state(of item: FileItem) throws(SkipBackupError) -> ItemState {
    let listing = try SweepListing(of: item)
    return ItemState(
      marks: try counted.union(marking).union(clearing).marks(on: item, listed: listing.attributes),
      record: try? SweepRecord.read(from: item, listed: listing))
  }

  /// Marks or clears `node`; returns what to tell the person.
  package func apply(_ action: MarkingRun.Action, to node: Int32, in tree: inout BrowseTree)
    -> String
  {
    let mechanisms = action == .mark ? marking : clearing
    var before: ItemState?
    var changed: MechanismSet = []
    var recordGone = false
    let failure = change(node, in: &tree) { (item) throws(SkipBackupError) -> SkipBackupError? in
      before = try? state(of: item)
      do throws(SkipBackupError) {
        try Self.worker(action, mechanisms).applyThrowing(item)
      } catch  where error.isNoSuchFile {
        throw error  // gone: nothing was written
      } catch {
        return error
      }
      return nil
    } noting: { after in
      let (was, now) = (before?.marks ?? [], after?.marks ?? [])
      changed = mechanisms.intersection(
        action == .mark ? now.subtracting(was) : was.subtracting(now))
      recordGone = before?.record != nil && after?.record == nil
      if !changed.isEmpty || recordGone {
        history.append(
          Change(
            action: action, node: node, mechanisms: changed,
            record: recordGone ? before?.record : nil))
      }
    }
    if let failure {
      failures += 1
      return failure.description
    }
    let name = String(escapingForDisplay: tree.relativePath(of: node))
    guard !changed.isEmpty || recordGone else {
      return "\(name): \(action.unchanged) (\(mechanisms.names.joined(separator: ",")))"
    }
    return "\(action.past) \(name) (\(changed.names.joined(separator: ","))); u undoes"
  }

  /// Takes the last change back: the inverse action on the mechanisms it
  /// changed, through the same per-item code, and its sweep record written
  /// back. `nil` when there is nothing to undo.
  package func undo(in tree: inout BrowseTree) -> String? {
    guard let change = history.popLast() else { return nil }
    let name = String(escapingForDisplay: tree.relativePath(of: change.node))
    guard !tree.flags[Int(change.node)].contains(.vanished) else {
      failures += 1
      return "\(name): gone since the change, which is not undone"
    }
    let failure = self.change(change.node, in: &tree) {
      (item) throws(SkipBackupError) -> SkipBackupError? in
      do throws(SkipBackupError) {
        if !change.mechanisms.isEmpty {
          try Self.worker(change.action == .mark ? .clear : .mark, change.mechanisms)
            .applyThrowing(item)
        }
        try change.record?.write(to: item)
      } catch  where error.isNoSuchFile {
        throw error
      } catch {
        return error
      }
      return nil
    }
    if let failure {
      failures += 1
      return failure.description
    }
    return "undone: \(change.action.verb) \(name)"
  }

  /// Runs `body` on `node`, reached as a name in its parent (opened from
  /// ROOT one name at a time, no link followed), reads the item's state
  /// once, hands it to `noting` (`nil`: it could not be read) and brings
  /// the row up to date from it; returns what failed. `body` throws when
  /// the item is gone, and returns what else failed. An item gone, or a
  /// directory on the way to it, is looked up once more, as every command's
  /// walk looks again at its end (renamed away and back, as an editor's save
  /// does); gone still, it is dropped from the screen, not shown as an error.
  private func change(
    _ node: Int32, in tree: inout BrowseTree,
    _ body: (FileItem) throws(SkipBackupError) -> SkipBackupError?,
    noting: (ItemState?) -> Void = { _ in }
  ) -> SkipBackupError? {
    var gone: SkipBackupError?
    for _ in 0..<2 {
      do throws(SkipBackupError) {
        return try FileItem.withItem(
          tree.relativePath(of: node), below: root.rawValue, rootPath: rootPath
        ) { (item) throws(SkipBackupError) -> SkipBackupError? in
          let failure = try body(item)
          let after = Result { () throws(SkipBackupError) -> ItemState in try state(of: item) }
          if case .failure(let error) = after, error.isNoSuchFile { throw error }
          noting(try? after.get())
          try refresh(node, item, after, in: &tree, failure: failure)
          return failure
        }
      } catch  where error.isNoSuchFile {
        gone = error
      } catch {
        // The way refused (a directory on it is a symbolic link now):
        // nothing was written, and the row says why.
        tree.problems[node] = error.description
        return error
      }
    }
    tree.drop(node)
    return gone
  }

  /// Brings the item's counted marks, rule and sums up to date from its
  /// `state`, read after the change; throws when the item is gone.
  private func refresh(
    _ node: Int32, _ item: FileItem, _ state: Result<ItemState, SkipBackupError>,
    in tree: inout BrowseTree, failure: SkipBackupError?
  ) throws(SkipBackupError) {
    do throws(SkipBackupError) {
      let marks = try state.get().marks.intersection(counted)
      let rule = marks.isEmpty ? nil : try state.get().record?.rule
      tree.ownBytes[Int(node)] = try ownBytes(of: node, item, in: tree)
      tree.update(node, marks: marks, rule: rule)
    } catch  where error.isNoSuchFile {
      throw error
    } catch {
      tree.flags[Int(node)].insert(.unreadable)
      tree.problems[node] = error.description
    }
    if let failure { tree.problems[node] = failure.description }
  }

  /// The item's own bytes now: a mark can take a block of its own (ext4
  /// moves attributes that do not fit in the inode to one: 4,096 bytes more
  /// in `du`), and removing it gives the block back. A directory's
  /// CACHEDIR.TAG, which `-m cachedir` writes and is no item of the tree,
  /// counts in the directory's own bytes. A hard link counted elsewhere
  /// stays at 0.
  private func ownBytes(
    of node: Int32, _ item: FileItem, in tree: BrowseTree
  ) throws(SkipBackupError) -> Int64 {
    let before = tree.ownBytes[Int(node)]
    let status = try item.status()
    if status.st_mode & S_IFMT != S_IFDIR && status.st_nlink > 1 && before == 0 { return 0 }
    var bytes = Int64(status.st_blocks) * 512
    let tag = Array(CacheDirectoryTag.fileName.utf8)
    if status.st_mode & S_IFMT == S_IFDIR && tree.entry(named: tag, in: node) == nil {
      // In the item itself, opened as its parent's entry with no link
      // followed, as the change reached it: not by its full path.
      let tagStatus = try? item.withOpenDescriptor(OpenFlags([.pathOnly, .directory]).rawValue) {
        (directory) throws(SkipBackupError) in
        try FileItem(
          name: FilePath(bytes: tag), in: FileDescriptor(rawValue: directory),
          displayPath: item.displayPath.appending(bytes: tag)
        ).status()
      }
      if let tagStatus { bytes += Int64(tagStatus.st_blocks) * 512 }
    }
    return bytes
  }

  /// `mark` or `clear` of one PATH with `mechanisms`, as the commands run it
  /// without options: its output (there is none without `-v`) and failures
  /// go nowhere but back to the browser.
  private static func worker(
    _ action: MarkingRun.Action, _ mechanisms: MechanismSet
  ) -> MarkingWorker {
    let run = MarkingRun(action: action, mechanisms: mechanisms, items: ItemSelection(paths: []))
    return MarkingWorker(
      run: run, reporter: Reporter(diagnostics: Diagnostics(), progress: Progress(enabled: false)))
  }
}
