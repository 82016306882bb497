import SkipBackupCore
import SkipBackupReport
import SkipBackupSweep
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `run`: walks each ROOT (or its btrfs snapshot), then, in a private mount
/// namespace, mounts at each ROOT a read-only view without what is marked,
/// and becomes COMMAND.
package struct ViewRun: Sendable, Equatable {
  /// The directories the view filters, as given.
  package var roots: [FilePath]
  /// COMMAND and its arguments, as bytes.
  package var command: [[UInt8]]
  package var mechanisms: MechanismSet
  /// Leave filesystems mounted below each ROOT out (`-x`): each shows as the
  /// empty directory it is mounted on.
  package var oneFileSystem = false
  /// Run the sweep on each ROOT first (`--sweep`).
  package var sweepFirst = false
  /// Show COMMAND a read-only btrfs snapshot of each ROOT (`--snapshot`).
  package var snapshot = false
  /// Show no progress line (`-q`).
  package var quiet = false
  /// The options of COMMAND (each with its `=`) whose value names the
  /// tool's own state, kept real (``StateArguments``): `run --for deja-dup`.
  package var stateOptions: [[UInt8]] = []
  /// Directories COMMAND reads as they are though a mark above them hides
  /// what holds them (``ViewRoot/keptReal``): `run --for deja-dup`.
  package var keptReal: [FilePath] = []
  /// Where the diagnostics go; COMMAND gets the process's own streams.
  package var streams: Streams = .standard

  package init(
    roots: [FilePath], command: [[UInt8]], mechanisms: MechanismSet, oneFileSystem: Bool = false,
    sweepFirst: Bool = false, snapshot: Bool = false, quiet: Bool = false,
    streams: Streams = .standard
  ) {
    self.roots = roots
    self.command = command
    self.mechanisms = mechanisms
    self.oneFileSystem = oneFileSystem
    self.sweepFirst = sweepFirst
    self.snapshot = snapshot
    self.quiet = quiet
    self.streams = streams
  }

  package func run() throws(ReportedFailure) {
    // A live tree that changed while it was walked, where the view would
    // show it wrongly, is walked again from the start (``ChangeWatch``).
    // The last walk refuses a change rather than return it.
    var number = 1
    while true {
      switch try attempt(number) {
      case .changedDuringWalk: number += 1
      }
    }
  }

  /// How an attempt ended that did not end the run.
  private enum Attempt {
    /// The tree changed while it was walked: walk it again.
    case changedDuringWalk
  }

  /// One walk of the ROOTs and, when the tree held still, the view and
  /// COMMAND, which replaces this process; `number` counts the walks.
  private func attempt(_ number: Int) throws(ReportedFailure) -> Attempt {
    let mechanisms = mechanisms
    let privilege = MountNamespace.Privilege.current
    let run = WalkRun(streams: streams, showsProgress: !quiet) { diagnostics, progress in
      ViewVisitor(
        mechanisms: mechanisms, privilege: privilege,
        reporter: Reporter(diagnostics: diagnostics, progress: progress))
    }
    let diagnostics = run.diagnostics
    let workingDirectory = CommandLaunch.workingDirectory()

    if sweepFirst && number == 1 { try sweep(diagnostics) }

    var viewRoots: [ViewRoot] = []
    for given in roots {
      guard let root = prepare(given, mechanisms, diagnostics) else { continue }
      if !viewRoots.contains(where: { $0.path == root.path }) { viewRoots.append(root) }
    }
    if diagnostics.failures > 0 { throw .failure }
    // A snapshot holds no mount for the overlay to cover.
    if case .user = privilege, !snapshot { refuseCoveredMounts(viewRoots, diagnostics) }
    if diagnostics.failures > 0 { throw .failure }

    // The snapshots, once the sweep has marked what it marks: from here on
    // each ROOT is read in its snapshot.
    var hiddenSubvolumes: [FilePath] = []
    // From the first snapshot until the supervisor has them, TERM, INT,
    // HUP and QUIT delete them and end the run (``SetupSignals``).
    let signals: SetupSignals?
    do throws(SkipBackupError) {
      signals = snapshot ? try SetupSignals() : nil
    } catch {
      diagnostics.report(error)
      throw .failure
    }
    let snapshots =
      try signals.map { signals throws(ReportedFailure) in
        try takeSnapshots(&viewRoots, hidden: &hiddenSubvolumes, signals, diagnostics)
      }
    // Until the supervisor has them, which deletes them after COMMAND, a
    // refusal or a walk that fails deletes them here: nothing is left for
    // the next run to clean up.
    var supervised = false
    defer {
      if !supervised, let snapshots {
        signals?.deleting(snapshots) { $0.delete(diagnostics) }
      }
    }
    // A snapshot does not change; a live ROOT is watched from before its
    // walk until COMMAND starts.
    var watch =
      snapshot
      ? ChangeWatch()
      : ChangeWatch(watching: viewRoots.map(\.path), mechanisms: mechanisms, privilege: privilege)

    // The ROOTs whose walk may have left the snapshot's files unlooked at.
    var unwarmed: [SnapshotWarming.Root] = []
    for index in viewRoots.indices {
      for visitor in run.visitors {
        visitor.inodes = snapshots?.inodes(of: index)
        visitor.watch = watch.recorder(for: index)
        visitor.rootLength = viewRoots[index].real.bytes.count
        visitor.reporter.shownRoot =
          snapshots == nil ? nil : (viewRoots[index].real.bytes, viewRoots[index].pathBytes)
        visitor.hidden = []
        visitor.otherFilesystems = []
        visitor.pruned = viewRoots[index].isSystemRoot ? SystemRoot.kernels : []
      }
      run.walk(
        viewRoots[index].real,
        options: TreeWalkOptions(
          oneFileSystem: oneFileSystem, rootDirectory: snapshots?.directory(of: index)))
      let spared = run.visitors.contains { $0.inodes?.spared == true }
      // Sorted, and once each: an entry that vanished and came back is
      // visited again at the end of the walk.
      var found = run.visitors.flatMap(\.hidden)
      // A marked subvolume nested in this ROOT, held empty by its snapshot.
      for subvolume in hiddenSubvolumes
      where viewRoots.indices.last(where: {
        path(subvolume.bytes[...], below: viewRoots[$0].pathBytes) != nil
      }) == index {
        found.append(Array(path(subvolume.bytes[...], below: viewRoots[index].pathBytes)!))
      }
      // A subvolume's root shows no snapshot directory, nor anything marked in it.
      if let ours = snapshots?.hiddenAtRoot(of: index), !ours.isEmpty {
        // What is hidden below the user's is hidden with it (another
        // user's is marked, and a walk hides it whole).
        found = found.map {
          let first = Array($0.split(separator: 0x2F, maxSplits: 1).first ?? [])
          return ours.contains(first) ? first : $0
        }
        found += ours
      }
      let hidden = ViewPlan.hidden(found)
      viewRoots[index].hidden = hidden
      viewRoots[index].emptied = ViewPlan.emptied(
        run.visitors.flatMap(\.otherFilesystems), hidden: hidden)
      if spared {
        unwarmed.append(
          SnapshotWarming.Root(
            path: viewRoots[index].real, hidden: hidden,
            directory: snapshots?.directory(of: index)))
      }
    }
    for kept in keptReal { keep(kept, in: &viewRoots) }
    // A directory that could not be read may hold marks: the view would not be exact.
    let denied = run.visitors.map(\.denied).reduce(0, +)
    if denied > 0 {
      diagnostics.report(
        "nothing was run: \(denied == 1 ? "the item above" : "the \(denied) items above") could "
          + "not be read, and may hold a marked item the view could not hide; make "
          + "\(denied == 1 ? "it" : "them") readable to you (chmod, or an ACL), or run as root")
    }
    try run.finish()
    // COMMAND gets /run and /tmp as they are when ROOT is /: a mark the
    // walk found there could not be honoured. One line each, which may
    // stand for thousands of items.
    for root in viewRoots where root.isSystemRoot {
      for directory in SystemRoot.boundBack {
        let inside = root.hidden.filter { path($0[...], isOrIsBelow: directory) }
        guard let first = inside.first else { continue }
        let name = root.path.appending(bytes: directory).escapedDescription
        let item = root.path.appending(bytes: first).escapedDescription
        let items = inside.count == 1 ? "an item" : "\(inside.count) items"
        let which = inside.count == 1 ? item : "the first: \(item)"
        diagnostics.report(
          "\(name): holds \(items) excluded from backups (\(which)); with ROOT /, COMMAND "
            + "gets \(name) as it is (bound back, as /proc, /sys, /dev, /run and /tmp are, for "
            + "its sockets, locks and temporary files), so the view would show them: remove "
            + "them or their marks, or give the directories below / as ROOTs; nothing was run")
      }
    }
    // A ROOT's view is mounted before the view of a ROOT inside it.
    let live = snapshots == nil && !oneFileSystem
    var examined: Set<FilePath> = []
    if live { viewRoots = addNestedSubvolumes(viewRoots, examined: &examined, diagnostics) }
    viewRoots = addMountPoints(viewRoots, snapshots: snapshots, diagnostics)
    // And those below a filesystem mounted in a ROOT, now a view of its own
    // (a user's subvolumes in /home, mounted from @home, below ROOT /).
    if live { viewRoots = addNestedSubvolumes(viewRoots, examined: &examined, diagnostics) }
    let plan = ViewPlan(viewRoots)
    // A ROOT below a directory another ROOT's view shows empty (-x) has no
    // place to be mounted in it.
    for placeless in plan.placeless {
      diagnostics.report(
        "\(placeless.inner.escapedDescription): is inside "
          + "\(placeless.outer.appending(bytes: placeless.emptied).escapedDescription), where "
          + "another filesystem begins, which -x shows as the empty directory list -x lists for "
          + "\(placeless.outer.escapedDescription); give it in a run of its own, or run without "
          + "-x; nothing was run")
    }
    if diagnostics.failures > 0 { throw .failure }
    if try watch.changedSinceWalk(lastWalk: number >= ChangeWatch.walks, diagnostics: diagnostics) {
      return .changedDuringWalk
    }

    if let snapshots, let signals {
      try superviseCommand(deleting: snapshots, warming: unwarmed, signals, diagnostics)
      // COMMAND's process, from here on: the supervisor deletes them.
      supervised = true
    }

    // The namespace first, on its own: its failures have reasons of their
    // own (a write to /proc/self/uid_map refused is the kernel's policy).
    do throws(SkipBackupError) {
      try MountNamespace.enter(privilege)
    } catch {
      diagnostics.report(Self.explainNamespace(error))
      throw .failure
    }
    // A mount or unmount in a ROOT up to the moment the namespace became
    // this run's own; none outside reaches it after that.
    if let refusal = watch.mountChange(copied: true) {
      diagnostics.report(refusal)
      throw .failure
    }
    let passedState: [[UInt8]]
    do throws(SkipBackupError) {
      // The tool's state, opened before anything is mounted over it.
      passedState = try StateArguments.pass(
        command, options: stateOptions, roots: plan.views.map(\.path))
      try ViewMounter.mount(plan, snapshots: snapshots, privilege: privilege)
      if let workingDirectory { try CommandLaunch.enter(workingDirectory) }
    } catch {
      // The view's making can fail for a change to the tree (a directory
      // gone: ENOENT), which the watch then says better.
      diagnostics.report(watch.changeWhileMounting() ?? Self.explain(error))
      throw .failure
    }
    let arguments = CommandLaunch.Arguments(passedState)
    try watch.verify(diagnostics: diagnostics)
    throw ReportedFailure(status: CommandLaunch.exec(arguments, diagnostics: diagnostics))
  }

  /// Shows `kept` as it really is, where a hidden directory above it (or
  /// `kept` itself) would hide it: that one and each directory down to
  /// `kept` become empty opaque directories in the layer, and `kept` is
  /// bound over the last. Nothing else of them shows.
  private func keep(_ kept: FilePath, in roots: inout [ViewRoot]) {
    guard let (owner, inside) = ViewPlan.owner(of: kept.bytes, in: roots),
      let above = roots[owner].hidden.first(where: { path(inside, isOrIsBelow: $0) })
    else { return }
    roots[owner].hidden.removeAll { $0 == above }
    var directory = above
    var emptied = [above]
    for name in inside.dropFirst(above.count).split(separator: UInt8(ascii: "/")) {
      directory += [UInt8(ascii: "/")] + name
      emptied.append(directory)
    }
    roots[owner].emptied = (roots[owner].emptied + emptied).sorted {
      $0.lexicographicallyPrecedes($1)
    }
    roots[owner].keptReal.append(Array(inside))
  }

  /// Takes the snapshots of the ROOTs' subvolumes (``SnapshotSet``), and
  /// points each ROOT's view at its snapshot.
  ///
  /// Without -x, a subvolume nested below a ROOT is frozen too, as a ROOT
  /// of its own whose view is mounted inside the ROOT's: the live view
  /// shows it whole, and the ROOT's snapshot holds it empty. With -x it
  /// stays the empty directory `list -x` lists. Either way one that is
  /// marked (its mark is on its own root, which the snapshot does not
  /// hold) is added to `hidden`, to be hidden from the view it is in, and
  /// one below a marked directory is left to the walk, which hides that.
  /// Those inside `.skipbackup-snapshots` are other runs' snapshots.
  private func takeSnapshots(
    _ roots: inout [ViewRoot], hidden: inout [FilePath], _ signals: SetupSignals,
    _ diagnostics: Diagnostics
  ) throws(ReportedFailure) -> SnapshotSet {
    do throws(SkipBackupError) {
      // Each ROOT judged before anything is taken (``SnapshotProvider/explain(_:)``).
      var listed: [SnapshotFacts] = []
      for root in roots {
        let facts = try SnapshotProvider.facts(
          of: root.path, privilege: .current, listingNested: .listed(skippingUnreachable: false))
        if case .refused(let refusal) = SnapshotProvider.explain(facts) {
          throw SkipBackupError(refusing: refusal, path: root.path)
        }
        listed.append(facts)
      }
      var requests = roots.map { SnapshotRequest($0.path) }
      for facts in listed {
        var seen: [FilePath] = []
        for nested in facts.nested {
          let isBelowSeen = seen.contains { path(nested.path.bytes[...], below: $0.bytes) != nil }
          seen.append(nested.path)
          guard !(oneFileSystem && isBelowSeen), !roots.contains(where: { $0.path == nested.path }),
            !hidden.contains(where: { path(nested.path.bytes[...], isOrIsBelow: $0.bytes) }),
            try mechanisms.markedAncestor(of: nested.path, followSymbolicLinks: false) == nil
          else { continue }
          // Its marks read from the subvolume its ID names, reached once,
          // not from whatever its path leads to (``SnapshotSet`` resolves
          // it once more and confirms the ID again, and judges whether it
          // can be frozen).
          let resolved = try ResolvedDirectory.open(
            nested.path, checkingTransitions: MountNamespace.Privilege.current.isRoot,
            isGiven: false)
          guard try resolved.descriptor.subvolumeIdentity().id == nested.id else {
            throw SkipBackupError(refusing: .changedOnTheWay, path: nested.path)
          }
          let item = FileItem(
            descriptor: FileDescriptor(rawValue: resolved.descriptor.rawValue),
            displayPath: nested.path)
          if try !mechanisms.marks(on: item).isEmpty {
            hidden.append(nested.path)
          } else if !oneFileSystem {
            roots.append(ViewRoot(path: nested.path, hidden: []))
            requests.append(SnapshotRequest(nested.path, subvolumeID: nested.id))
          }
        }
      }
      let snapshots = try signals.taking { () throws(SkipBackupError) in
        try SnapshotSet(requests, privilege: .current)
      }
      for (index, frozen) in snapshots.roots.enumerated() { roots[index].real = frozen.real }
      return snapshots
    } catch {
      diagnostics.report(SnapshotProvider.explain(error))
      throw .failure
    }
  }

  /// With snapshots, COMMAND runs as a child (``SupervisedCommand``), and
  /// this process deletes the snapshots when it ends and then ends as it
  /// did; this returns only in the child, which goes on to make the view
  /// and become COMMAND.
  private func superviseCommand(
    deleting snapshots: SnapshotSet, warming roots: [SnapshotWarming.Root],
    _ signals: SetupSignals, _ diagnostics: Diagnostics
  ) throws(ReportedFailure) {
    do throws(SkipBackupError) {
      switch try SupervisedCommand.fork(restoring: signals.handOver()) {
      case .supervisor(let pid):
        let warming = SnapshotWarming(roots: roots)
        let status = SupervisedCommand.wait(for: pid)
        _ = warming.finish()
        snapshots.delete(diagnostics)
        SupervisedCommand.end(as: status)
      case .command:
        try snapshots.holdForCommand()
      }
    } catch {
      diagnostics.report(SnapshotProvider.explain(error))
      throw .failure
    }
  }

  /// Runs `skipbackup sweep` on the ROOTs, its report on standard error:
  /// standard output is COMMAND's alone (`run --sweep ~ -- tar -cf - ~`).
  private func sweep(_ diagnostics: Diagnostics) throws(ReportedFailure) {
    let onError: StandardOutputOnError
    do throws(SkipBackupError) {
      onError = try StandardOutputOnError()
    } catch {
      let detail = error.call.map { "\($0): " } ?? ""
      diagnostics.report(
        "standard output: cannot be set aside for the sweep's report (\(detail)\(error.reason)); "
          + "nothing was run")
      throw .failure
    }
    // A sweep that fails on some items has reported them; the view still
    // shows exactly the marks there are.
    do {
      try SweepRun(roots: roots, oneFileSystem: oneFileSystem, quiet: quiet, streams: streams).run()
    } catch  where error == .failure {}
    // Standard output back for COMMAND, after the sweep and not before.
    _ = consume onError
  }

  /// The ROOT as the view is mounted at it: its canonical path, which must
  /// be a directory that is neither excluded nor below a marked one.
  private func prepare(_ given: FilePath, _ mechanisms: MechanismSet, _ diagnostics: Diagnostics)
    -> ViewRoot?
  {
    let path: FilePath
    if MountNamespace.Privilege.current.isRoot {
      // Root's view must go over the directory the path leads to when
      // COMMAND reads it: resolved safely, by descriptor.
      do throws(SkipBackupError) {
        path = try ResolvedDirectory.canonicalPath(of: given, checkingTransitions: true)
      } catch {
        diagnostics.report(error)
        return nil
      }
    } else if let canonical = canonicalPath(given.bytes) {
      path = FilePath(bytes: canonical)
    } else {
      do throws(SkipBackupError) {
        _ = try FileItem(path: given).status()
        diagnostics.report("\(given.escapedDescription): cannot be resolved to a canonical path")
      } catch {
        diagnostics.report(error)
      }
      return nil
    }
    do throws(SkipBackupError) {
      let status = try FileItem(path: path, followSymbolicLinks: false).status()
      guard status.st_mode & S_IFMT == S_IFDIR else {
        diagnostics.report(
          "\(given.escapedDescription): not a directory: the view is mounted on a directory")
        return nil
      }
      let marks = try mechanisms.marks(on: FileItem(path: path, followSymbolicLinks: false))
      if !marks.isEmpty {
        diagnostics.report(
          "\(given.escapedDescription): excluded from backups as a whole (marked: "
            + "\(marks.names.joined(separator: ", "))), so its view would be empty; nothing was run"
        )
        return nil
      }
      if let above = try mechanisms.markedAncestor(of: path, followSymbolicLinks: false) {
        diagnostics.report(
          "\(given.escapedDescription): excluded from backups as a whole (below the marked "
            + "directory \(above.escapedDescription)), so its view would be empty; nothing was run")
        return nil
      }
    } catch {
      diagnostics.report(error)
      return nil
    }
    return ViewRoot(path: path, hidden: [])
  }

  /// The overlay shows a directory's own contents, never what is mounted
  /// below it, so each mount point inside a ROOT's view (not inside an
  /// excluded item) is shown as `list` reads it:
  ///
  /// - a directory, without -x: a view of its own, with the marks the walk
  ///   found in it (the walk, as list's, entered it), mounted over the
  ///   ROOT's;
  /// - a directory, with -x: the empty directory list -x lists (an opaque
  ///   directory in the layer, with the mounted root's metadata, as `stat`
  ///   shows it to users; the walk stopped there and named it), except a
  ///   directory bind-mounted from the ROOT's own filesystem, which list -x
  ///   enters, and which is refused;
  /// - a file mounted on a file: the mounted file, bound over the view
  ///   (the walk read its marks, and hid it if it is marked);
  /// - in the view of /, /proc, /sys, /dev, /run, /tmp and what is mounted
  ///   below them: bound back as they are (``SystemRoot``).
  ///
  /// A snapshot (`snapshots`) holds no mount, but it does hold what a mount
  /// hides from users: the entries of the directory below it, the file
  /// below a mounted file. So there a directory mount point is the empty
  /// directory, with -x or without (the filesystem mounted there is not
  /// frozen; give it as a ROOT of its own), and a mounted file is bound
  /// over the view as it is now, its marks read now, since the walk read
  /// the file below it.
  ///
  /// Returns every view to mount, a ROOT before the views inside it.
  private func addMountPoints(
    _ given: [ViewRoot], snapshots: SnapshotSet?, _ diagnostics: Diagnostics
  ) -> [ViewRoot] {
    let frozen = snapshots != nil
    let points: [[UInt8]]
    do throws(SkipBackupError) {
      points = try MountTable.mountPoints()
    } catch {
      diagnostics.report(error)
      return given
    }
    var roots = given
    // With -x no view is added, so each ROOT's device is looked up once.
    let devices =
      oneFileSystem && !frozen
      ? roots.map { try? FileItem(path: $0.path, followSymbolicLinks: false).status().st_dev } : []
    var seen: Set<[UInt8]> = []
    for point in points.sorted(by: { $0.count < $1.count }) where seen.insert(point).inserted {
      if roots.contains(where: { $0.pathBytes == point }) { continue }
      // The deepest view the mount point is in. In a snapshot, what the
      // walk hid there is what lies below the mount, judged again below.
      guard let (owner, inside) = ViewPlan.showing(point, in: roots, frozen: frozen) else {
        continue
      }
      let mountPoint = FilePath(bytes: point)
      guard let inner = try? FileItem(path: mountPoint, followSymbolicLinks: false).status()
      else { continue }
      if let snapshots {
        // The ROOTs and subvolumes frozen are the first views, in the
        // order of the snapshots' roots; none is added before this.
        let below = try? snapshots.status(of: Array(inside), in: owner)
        freeze(mountPoint, Array(inside), of: inner, over: below, in: &roots[owner], diagnostics)
        continue
      }
      let mounted: ViewPlan.Mounted =
        inner.st_mode & S_IFMT == S_IFDIR
        ? .directory(sameFilesystem: oneFileSystem && inner.st_dev == devices[owner]) : .file
      guard
        ViewPlan.add(
          mounted, at: mountPoint, inside: inside, of: owner, to: &roots,
          oneFileSystem: oneFileSystem)
      else {
        diagnostics.report(
          "\(mountPoint.escapedDescription): a directory bind-mounted from "
            + "\(roots[owner].path.escapedDescription)'s own filesystem, which list -x enters "
            + "and the view cannot show; give it as a ROOT of its own; nothing was run")
        continue
      }
    }
    return roots
  }

  /// Gives each btrfs subvolume nested below a live ROOT a view of its
  /// own, mounted inside the ROOT's, as a filesystem mounted there gets.
  /// One overlay reads every subvolume of a filesystem as one layer, and
  /// btrfs numbers each subvolume's inodes from 257 alike, so in one view a
  /// file of a nested subvolume had the device and inode number of a file
  /// outside it, and tar, borg, restic and rsync -H stored the one as a
  /// hard link to the other, restoring the wrong contents. In a view of its
  /// own its device is its own, as on the real tree. What the walk hid in
  /// it moves to its view; a marked one, or one below a marked directory,
  /// stays hidden. (With -x each is the empty directory `list -x` lists;
  /// under --snapshot each is a snapshot of its own.)
  /// A ROOT `examined` holds was looked at by an earlier call: looked at
  /// again, a failure would be reported twice.
  private func addNestedSubvolumes(
    _ given: [ViewRoot], examined: inout Set<FilePath>, _ diagnostics: Diagnostics
  ) -> [ViewRoot] {
    var roots = given
    for root in given where examined.insert(root.path).inserted {
      let nested: [FilePath]
      do throws(SkipBackupError) {
        nested = try SnapshotProvider.nestedSubvolumes(below: root.path)
      } catch {
        diagnostics.report(error)
        continue
      }
      for subvolume in nested where !roots.contains(where: { $0.path == subvolume }) {
        guard let (owner, inside) = ViewPlan.showing(subvolume.bytes, in: roots) else { continue }
        ViewPlan.split(&roots, owner, at: inside, as: subvolume)
      }
    }
    return roots
  }

  /// The mount point `mountPoint` (`inside` its ROOT's view `root`, which
  /// reads a snapshot, where the item below it has status `below`, `nil`
  /// when there is none), whose mounted root has status `inner`, as the view
  /// of the snapshot shows it: hidden when what is mounted there is
  /// marked; else an empty directory, or the mounted file bound over.
  /// Nothing when the snapshot holds no item of that kind there (the path
  /// to it crosses a subvolume nested in the ROOT's, which the snapshot
  /// holds empty).
  private func freeze(
    _ mountPoint: FilePath, _ inside: [UInt8], of inner: stat, over below: stat?,
    in root: inout ViewRoot, _ diagnostics: Diagnostics
  ) {
    let isDirectory = inner.st_mode & S_IFMT == S_IFDIR
    guard let below, (below.st_mode & S_IFMT == S_IFDIR) == isDirectory else { return }
    let judgement: ViewVisitor.Judgement
    do throws(SkipBackupError) {
      judgement = try ViewVisitor.judge(
        FileItem(path: mountPoint, followSymbolicLinks: false),
        type: FileType(rawValue: inner.st_mode & S_IFMT),
        isRoot: false, mechanisms: mechanisms,
        overlayNamespace: MountNamespace.Privilege.current.overlayNamespace)
    } catch {
      diagnostics.report(error)
      return
    }
    if judgement == .hidden {
      if !root.hidden.contains(inside) {
        root.hidden.append(inside)
        root.hidden.sort { $0.lexicographicallyPrecedes($1) }
      }
      return
    }
    root.hidden.removeAll { $0 == inside }
    if isDirectory {
      root.emptied.append(inside)
    } else {
      root.fileMounts.append(inside)
    }
  }

  /// Refuses, before the walk, each ROOT with a filesystem mounted below
  /// it when the view is made in a user namespace: overlayfs clones its
  /// lower layer privately, and the kernel clones no directory that covers
  /// a mount inherited from another user namespace (clone_private_mount:
  /// has_locked_children, EINVAL; every mount is inherited so). What the
  /// mount hides is not the user's to see, with -x or without.
  private func refuseCoveredMounts(_ roots: [ViewRoot], _ diagnostics: Diagnostics) {
    let points: [[UInt8]]
    do throws(SkipBackupError) {
      points = try MountTable.mountPoints()
    } catch {
      diagnostics.report(error)
      return
    }
    for root in roots {
      guard
        let point = points.filter({ path($0[...], below: root.pathBytes) != nil })
          .min(by: { $0.count < $1.count })
      else { continue }
      diagnostics.report(
        "\(root.path.escapedDescription): a filesystem is mounted below it, at "
          + "\(FilePath(bytes: point).escapedDescription), and the kernel lets no overlay made "
          + "by an ordinary user cover a mount, with -x or without (overlayfs: \"failed to "
          + "clone lowerpath\"): run as root, give the directories beside the mount as "
          + "ROOTs, or, on a btrfs subvolume of yours, add --snapshot, whose view covers no "
          + "mount; nothing was run")
    }
  }

  /// One line: what failed, and why, when the private namespace (and, for
  /// an ordinary user, the user namespace that maps them) cannot be made.
  package static func explainNamespace(_ error: SkipBackupError) -> String {
    guard let call = error.call, let errno = error.errno else { return error.description }
    let detail = "(\(call): \(errno.description))"
    switch (call, errno) {
    case (.unshare, .notPermitted), (.unshare, .noSpace):
      return
        MountNamespace.Privilege.current.isRoot
        ? "cannot make a private mount namespace: this process lacks CAP_SYS_ADMIN (a container?) \(detail); see docs/backups.md for the recipes without run"
        : "cannot make a user namespace: the kernel or its policy refuses them to unprivileged users (kernel.apparmor_restrict_unprivileged_userns, user.max_user_namespaces=0, or a seccomp filter in a container) \(detail); run as root, or see docs/backups.md for the recipes without run"
    case (.unshare, .invalidArgument):
      return
        "cannot make a private mount namespace: unshare needs a process of one thread \(detail)"
    case (.unshare, _):
      return "cannot make a private mount namespace \(detail)"
    case (.write, _), (.openat, _):
      return
        "\(error.path.escapedDescription): cannot map this user into the user namespace: the kernel's policy refuses it (kernel.apparmor_restrict_unprivileged_userns?) \(detail)"
    default:
      return explain(error)
    }
  }

  /// One line: what failed, and why, for the calls that make the view.
  package static func explain(_ error: SkipBackupError) -> String {
    guard let call = error.call, let errno = error.errno else { return error.description }
    let detail = "(\(call): \(errno.description))"
    let path = error.path.escapedDescription
    switch (call, errno) {
    case (.fsopen, .operationNotSupportedByDevice):
      return "\(path): this kernel has no overlayfs or tmpfs (modprobe overlay) \(detail)"
    case (.fsopen, .noFunction), (.fsconfig, .noFunction), (.fsmount, .noFunction),
      (.moveMount, .noFunction):
      return
        "\(path): this kernel lacks the mount API of Linux 5.2 (fsopen, fsmount, move_mount) \(detail)"
    case (.fsconfig, .invalidArgument), (.fsconfig, .notSupported), (.fsconfig, .notPermitted):
      return
        "\(path): overlayfs refuses this directory as a lower layer: it is on a filesystem overlayfs cannot use under it (another overlay stacked too deep, FUSE, NFS, or one without the needed features), or mounting it is not allowed in this namespace \(detail); -x leaves a filesystem mounted below ROOT out; see docs/backups.md"
    case (.mount, _), (.fsopen, _), (.fsconfig, _), (.fsmount, _), (.moveMount, _),
      (.openTree, _), (.mountSetattr, _):
      return "\(path): cannot mount the view \(detail)"
    case (.fchdir, _), (.chroot, _):
      return "cannot make the view of / COMMAND's root directory \(detail)"
    case (.setInodeFlags, .notPermitted):
      return
        "\(path): its immutable or append-only flag (chattr +i, +a) cannot be given to the view's layer: only root may set them (CAP_LINUX_IMMUTABLE, which a user namespace lacks) \(detail); run as root; nothing was run"
    case (.mknodat, _), (.mkdirat, _):
      return "\(path): cannot make its whiteout in the view's layer (tmpfs) \(detail)"
    case (.setxattr, .notSupported), (.fsetxattr, .notSupported), (.setxattrat, .notSupported):
      return
        "\(path): its extended attribute \(error.attribute.map { "\($0)" } ?? "") cannot be copied to the view's layer: tmpfs keeps user.* attributes only from Linux 6.6 \(detail); the view would not show it, so nothing was run"
    case (.setxattr, .invalidArgument), (.fsetxattr, .invalidArgument),
      (.setxattrat, .invalidArgument):
      // A `where` here would guard only the last of the three patterns (The
      // Swift Programming Language, Statements: a case's where clause), and
      // call setxattr's EINVAL of any attribute an ACL's.
      guard error.attribute.map({ "\($0)".hasPrefix("system.posix_acl_") }) == true else {
        return error.description
      }
      return
        "\(path): its ACL names a user or group other than yours, which the view's layer "
        + "cannot carry: only your own user and group are mapped in this user namespace (root "
        + "can show every ACL) \(detail); run as root; nothing was run"
    case (.fchown, _):
      return
        "\(path): its owner or group cannot be copied to the view's layer: only your own user and group are mapped in this user namespace (root can show every owner) \(detail); nothing was run"
    case (.chdir, _):
      return
        "\(path): the working directory is not in the view (excluded?): run COMMAND from a directory the view shows \(detail)"
    default:
      return error.description
    }
  }
}

extension MountNamespace.Privilege {
  package var isRoot: Bool {
    if case .root = self { return true }
    return false
  }
}
