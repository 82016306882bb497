import SkipBackupCore
import SkipBackupReport
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Watches each ROOT from before its walk until COMMAND starts, and tells
/// whether the tree changed in that time where the view would show it
/// wrongly: a directory moved between two places (the walk may list the
/// place it goes to before the move and the place it left after it, and
/// never see it: unwatched, the view shows its marked file in 244 of 512
/// runs under a rename loop, docs/performance.md), an item marked or unmarked after the walk read it, a
/// marked file linked in, the ROOT moved or marked. A change found after the
/// walk makes the run walk again; one found once the view is mounted, or on
/// the last walk, refuses the run in one line.
///
/// fanotify(7) reports each change to a directory's entries and each change
/// of an item's attributes (extended attributes, mode, owner, times), the
/// directory by its file handle and the entry by name (FAN_REPORT_DFID_NAME).
/// Root watches each filesystem the walk enters whole, with one mark
/// (FAN_MARK_FILESYSTEM), and an unlimited queue; anyone else, and root on
/// a btrfs subvolume other than the filesystem's first (fanotify_mark:
/// EXDEV), marks each directory as the walk reaches it, before it is read
/// (fanotify_init(2): an ordinary user may only mark inodes). Either way the
/// walk keeps each directory's handle (name_to_handle_at with
/// AT_HANDLE_FID, fanotify's own encoding) with its path, so an event is
/// placed with one lookup, and an event anywhere else costs nothing more.
/// Each event is then judged against the tree as it is by then, by the
/// walk's own judgement (``ViewVisitor/judge(_:type:isRoot:mechanisms:overlayNamespace:)``):
/// a file created, or a directory left, changes nothing the view shows.
///
/// What it cannot see (docs/backups.md, "What the live view promises"): a
/// nodump flag set or cleared (chattr sends no event; Linux 6.18), a mark
/// set through another hard link outside the ROOT, changes on a
/// filesystem without file handles (FUSE without them, fanotify_mark:
/// ENODEV or EOPNOTSUPP) or made on another machine (NFS), and anything
/// after COMMAND starts: the view's lower layer is the live tree.
package struct ChangeWatch: ~Copyable {
  /// How many times the ROOTs are walked, at most, before a tree that keeps
  /// changing is refused.
  package static let walks = 3

  /// The fanotify groups, one for each filesystem identity met; `nil` when
  /// nothing is watched.
  private let groups: WatchGroups?
  private let mechanisms: MechanismSet
  private let overlayNamespace: OverlayNamespaces
  private var roots: [Root] = []
  /// The real ROOTs, opened before the walk (`O_PATH`): the items events
  /// name are looked at through them, whatever is mounted on ROOT by then.
  /// ``Root/directory`` is each one's index here.
  private var rootDirectories = DescriptorList()
  /// Where each watched directory stands, by filesystem identity and file handle.
  /// Several for one directory: above two ROOTs, or above one ROOT and
  /// walked in another that holds it.
  private var places: [ByteKey: [WatchedPlace]] = [:]
  /// The walk's recorders, one for each visitor and ROOT.
  private var recorders: [WatchRecorder] = []
  /// A change found while arming: a ROOT marked since it was looked at.
  private var early: Change?
  /// The mounts at, below and above each ROOT when the watch began, before
  /// the walk; `nil` when nothing is watched or the table could not be read.
  private var mounts: [MountTable.Mount]?
  /// Each mount the walks read a directory on, by its ID in the mount
  /// table, with the ROOT and the first such directory in it. A
  /// filesystem mounted and unmounted again while the walk read it leaves
  /// the table after the walk as it was before (the torture suite's
  /// mountloop: COMMAND saw what it had covered in 1 to 4% of runs), and
  /// only its ID, gone from the table, tells.
  private var mountsMet: [CInt: (root: Int, path: [UInt8])] = [:]
  /// The unique ID of the mount on top at each point of ``mounts``: the
  /// table's IDs and device numbers are reused at once, so a filesystem
  /// unmounted and another mounted in its place leaves the table as it
  /// was (the torture suite's mountloop showed the second one's marked
  /// file in 2 to 5 runs of 400 without this look).
  private var uniqueIDs: [ByteKey: UInt64] = [:]

  private struct Root {
    let path: FilePath
    /// Its index in ``ChangeWatch/rootDirectories``; `nil` when it could not
    /// be opened (the walk then refuses it).
    let directory: Int?
    /// Watches what is found after the walk: a directory made since.
    let recorder: WatchRecorder?
    /// The excluded items the walk found.
    var hidden: [[UInt8]] = []
    /// The same, and the directories on the way to them, which the view's
    /// layer holds, as sets: made at the first event that needs them. Made
    /// at every run, those of the 200,000-file tree's 19,640 excluded
    /// files took `run -- true` from 0.85 s to 0.93 s of CPU.
    var sets: (hidden: Set<ByteKey>, merged: Set<ByteKey>)?
    /// The first reason a directory could not be watched.
    var failure: SkipBackupError?
  }

  /// A watch of nothing: `run --snapshot`'s view is of a snapshot that does
  /// not change.
  package init() {
    groups = nil
    mechanisms = []
    overlayNamespace = []
  }

  /// Starts watching the ROOTs at `paths` (canonical, in the order they
  /// are walked in), and the directories above each, where a move or a
  /// mark would change what the ROOT is.
  package init(
    watching paths: [FilePath], mechanisms: MechanismSet, privilege: MountNamespace.Privilege
  ) {
    self.mechanisms = mechanisms
    overlayNamespace = privilege.overlayNamespace
    let groups = WatchGroups(privilege)
    self.groups = groups
    for (index, path) in paths.enumerated() {
      var directory: Int?
      do {
        rootDirectories.append(try Descriptor.open(path, [.pathOnly, .directory, .noFollow]))
        directory = rootDirectories.count - 1
      } catch {
        directory = nil
      }
      let recorder = WatchRecorder(groups: groups, root: index, skipped: Self.skipped(path))
      roots.append(Root(path: path, directory: directory, recorder: recorder))
      watchAbove(path, index, WatchRecorder(groups: groups, root: index, skipped: []))
    }
    do throws(SkipBackupError) {
      let concerned = try MountTable.mounts().filter { concerns($0.place.point) }
      mounts = concerned
      uniqueIDs = Self.uniqueIDs(of: concerned)
    } catch {
      if !roots.isEmpty { roots[0].failure = error }
    }
    for index in roots.indices where early == nil && rootExcluded(index) {
      early = Change(root: index, path: [], reason: .rootExcluded)
    }
  }

  deinit {
    groups?.close()
  }

  /// The directories the view of / shows as they are, whatever they hold:
  /// what changes there is COMMAND's to see.
  private static func skipped(_ path: FilePath) -> [[UInt8]] {
    path.bytes == [UInt8(ascii: "/")] ? SystemRoot.boundBack : []
  }

  /// Watches each directory above the ROOT at `path` (its own mark, not
  /// its filesystem's: the ROOT's may be another), knowing the name that
  /// leads on to the ROOT. One it may not read (fanotify_mark asks read
  /// permission) is left out.
  private mutating func watchAbove(_ path: FilePath, _ index: Int, _ recorder: WatchRecorder) {
    let bytes = path.bytes
    let slashes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "/") }
    for (number, slash) in slashes.enumerated() {
      let end = number + 1 < slashes.count ? slashes[number + 1] : bytes.count
      let next = Array(bytes[(slash + 1)..<end])
      guard !next.isEmpty else { continue }
      let above = FilePath(bytes: slash == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<slash]))
      let place = WatchedPlace(root: index, path: [], kind: .above(next: next))
      if case .watched(let key, _) = recorder.watch(
        FileItem(path: above, followSymbolicLinks: false), as: place.kind, alone: true)
      {
        places[key, default: []].append(place)
      }
    }
  }

  // MARK: - Mounts

  /// The ROOT that a mount at `point` changes, and `point` relative to it
  /// (empty for a mount at the ROOT or above it): the ROOT's view would
  /// show a filesystem mounted there with nothing hidden, or uncover the
  /// directory below one it unmounts, which the walk never read. In the
  /// view of / the directories bound back as they are (``SystemRoot``)
  /// are COMMAND's to see.
  private func root(changedByMountAt point: [UInt8]) -> (Int, [UInt8])? {
    for (index, root) in roots.enumerated() {
      let bytes = root.path.bytes
      if let inside = path(point[...], below: bytes) {
        if bytes == [UInt8(ascii: "/")] && SystemRoot.holds(Array(inside)) { continue }
        return (index, Array(inside))
      }
      if path(bytes[...], isOrIsBelow: point) { return (index, []) }
    }
    return nil
  }

  private func concerns(_ point: [UInt8]) -> Bool { root(changedByMountAt: point) != nil }

  /// The first mount made or taken away at, below or above a ROOT since
  /// the watch began. `copied`: this process is in its own copy of the
  /// namespace by now (``MountNamespace/enter(_:)``), whose mounts have IDs
  /// of their own, and, its mounts private, one that no mount or unmount
  /// outside reaches: compared there once, before anything is mounted in
  /// it, the table stands for the rest of the run.
  package mutating func mountChange(copied: Bool) -> String? {
    guard let before = mounts, groups != nil else { return nil }
    let table: [MountTable.Mount]
    do throws(SkipBackupError) {
      table = try MountTable.mounts()
    } catch {
      return "\(Self.explainMountTable(error)); nothing was run"
    }
    let now = table.filter { concerns($0.place.point) }
    // A copy's mounts have IDs of their own: the walk's are compared in
    // the namespace the walk read.
    if !copied {
      let present = Set(table.map(\.id))
      let gone = mountsMet.filter { !present.contains(Array(String($0.key).utf8)) }
      if let (root, path) = gone.values.min(by: {
        ($0.root, $0.path.count) < ($1.root, $1.path.count)
      }) {
        return describeMountChange(Change(root: root, path: path, reason: .walkedMountGone))
      }
    }
    var change: (MountTable.Mount.Place, Change.Reason)?
    if copied {
      var left = before.map(\.place)
      for mount in now {
        if let index = left.firstIndex(of: mount.place) {
          left.remove(at: index)
        } else if change == nil {
          change = (mount.place, .mounted)
        }
      }
      if change == nil, let gone = left.first { change = (gone, .unmounted) }
    } else {
      if let new = now.first(where: { !before.contains($0) }) {
        change = (new.place, .mounted)
      } else if let gone = before.first(where: { !now.contains($0) }) {
        change = (gone.place, .unmounted)
      } else {
        let again = Self.uniqueIDs(of: now)
        if let replaced = now.first(where: {
          again[ByteKey($0.place.point)] != uniqueIDs[ByteKey($0.place.point)]
        }) {
          change = (replaced.place, .remounted)
        }
      }
    }
    guard let (place, reason) = change, let (root, inside) = root(changedByMountAt: place.point)
    else { return nil }
    return describeMountChange(
      Change(
        root: root, path: inside,
        reason: inside.isEmpty && place.point != roots[root].path.bytes
          ? .mountedAbove(FilePath(bytes: place.point)) : reason))
  }

  /// ``uniqueMountID(at:)`` at each mount's point.
  private static func uniqueIDs(of mounts: [MountTable.Mount]) -> [ByteKey: UInt64] {
    var found: [ByteKey: UInt64] = [:]
    for mount in mounts {
      found[ByteKey(mount.place.point)] = uniqueMountID(at: FilePath(bytes: mount.place.point))
    }
    return found
  }

  private func describeMountChange(_ found: Change) -> String {
    "\(describe(found)): changed while the view of "
      + "\(roots[found.root].path.escapedDescription) was being made (\(found.reason)), so it "
      + "could show what is marked there now; nothing was run: \(Self.advice)"
  }

  private static func explainMountTable(_ error: SkipBackupError) -> String {
    "\(error.path.escapedDescription): cannot read the mount table again to see whether a "
      + "filesystem was mounted or unmounted in a ROOT (\(error.call.map { "\($0)" } ?? ""): "
      + "\(error.errno?.description ?? "\(error)"))"
  }

  /// The recorder for one visitor's walk of ROOT `root`; `nil` when
  /// nothing is watched.
  package mutating func recorder(for root: Int) -> WatchRecorder? {
    guard let groups, roots.indices.contains(root) else { return nil }
    let recorder = WatchRecorder(
      groups: groups, root: root, skipped: Self.skipped(roots[root].path))
    recorders.append(recorder)
    return recorder
  }

  /// After the walk, before anything is mounted: whether the tree changed
  /// since the walk began where the view would show it wrongly, so that
  /// the ROOTs must be walked again. On the `lastWalk`, a change is
  /// reported and the run refused.
  package mutating func changedSinceWalk(lastWalk: Bool, diagnostics: Diagnostics)
    throws(ReportedFailure) -> Bool
  {
    absorb()
    if let mounted = mountChange(copied: false) {
      guard lastWalk else { return true }
      diagnostics.report(mounted)
      throw .failure
    }
    guard let change = early ?? drain() else { return false }
    guard lastWalk else { return true }
    diagnostics.report(
      "\(describe(change)): changed while \(roots[change.root].path.escapedDescription) was "
        + "walked, \(Self.walks) walks in a row (\(change.reason)); the view would not be the "
        + "tree as it is, so nothing was run: \(Self.advice)")
    throw .failure
  }

  /// What to do about a tree that changed while its view was made.
  private static let advice =
    "run again when it holds still, or use --snapshot (btrfs), whose view is one instant "
    + "of the tree; see docs/backups.md, \"What the live view promises\""

  /// Once the view is mounted, just before COMMAND starts: notes each ROOT
  /// that could not be watched, stops the watch, and then, in the last
  /// look, refuses the run when the tree changed since the look before
  /// where the view could show it wrongly. The last look reads every event
  /// queued until the watch stopped: a change made before then is seen;
  /// one made after it, in the microseconds until COMMAND's `execve`
  /// (docs/backups.md, "What the live view promises"), is COMMAND's to
  /// see, as one made after it starts. The groups are then left for
  /// `execve` to close (``WatchGroups/leaveToExec()``).
  package consuming func verify(diagnostics: Diagnostics) throws(ReportedFailure) {
    for root in roots {
      guard let failure = root.failure, let call = failure.call, let errno = failure.errno
      else { continue }
      diagnostics.note(
        "\(root.path.escapedDescription): not watched for changes while its view was made "
          + "(\(call): \(errno.description)), so a rename or a mark there in that moment may "
          + "show in the view; see docs/backups.md, \"What the live view promises\"")
    }
    groups?.stop()
    if let refusal = changeWhileMounting() {
      diagnostics.report(refusal)
      throw .failure
    }
    groups?.leaveToExec()
  }

  /// What changed since the last look while the view was being made, as
  /// the line that refuses the run; `nil` when nothing did. The view's
  /// making can fail for such a change too (a directory gone, ENOENT), and
  /// this line then says why better.
  package mutating func changeWhileMounting() -> String? {
    absorb()
    guard let change = drain() else { return nil }
    return "\(describe(change)): changed while the view of "
      + "\(roots[change.root].path.escapedDescription) was being made (\(change.reason)), "
      + "so it could show what is marked there now; nothing was run: \(Self.advice)"
  }

  private func describe(_ change: Change) -> String {
    roots[change.root].path.appending(bytes: change.path).escapedDescription
  }

  /// Takes in what the walk's recorders found.
  private mutating func absorb() {
    for recorder in recorders {
      for (key, place) in recorder.places { places[key, default: []].append(place) }
      roots[recorder.root].hidden += recorder.hidden
      for (mountID, path) in recorder.mountsMet where mountsMet[mountID] == nil {
        mountsMet[mountID] = (recorder.root, path)
      }
      if roots[recorder.root].failure == nil { roots[recorder.root].failure = recorder.failure }
    }
    recorders = []
  }

  /// ROOT `root`'s excluded items and the directories on the way to them.
  private mutating func sets(_ root: Int) -> (hidden: Set<ByteKey>, merged: Set<ByteKey>) {
    if let sets = roots[root].sets { return sets }
    var hidden: Set<ByteKey> = []
    var merged: Set<ByteKey> = []
    for path in roots[root].hidden {
      hidden.insert(ByteKey(path))
      var slash = path.startIndex
      while let next = path[slash...].firstIndex(of: UInt8(ascii: "/")) {
        merged.insert(ByteKey(Array(path[..<next])))
        slash = next + 1
      }
    }
    roots[root].sets = (hidden, merged)
    return (hidden, merged)
  }

  // MARK: - Events

  /// Reads the events queued since the last look, and judges each; the
  /// first that changed the view, if any.
  private mutating func drain() -> Change? {
    guard let groups else { return nil }
    let size = 64 * 1024
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    defer { buffer.deallocate() }
    for group in groups.handles {
      if let change = drain(group, into: buffer, size) { return change }
    }
    return nil
  }

  /// ``drain()`` of one group.
  private mutating func drain(
    _ group: WatchGroups.Handle, into buffer: UnsafeMutableRawPointer, _ size: Int
  ) -> Change? {
    while true {
      let count: Int
      do {
        count = try group.readEvents(
          into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
      } catch {
        return Change(root: 0, path: [], reason: .unreadable(error.errno ?? .ioError))
      }
      guard count > 0 else { return nil }
      for record in FanotifyRecords(UnsafeRawBufferPointer(start: buffer, count: count)) {
        switch record {
        case .overflow: return Change(root: 0, path: [], reason: .overflow)
        case .malformed: return Change(root: 0, path: [], reason: .unreadable(.ioError))
        case .event(let event):
          if let change = judge(event) { return change }
        }
      }
    }
  }

  /// One event: each directory and entry it names ("." for the directory
  /// itself) judged at every place that directory stands.
  private mutating func judge(_ event: FanotifyEvent) -> Change? {
    // A record without a name (FAN_EVENT_INFO_TYPE_DFID) is not asked for.
    for entry in event.entries where !entry.name.isEmpty {
      for place in places[ByteKey(entry.filesystem + entry.handle)] ?? [] {
        if let change = judge(place, name: entry.name, mask: event.events) { return change }
      }
    }
    return nil
  }

  private static let dot: [UInt8] = [UInt8(ascii: ".")]
  private static let tag = Array(CacheDirectoryTag.fileName.utf8)

  /// What an event on the entry `name` of the directory at `place` (or on
  /// the directory itself, ".") changed in the view, judged against the
  /// tree as it is now.
  private mutating func judge(_ place: WatchedPlace, name: [UInt8], mask: FanotifyEvents)
    -> Change?
  {
    let root = place.root
    let onItself = name == Self.dot
    switch place.kind {
    case .above(let next):
      // A mark or a CACHEDIR.TAG on a directory above excludes the ROOT
      // whole; the ROOT's own name moved or replaced makes it another.
      if onItself || name == Self.tag {
        return rootExcluded(root) ? Change(root: root, path: [], reason: .rootExcluded) : nil
      }
      if name == next, !mask.isDisjoint(with: .entryChanges) {
        return Change(root: root, path: [], reason: .rootMoved)
      }
      return nil
    case .closed(let expected):
      guard onItself || name == Self.tag else { return nil }
      return differs(root, place.path, from: expected)
    case .walked:
      if onItself || name == Self.tag {
        if place.path.isEmpty, rootExcluded(root) {
          return Change(root: root, path: [], reason: .rootExcluded)
        }
        if let change = differs(root, place.path, from: .shown) { return change }
        if onItself { return nil }
      }
      let item = place.path.isEmpty ? name : place.path + [UInt8(ascii: "/")] + name
      if root < roots.count, roots[root].recorder?.skips(item) == true { return nil }
      let sets = sets(root)
      let expected: ViewVisitor.Judgement = sets.hidden.contains(ByteKey(item)) ? .hidden : .shown
      guard mask.contains(.onDirectory) else {
        // A file created, linked or moved in, or its attributes changed:
        // marked or not as the view shows it?
        guard !mask.isDisjoint(with: [.created, .movedTo, .attributes]) else { return nil }
        return differs(root, item, from: expected)
      }
      // A directory moved in brings what it holds, which no walk read.
      if mask.contains(.movedTo) {
        return Change(root: root, path: item, reason: .directoryArrived)
      }
      if !mask.isDisjoint(with: [.created, .attributes]) {
        if let change = differs(root, item, from: expected) { return change }
      }
      if mask.contains(.created), expected == .shown, !watchMade(root, item) {
        return Change(root: root, path: item, reason: .filledDirectory)
      }
      // The layer would still hold it, and the view show it, empty.
      if !mask.isDisjoint(with: [.deleted, .movedFrom]), sets.merged.contains(ByteKey(item)) {
        return Change(root: root, path: item, reason: .mergedDirectoryGone)
      }
      return nil
    }
  }

  /// The change, if the item at `path` is now judged otherwise than
  /// `expected`; none if it is gone (an event of its going follows).
  private func differs(_ root: Int, _ path: [UInt8], from expected: ViewVisitor.Judgement)
    -> Change?
  {
    switch look(root, path) {
    case .gone: return nil
    case .unreadable(let errno): return Change(root: root, path: path, reason: .unreadable(errno))
    case .judged(let judgement) where judgement == expected: return nil
    case .judged(let judgement):
      let reason: Change.Reason =
        judgement == .hidden || expected == .hidden ? .marksChanged : .refusedItem
      return Change(root: root, path: path, reason: reason)
    }
  }

  private enum Look {
    case judged(ViewVisitor.Judgement)
    case gone
    case unreadable(Errno)
  }

  /// The walk's judgement of the item at `path` in ROOT `root` as it is
  /// now, reached from the real ROOT one name at a time, no link followed.
  private func look(_ root: Int, _ path: [UInt8]) -> Look {
    guard let directory = roots[root].directory else { return .unreadable(.badFileDescriptor) }
    let descriptor = rootDirectories[directory].rawValue
    let (mechanisms, overlayNamespace) = (self.mechanisms, self.overlayNamespace)
    do throws(SkipBackupError) {
      let judge = { (item: FileItem, isRoot: Bool) throws(SkipBackupError) -> Look in
        let status = try item.status()
        return .judged(
          try ViewVisitor.judge(
            item, type: FileType(rawValue: status.st_mode & S_IFMT), isRoot: isRoot,
            mechanisms: mechanisms, overlayNamespace: overlayNamespace))
      }
      if path.isEmpty { return try judge(Self.real(descriptor), true) }
      return try FileItem.withItem(path, below: descriptor, rootPath: roots[root].path) {
        (item) throws(SkipBackupError) in try judge(item, false)
      }
    } catch {
      switch error.errno {
      case .noSuchFileOrDirectory?, .notDirectory?, .tooManySymbolicLinkLevels?: return .gone
      default: return .unreadable(error.errno ?? .ioError)
      }
    }
  }

  /// The real ROOT by its descriptor's name in /proc, which reaches it
  /// whatever is mounted on its path.
  private static func real(_ descriptor: CInt) -> FileItem {
    FileItem(path: FilePath("/proc/self/fd/\(descriptor)"), followSymbolicLinks: true)
  }

  /// Whether the ROOT, or a directory above it, is marked now (or cannot
  /// be read: the run would then refuse it).
  private func rootExcluded(_ root: Int) -> Bool {
    guard let directory = roots[root].directory else { return false }
    do throws(SkipBackupError) {
      if !(try mechanisms.marks(on: Self.real(rootDirectories[directory].rawValue))).isEmpty {
        return true
      }
      return try mechanisms.markedAncestor(of: roots[root].path, followSymbolicLinks: false) != nil
    } catch {
      return true
    }
  }

  /// Watches the directory made at `path` since the walk; whether what it
  /// holds is known: watched by its filesystem's mark all along, or empty
  /// when its own mark was made (what came into it before would not have
  /// been seen).
  private mutating func watchMade(_ root: Int, _ path: [UInt8]) -> Bool {
    guard let recorder = roots[root].recorder, let directory = roots[root].directory else {
      return false
    }
    let place = WatchedPlace(root: root, path: path, kind: .walked)
    let descriptor = rootDirectories[directory].rawValue
    do throws(SkipBackupError) {
      return try FileItem.withItem(path, below: descriptor, rootPath: roots[root].path) {
        (item) throws(SkipBackupError) -> Bool in
        switch recorder.watch(item, as: .walked) {
        case .gone, .unchanging: return true
        case .failed: return false
        case .watched(let key, let alone):
          let walked = places[key] != nil
          places[key, default: []].append(place)
          if walked || !alone { return true }
          return try Self.isEmpty(item)
        }
      }
    } catch {
      return error.errno == .noSuchFileOrDirectory
    }
  }

  /// Whether the directory `item` holds no entry.
  private static func isEmpty(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try item.withOpenDescriptor(O_RDONLY | O_DIRECTORY) { (directory) throws(SkipBackupError) in
      switch directoryNames(directory) {
      case .success(let names): return names.isEmpty
      case .failure(let errno): throw SkipBackupError(.getdents64, errno, path: item.displayPath)
      }
    }
  }

  /// A change to the tree that the view would show wrongly.
  private struct Change {
    /// The ROOT's index, and the item's path in it.
    let root: Int
    let path: [UInt8]
    let reason: Reason

    enum Reason: CustomStringConvertible {
      case directoryArrived, marksChanged, refusedItem, filledDirectory, mergedDirectoryGone
      case rootMoved, rootExcluded, overflow
      case unreadable(Errno)
      case mounted, unmounted, remounted
      /// A filesystem the walk read was unmounted by the walk's end.
      case walkedMountGone
      case mountedAbove(FilePath)

      var description: String {
        switch self {
        case .directoryArrived: "a directory moved in, with what it holds"
        case .marksChanged: "its marks changed"
        case .refusedItem: "it became an item the view cannot show as it is"
        case .filledDirectory: "a directory made and filled before it could be watched"
        case .mergedDirectoryGone: "a directory holding excluded items moved away or was removed"
        case .rootMoved: "it was moved or replaced"
        case .rootExcluded: "it, or a directory above it, was marked"
        case .overflow: "more changes came than the kernel could queue"
        case .unreadable(let errno): "it could not be looked at again: \(errno.description)"
        case .mounted: "a filesystem was mounted on it"
        case .unmounted: "the filesystem mounted on it was unmounted"
        case .remounted: "the filesystem mounted on it was unmounted, and another mounted there"
        case .walkedMountGone: "the filesystem the walk read there was unmounted"
        case .mountedAbove(let point):
          "a filesystem was mounted or unmounted at \(point.escapedDescription), above it"
        }
      }
    }
  }
}

/// Where a watched directory stands.
package struct WatchedPlace {
  package enum Kind {
    /// A directory the walk read: its entries are watched.
    case walked
    /// A directory the view shows or hides whole, without reading it (an
    /// excluded one; with -x, a mount point): only it and its CACHEDIR.TAG
    /// count, against what the walk judged.
    case closed(ViewVisitor.Judgement)
    /// A directory above the ROOT, and the name that leads on to the ROOT.
    case above(next: [UInt8])
  }

  /// The ROOT's index, and the directory's path in it (empty above it).
  let root: Int
  let path: [UInt8]
  let kind: Kind
}

/// The fanotify groups of one watch, one for each filesystem identity
/// (statfs's `f_fsid`) met: fanotify_mark refuses (EXDEV) to mark, in one
/// group, a btrfs subvolume whose identity is not that of the group's other
/// marks on the same filesystem (the directories above a home on its own
/// subvolume are on another). Shared by the walk's threads.
package final class WatchGroups: Sendable {
  private let root: Bool
  private let state = Locked(State())

  private struct State {
    var groups: [ByteKey: Group] = [:]
    /// The watch has stopped: no mark is left, and no group is made.
    var closed = false
    /// The groups are `execve`'s to close.
    var leftToExec = false
    /// Whether this process may have a group without limits (CAP_SYS_ADMIN).
    var unlimited = true
  }

  /// One group's descriptor, which the walk's threads mark through
  /// without a lock; taken from it only under the lock, once no walk runs
  /// (``close()``, ``leaveToExec()``).
  final class Handle: @unchecked Sendable {
    private var descriptor: Descriptor

    init(_ descriptor: consuming Descriptor) { self.descriptor = descriptor }

    var number: CInt { descriptor.rawValue }

    func mark(
      _ flags: FanotifyMarkFlags, _ events: FanotifyEvents, in directory: CInt,
      _ name: UnsafePointer<CChar>?, reporting: FilePath
    ) throws(SkipBackupError) {
      try descriptor.mark(flags, events, in: directory, name, reporting: reporting)
    }

    func flushMarks(_ flags: FanotifyMarkFlags) throws(SkipBackupError) {
      try descriptor.flushMarks(flags)
    }

    func readEvents(into buffer: UnsafeMutableRawBufferPointer) throws(SkipBackupError) -> Int {
      try descriptor.readEvents(into: buffer)
    }

    /// Closes it now (the one it is swapped with ends here).
    func close() {
      var closed = Descriptor(adopting: -1, path: descriptor.path)
      swap(&closed, &descriptor)
    }

    /// Leaves it open, for `execve` to close (it is close-on-exec).
    func leaveOpen() {
      var left = Descriptor(adopting: -1, path: descriptor.path)
      swap(&left, &descriptor)
      _ = left.release()
    }
  }

  struct Group {
    let handle: Handle
    /// Whether a mark of the whole filesystem was made (`true`), refused
    /// (`false`), or not asked for yet.
    var whole: Bool?
  }

  init(_ privilege: MountNamespace.Privilege) {
    if case .root = privilege { root = true } else { root = false }
  }

  /// Every group made so far, in the order they were made.
  var handles: [Handle] {
    state.withLock { state in state.groups.values.map(\.handle).sorted { $0.number < $1.number } }
  }

  /// Stops the watch: every mark taken off (FAN_MARK_FLUSH), after which
  /// no group queues an event and none is made. What is queued stays
  /// queued: the last look reads it after this, and so sees every change
  /// made before the watch stopped (``ChangeWatch/verify(diagnostics:)``).
  ///
  /// Every group's marks are removed before any group is closed: a group
  /// closed with its marks waits while the kernel frees them
  /// (fsnotify_destroy_group), 5 to 24 ms a close on this machine while
  /// the test suite ran, and a ROOT under /dev/shm has three groups (/,
  /// /dev, /dev/shm); removed first, a run took 34 ms against 58. A flush
  /// that fails costs only that wait: the close removes the marks anyway.
  func stop() {
    state.withLock { state in
      guard !state.closed else { return }
      for group in state.groups.values {
        for kind: FanotifyMarkFlags in [[], .filesystem] { try? group.handle.flushMarks(kind) }
      }
      state.closed = true
    }
  }

  /// Stops the watch, if it has not stopped, and closes every group, but
  /// those left to `execve`.
  func close() {
    stop()
    state.withLock { state in
      guard !state.leftToExec else { return }
      for group in state.groups.values { group.handle.close() }
      state.groups = [:]
    }
  }

  /// Leaves the groups, stopped, for `execve` to close (each is
  /// close-on-exec), after its point of no return: a group's close waits
  /// for the kernel's SRCU grace period even with no mark left (22.5 ms,
  /// strace -T, Linux 6.18, FAN_MARK_FLUSH just before), and between the
  /// last look and COMMAND only `execvp` may run.
  func leaveToExec() {
    state.withLock { state in
      state.leftToExec = true
      for group in state.groups.values { group.handle.leaveOpen() }
    }
  }

  /// The group for the filesystem identity `identity`, made when first
  /// asked for, with the directory `item` on that filesystem; with
  /// `whole`, asked to watch the whole filesystem, which root may (but not
  /// a btrfs subvolume other than the filesystem's first: EXDEV; nor root
  /// without CAP_SYS_ADMIN: EPERM).
  func group(_ identity: [UInt8], whole: Bool, at item: FileItem) -> Result<Group, SkipBackupError>
  {
    state.withLock { state in
      let key = ByteKey(identity)
      var group: Group
      if let known = state.groups[key] {
        group = known
      } else {
        guard !state.closed else {
          return .failure(
            SkipBackupError(.fanotifyInit, .badFileDescriptor, path: item.displayPath))
        }
        let flags: FanotifyInitFlags = [.nonBlocking, .reportDirectoryAndName]
        // Root's queue and marks are unlimited: a filesystem mark hears the
        // whole filesystem, busy with other work or not, and an overflow
        // would only make the run walk again.
        let unlimited: FanotifyInitFlags = [.unlimitedQueue, .unlimitedMarks]
        var made: Descriptor? = nil
        do throws(SkipBackupError) {
          if root && state.unlimited {
            do throws(SkipBackupError) {
              made = try Descriptor.fanotifyGroup(
                flags.union(unlimited), eventFlags: .readOnly, for: item.displayPath)
            } catch  where error.errno == .notPermitted {
              state.unlimited = false
            }
          } else {
            state.unlimited = false
          }
          if made == nil {
            made = try Descriptor.fanotifyGroup(flags, eventFlags: .readOnly, for: item.displayPath)
          }
        } catch {
          return .failure(error)
        }
        group = Group(handle: Handle(made.take()!), whole: nil)
      }
      if whole, group.whole == nil {
        group.whole = false
        if root && state.unlimited {
          do throws(SkipBackupError) {
            try WatchRecorder.mark(
              item, in: group.handle, .filesystem, WatchRecorder.entryEvents)
            group.whole = true
          } catch
            where error.errno == .operationNotSupportedByDevice || error.errno == .notSupported
          {
            // No file handles here: no inode mark can be made either.
            state.groups[key] = group
            return .failure(error)
          } catch {}
        }
      }
      state.groups[key] = group
      return .success(group)
    }
  }
}

/// Watches, for ``ChangeWatch``, the directories one walker thread meets in
/// one ROOT, before they are read, and keeps where each stands by its file
/// handle: one for each visitor, so that a walker's calls take no lock but
/// when it meets another filesystem.
package final class WatchRecorder {
  private let groups: WatchGroups
  let root: Int
  private let skipped: [[UInt8]]
  /// The directories watched, by filesystem identity and file handle.
  private(set) var places: [(ByteKey, WatchedPlace)] = []
  /// The excluded items found.
  private(set) var hidden: [[UInt8]] = []
  /// The first reason a directory could not be watched.
  private(set) var failure: SkipBackupError?
  /// Each mount the walk read a directory on (name_to_handle_at's mount
  /// ID), and the first such directory: ``ChangeWatch`` requires each one
  /// still mounted after the walk.
  private(set) var mountsMet: [CInt: [UInt8]] = [:]
  /// How each filesystem met is watched, by mount ID; on btrfs and
  /// bcachefs, whose subvolumes share a mount but each have an identity of
  /// their own, by device number.
  private var byMount: [CInt: Filesystem] = [:]
  /// The mount ID the last call of ``watch(_:as:alone:)`` read.
  private var lastMountID: CInt?
  private var byDevice: [UInt64: Filesystem] = [:]

  private enum Filesystem {
    case watched(identity: [UInt8], group: WatchGroups.Group, subvolumes: Bool)
    case unwatched(SkipBackupError, subvolumes: Bool)

    var hasSubvolumes: Bool {
      switch self {
      case .watched(_, _, let subvolumes), .unwatched(_, let subvolumes): subvolumes
      }
    }
  }

  init(groups: WatchGroups, root: Int, skipped: [[UInt8]]) {
    self.groups = groups
    self.root = root
    self.skipped = skipped
  }

  /// Whether `path` is in a directory whose changes COMMAND sees anyway.
  func skips(_ path: [UInt8]) -> Bool {
    skipped.contains { path.starts(with: $0) && (path.count == $0.count || path[$0.count] == 0x2F) }
  }

  /// Watches the directory `item`, at `path` in the ROOT, before the walk reads it.
  package func record(_ item: FileItem, at path: [UInt8], as kind: WatchedPlace.Kind) {
    guard !skips(path) else { return }
    let watched = watch(item, as: kind)
    if let mountID = lastMountID, mountsMet[mountID] == nil { mountsMet[mountID] = path }
    if case .watched(let key, _) = watched {
      places.append((key, WatchedPlace(root: root, path: path, kind: kind)))
    }
  }

  /// Keeps the excluded item `item`, at `path`; an excluded directory is
  /// watched closed (a mark taken off it would show it).
  package func hide(_ item: FileItem, at path: [UInt8], isDirectory: Bool) {
    guard !skips(path) else { return }
    hidden.append(path)
    if isDirectory { record(item, at: path, as: .closed(.hidden)) }
  }

  enum Watched {
    /// Watched: its key, and whether by a mark of its own.
    case watched(key: ByteKey, alone: Bool)
    case gone
    /// Nothing in it can change: no watch is needed.
    case unchanging
    case failed
  }

  /// Watches the directory `item` for the events `kind` needs: by its
  /// filesystem's mark where there is one (root), else by a mark of its
  /// own, as every directory watched `alone` (above the ROOT, where the
  /// filesystem may be another, whose other events are not wanted).
  func watch(_ item: FileItem, as kind: WatchedPlace.Kind, alone: Bool = false) -> Watched {
    let follow: AtFlags = item.followsSymbolicLinks ? .symbolicLinkFollow : []
    let named = item.withAtArguments { directory, path, flags in
      Result { () throws(SkipBackupError) in
        try fileHandle(
          in: directory, path, AtFlags(rawValue: flags).intersection(.emptyPath).union(follow),
          reporting: item.displayPath)
      }
    }
    let handle: [UInt8]
    let mountID: CInt
    switch named {
    case .success(let found): (handle, mountID) = found
    case .failure(let error):
      lastMountID = nil
      return fail(error, kind)
    }
    lastMountID = mountID
    var wantsWhole = !alone
    if case .closed = kind { wantsWhole = false }
    var filesystem = byMount[mountID]
    if filesystem == nil || filesystem!.hasSubvolumes {
      // A subvolume shares its filesystem's mount: its device tells it.
      let status: stat
      do throws(SkipBackupError) {
        status = try item.status()
      } catch {
        return fail(error, kind)
      }
      // btrfs's stand-in for a subvolume that was nested in the one a
      // snapshot was taken of (inode 2, BTRFS_EMPTY_SUBVOL_DIR_OBJECTID in
      // linux/btrfs_tree.h; never the first directory of its mount): an
      // empty directory in which nothing can be made, even by root
      // (EPERM). fanotify refuses to mark it (EXDEV: its device is not its
      // subvolume's), which left unwatched every tree holding a snapshot
      // of a tree with a nested subvolume (snapper's .snapshots, say).
      if filesystem?.hasSubvolumes == true, status.st_ino == 2 { return .unchanging }
      let device = UInt64(status.st_dev)
      filesystem = byDevice[device] ?? examine(item, whole: wantsWhole)
      byDevice[device] = filesystem
      if byMount[mountID] == nil { byMount[mountID] = filesystem }
    }
    guard case .watched(let identity, var group, _) = filesystem! else {
      if case .unwatched(let error, _) = filesystem! { return fail(error, kind) }
      return .failed
    }
    // A filesystem first met above the ROOT is asked for its whole mark
    // when a walked directory is on it.
    if wantsWhole && group.whole == nil {
      switch groups.group(identity, whole: true, at: item) {
      case .success(let asked): group = asked
      case .failure(let error): return fail(error, kind)
      }
      let updated = Filesystem.watched(
        identity: identity, group: group, subvolumes: filesystem!.hasSubvolumes)
      byMount[mountID] = byMount[mountID].map { _ in updated }
      byDevice = byDevice.mapValues { existing in
        if case .watched(let known, _, _) = existing, known == identity { return updated }
        return existing
      }
    }
    let byInode = !wantsWhole || group.whole != true
    if byInode {
      do throws(SkipBackupError) {
        try Self.mark(item, in: group.handle, .onlyDirectory, Self.mask(kind))
      } catch {
        return fail(error, kind)
      }
    }
    // struct file_handle: handle_bytes, handle_type, f_handle.
    let length = Int(handle.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
    return .watched(key: ByteKey(identity + handle[4..<(8 + length)]), alone: byInode)
  }

  /// Adds a mark of `kind` (FAN_MARK_FILESYSTEM, or FAN_MARK_ONLYDIR for
  /// the directory itself) for the events `mask` at `item` to `group`.
  static func mark(
    _ item: FileItem, in group: WatchGroups.Handle, _ kind: FanotifyMarkFlags,
    _ mask: FanotifyEvents
  ) throws(SkipBackupError) {
    let flags = kind.union(.add).union(item.followsSymbolicLinks ? [] : .dontFollow)
    try item.withAtArguments { directory, path, atFlags in
      Result { () throws(SkipBackupError) in
        try group.mark(
          flags, mask, in: directory,
          AtFlags(rawValue: atFlags).contains(.emptyPath) ? nil : path,
          reporting: item.displayPath)
      }
    }.get()
  }

  /// A directory's entries made, removed and moved, and attributes
  /// changed, its own and its subdirectories' (which fanotify reports on
  /// the subdirectory itself, as "."), directories included.
  static let entryEvents: FanotifyEvents = FanotifyEvents.entryChanges.union([
    .attributes, .onDirectory,
  ])

  /// The events each kind of directory is watched for by a mark of its own.
  private static func mask(_ kind: WatchedPlace.Kind) -> FanotifyEvents {
    switch kind {
    // Its files' attributes too (FAN_EVENT_ON_CHILD).
    case .walked: entryEvents.union(.onChildren)
    // Its own attributes only: what an excluded directory holds may churn
    // (a build in node_modules) and would fill an ordinary user's queue.
    case .closed: [.attributes, .onDirectory]
    case .above: entryEvents
    }
  }

  /// btrfs's and bcachefs's `f_type` (<linux/magic.h>): filesystems whose
  /// subvolumes each have an identity of their own in one mount.
  private static let subvolumeFilesystems: Set<Int64> = [0x9123_683E, 0xCA45_1A4E]

  /// The identity of the filesystem holding the directory `item`, and its
  /// group, asked to watch it `whole` (fanotify_mark with
  /// FAN_MARK_FILESYSTEM) when root may; not watched at all without file
  /// handles (ENODEV, EOPNOTSUPP: FUSE, say).
  private func examine(_ item: FileItem, whole: Bool) -> Filesystem {
    let examined: (identity: [UInt8], type: Int64)
    do throws(SkipBackupError) {
      examined = try item.withOpenDescriptor(OpenFlags([.pathOnly, .directory]).rawValue) {
        (descriptor) throws(SkipBackupError) in
        switch FilesystemFlag.identity(of: descriptor) {
        case .success(let examined): return examined
        case .failure(let errno): throw SkipBackupError(.fstatfs, errno, path: item.displayPath)
        }
      }
    } catch {
      return .unwatched(error, subvolumes: false)
    }
    let subvolumes = Self.subvolumeFilesystems.contains(examined.type)
    switch groups.group(examined.identity, whole: whole, at: item) {
    case .success(let group):
      return .watched(identity: examined.identity, group: group, subvolumes: subvolumes)
    case .failure(let error):
      return .unwatched(error, subvolumes: subvolumes)
    }
  }

  /// Keeps the first failure to watch a directory of the ROOT; a directory
  /// gone meanwhile is no failure (its going is an event), nor one above
  /// the ROOT that cannot be watched.
  private func fail(_ error: SkipBackupError, _ kind: WatchedPlace.Kind) -> Watched {
    switch error.errno {
    case .noSuchFileOrDirectory?, .notDirectory?, .tooManySymbolicLinkLevels?: return .gone
    default: break
    }
    if case .above = kind { return .failed }
    if failure == nil { failure = error }
    return .failed
  }
}

/// Bytes as a set's or a dictionary's key, hashed as one block: `[UInt8]`'s
/// own hashing feeds the hasher one byte at a time.
struct ByteKey: Hashable {
  let bytes: [UInt8]

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  func hash(into hasher: inout Hasher) {
    bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
  }
}
