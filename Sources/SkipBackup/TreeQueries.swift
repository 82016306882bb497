import SkipBackupCore
import SystemPackage

/// One of the topmost excluded items below a root, as `skipbackup list`
/// prints it: a marked item, or the root itself when a marked directory
/// above it excludes it as a whole. Nothing below an excluded directory is
/// listed: it goes with the directory.
public struct ExcludedItem: Hashable, Sendable {
  /// The item's path: the root as given, then the names below it, byte for
  /// byte.
  public var path: FilePath
  /// The mechanisms whose mark the item carries itself: empty only for a
  /// root excluded by a marked directory above it.
  public var marks: MechanismSet

  public init(path: FilePath, marks: MechanismSet) {
    self.path = path
    self.marks = marks
  }
}

/// An item below a root and whether it is excluded, as `skipbackup status -R`
/// prints it.
public struct ItemStatus: Hashable, Sendable {
  /// The item's path: the root as given, then the names below it, byte for
  /// byte.
  public var path: FilePath
  /// Its own marks, and the nearest marked directory above it (one below
  /// the root, by its path from the root; or one above the root).
  public var status: ExclusionStatus

  public init(path: FilePath, status: ExclusionStatus) {
    self.path = path
    self.status = status
  }
}

extension MechanismSet {
  /// The topmost items below `root` (`root` included) that one of these
  /// mechanisms excludes, as `skipbackup list` prints them: a marked
  /// directory, and nothing below it.
  ///
  /// ```swift
  /// for try await item in MechanismSet.all.excludedItems(under: "/home/me") {
  ///   print(item.path, item.marks)  // /home/me/.cache resource
  /// }
  /// ```
  ///
  /// The walk is the tool's: descriptor-relative, on every core, symbolic
  /// links never followed (not even `root`), and with `oneFileSystem` (`-x`)
  /// a mount point is seen but not entered. Items come in the order the
  /// walk's threads hand them over, as `list` prints them.
  ///
  /// The walk goes on past what it cannot read; after the last item the
  /// sequence throws one ``SkipBackupError`` that names each such path
  /// (``SkipBackupError/unreadItems``), where `list` exits with status 1.
  /// Stopping early, by `break` or by cancelling the task, stops the walk
  /// and closes its directories. At most a few thousand items wait for the
  /// loop, whatever the tree's size: the walk waits while the loop is busy.
  public func excludedItems(under root: FilePath, oneFileSystem: Bool = false) -> ExcludedItems {
    query(.success(root), oneFileSystem)
  }

  /// Every item below `root` (`root` first) and whether these mechanisms
  /// exclude it, as `skipbackup status -R` prints them.
  ///
  /// ```swift
  /// for try await entry in MechanismSet.all.statuses(under: "/home/me") {
  ///   print(entry.status.isExcluded, entry.path)  // true /home/me/.cache/a
  /// }
  /// ```
  ///
  /// Each status has the item's own marks (symbolic links and special
  /// files keep none) and the nearest marked directory above it: one the
  /// walk met, or the one above `root` (``markedAncestor(of:followSymbolicLinks:)``).
  /// The walk, its order, its failures and an early stop are those of
  /// ``excludedItems(under:oneFileSystem:)``.
  public func statuses(under root: FilePath, oneFileSystem: Bool = false) -> ItemStatuses {
    query(.success(root), oneFileSystem)
  }
}

/// The topmost excluded items below a root:
/// ``MechanismSet/excludedItems(under:oneFileSystem:)``.
public typealias ExcludedItems = TreeQueryResults<ExcludedItem>

/// Every item below a root with its state:
/// ``MechanismSet/statuses(under:oneFileSystem:)``.
public typealias ItemStatuses = TreeQueryResults<ItemStatus>

/// What a recursive query answers, ``ExcludedItems`` or ``ItemStatuses``:
/// making one does nothing, and each iteration walks the tree anew.
public struct TreeQueryResults<Element: Sendable>: AsyncSequence, Sendable {
  public typealias Failure = SkipBackupError

  let kind: TreeQuery.Kind
  /// The root, or why there is none to walk (a URL that names no file):
  /// then the iteration's one error.
  let root: Result<FilePath, SkipBackupError>
  let mechanisms: MechanismSet
  let oneFileSystem: Bool
  /// The public value of one item the walk found.
  let element: @Sendable (QueriedItem) -> Element

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(cursor: QueryCursor(kind, root, mechanisms, oneFileSystem), element: element)
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    public typealias Failure = SkipBackupError

    let cursor: QueryCursor
    let element: @Sendable (QueriedItem) -> Element

    public mutating func next(
      isolation actor: isolated (any Actor)?
    ) async throws(SkipBackupError) -> Element? {
      try await cursor.next(isolation: actor).map(element)
    }

    public mutating func next() async throws(SkipBackupError) -> Element? {
      try await next(isolation: nil)
    }
  }
}

extension MechanismSet {
  /// The query of `root` by these mechanisms that the result's type says,
  /// for a `FilePath` or a `URL`.
  func query(_ root: Result<FilePath, SkipBackupError>, _ oneFileSystem: Bool) -> ExcludedItems {
    ExcludedItems(kind: .excludedItems, root: root, mechanisms: self, oneFileSystem: oneFileSystem)
    {
      ExcludedItem(path: $0.path, marks: $0.marks)
    }
  }

  func query(_ root: Result<FilePath, SkipBackupError>, _ oneFileSystem: Bool) -> ItemStatuses {
    ItemStatuses(kind: .statuses, root: root, mechanisms: self, oneFileSystem: oneFileSystem) {
      ItemStatus(
        path: $0.path,
        status: ExclusionStatus(marks: $0.marks, inheritedFrom: $0.inheritedFrom))
    }
  }
}

/// One iteration of a tree query: its walk, started at the first
/// ``next(isolation:)``, and the batch being read. The walk ends with the
/// iteration: its `deinit` (a `break`, a thrown error, the iterator
/// dropped) stops it and waits for its threads, so every directory it
/// opened is closed when the loop is left.
final class QueryCursor {
  private let query = TreeQuery()
  private let kind: TreeQuery.Kind
  private let root: Result<FilePath, SkipBackupError>
  private let mechanisms: MechanismSet
  private let oneFileSystem: Bool
  private var started = false
  private var ended = false
  private var batch: [QueriedItem] = []
  private var index = 0

  init(
    _ kind: TreeQuery.Kind, _ root: Result<FilePath, SkipBackupError>,
    _ mechanisms: MechanismSet, _ oneFileSystem: Bool
  ) {
    self.kind = kind
    self.root = root
    self.mechanisms = mechanisms
    self.oneFileSystem = oneFileSystem
  }

  deinit { query.close() }

  /// The next item; `nil` at the end, or once the task is cancelled;
  /// throws after the last item when something could not be read.
  func next(
    isolation actor: isolated (any Actor)? = #isolation
  ) async throws(SkipBackupError) -> QueriedItem? {
    while index == batch.count {
      guard !ended else { return nil }
      if !started {
        started = true
        switch root {
        case .success(let root):
          query.start(kind, root: root, mechanisms: mechanisms, oneFileSystem: oneFileSystem)
        case .failure(let refusal):
          ended = true
          throw refusal
        }
      }
      guard let next = await query.next() else {
        ended = true
        batch = []
        index = 0
        let unread = query.unreadItems
        query.close()
        guard unread.isEmpty else {
          throw SkipBackupError(unread: unread, under: try root.get())
        }
        return nil
      }
      batch = next
      index = 0
    }
    defer { index += 1 }
    return batch[index]
  }
}
