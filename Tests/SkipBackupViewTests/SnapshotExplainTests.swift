import SkipBackupCore
import SkipBackupView
import SystemPackage
import Testing

/// The snapshot provider's judgement and `run`'s one-line explanations, in
/// process, on facts and errors made by hand: each answer of each pure
/// function, which no filesystem at hand can produce on demand (a full
/// btrfs, a swap file in the subvolume, a kernel without the mount API).
struct SnapshotExplainTests {
  // MARK: - SnapshotProvider.explain(_: SnapshotFacts)

  /// Root on its own subvolume, on another user's, and an ordinary user on
  /// theirs on a filesystem mounted `user_subvol_rm_allowed`: a snapshot.
  @Test func aSnapshotIsTakenWhereTheRunnerMaySnapshotAndDelete() {
    #expect(SnapshotProvider.explain(SnapshotFacts(provider: .btrfs, isRoot: true)) == .take)
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(provider: .btrfs, isRoot: true, ownsSource: false, userMayDelete: false))
        == .take)
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(provider: .btrfs, isNested: true, isRoot: false, userMayDelete: true))
        == .take)
  }

  @Test func aFilesystemNoProviderFreezesIsRefusedFirst() {
    // Whatever else is said of it.
    for facts in [
      SnapshotFacts(provider: nil, isRoot: true),
      SnapshotFacts(provider: nil, sourceReachable: false, readOnly: true, ownsSource: false),
    ] {
      #expect(SnapshotProvider.explain(facts) == .refused(.notOnASnapshottingFilesystem))
    }
  }

  @Test func aSubvolumeWhoseRootIsNotReachableIsRefused() {
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(provider: .btrfs, sourceReachable: false, readOnly: true, isRoot: true))
        == .refused(.subvolumeRootUnreachable))
  }

  /// A ROOT given in a read-only subvolume is refused; one nested in a
  /// ROOT is its own snapshot, for root and for a user who does not own
  /// it alike (nothing is made in it, nor deleted).
  @Test func aReadOnlySubvolumeIsRefusedGivenAndItsOwnSnapshotNested() {
    #expect(
      SnapshotProvider.explain(SnapshotFacts(provider: .btrfs, readOnly: true, isRoot: true))
        == .refused(.readOnlySubvolume))
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(provider: .btrfs, readOnly: true, isNested: true, isRoot: true))
        == .frozenAlready)
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(
          provider: .btrfs, readOnly: true, isNested: true, ownsSource: false,
          userMayDelete: false)) == .frozenAlready)
  }

  @Test func anOrdinaryUserIsRefusedAnotherUsersSubvolume() {
    #expect(
      SnapshotProvider.explain(SnapshotFacts(provider: .btrfs, ownsSource: false))
        == .refused(.subvolumeOfAnother))
    #expect(
      SnapshotProvider.explain(SnapshotFacts(provider: .btrfs, isNested: true, ownsSource: false))
        == .refused(.nestedSubvolumeOfAnother))
  }

  /// Asked after ownership: the owner is told about the mount option, the
  /// others that the subvolume is not theirs.
  @Test func anOrdinaryUserIsRefusedASnapshotTheyCouldNotDelete() {
    #expect(
      SnapshotProvider.explain(SnapshotFacts(provider: .btrfs, userMayDelete: false))
        == .refused(.snapshotDeletionNotAllowed))
    #expect(
      SnapshotProvider.explain(
        SnapshotFacts(provider: .btrfs, ownsSource: false, userMayDelete: false))
        == .refused(.subvolumeOfAnother))
  }

  // MARK: - SnapshotProvider.explain(_: SkipBackupError)

  private let home: FilePath = "/srv/home"
  private var store: FilePath { "/srv/home/.skipbackup-snapshots" }

  /// Each line names the path, says what failed in words, keeps the call
  /// and its error in parentheses, and ends saying what was (not) done.
  private func expectLine(
    _ line: String, naming path: FilePath, _ call: String, saying words: String,
    ending: String = "nothing was run"
  ) {
    #expect(line.hasPrefix("\(path.escapedDescription): "), "\(line)")
    #expect(line.contains(words), "\(line)")
    #expect(line.contains("(\(call): "), "\(line)")
    #expect(line.hasSuffix(ending), "\(line)")
    #expect(!line.contains("\n"), "\(line)")
  }

  @Test func theSnapshotDirectoryNameTakenByAFileOrLinkIsNamed() {
    for errno in [Errno.notDirectory, .tooManySymbolicLinkLevels] {
      for name in [store, FilePath("/srv/home/.skipbackup-snapshots.1000")] {
        expectLine(
          SnapshotProvider.explain(SkipBackupError(.openat, errno, path: name)), naming: name,
          "openat", saying: "is not a directory, but run --snapshot keeps its snapshots")
      }
    }
    // Another name is not the snapshot directory's.
    let other = FilePath("/srv/home/.skipbackup-snapshots.x")
    let line = SnapshotProvider.explain(SkipBackupError(.openat, .notDirectory, path: other))
    #expect(!line.contains("keeps its snapshots"), "\(line)")
  }

  @Test func theSnapshotDirectoryThatCannotBeMadeSaysWhy() {
    expectLine(
      SnapshotProvider.explain(SkipBackupError(.mkdirat, .notPermitted, path: store)),
      naming: store, "mkdirat", saying: "immutable (chattr +i)")
    expectLine(
      SnapshotProvider.explain(SkipBackupError(.mkdirat, .permissionDenied, path: store)),
      naming: store, "mkdirat", saying: "run it as the subvolume's owner")
    expectLine(
      SnapshotProvider.explain(SkipBackupError(.mkdirat, .readOnlyFileSystem, path: store)),
      naming: store, "mkdirat", saying: "the filesystem is read-only")
  }

  @Test func eachRefusalOfTheSnapshotIoctlSaysWhy() {
    let cases: [(Errno, String)] = [
      (.readOnlyFileSystem, "is read-only, so no snapshot can be taken"),
      (.noSpace, "no space left on its btrfs filesystem"),
      (.notPermitted, "only the owner of the btrfs subvolume"),
      (.permissionDenied, "only the owner of the btrfs subvolume"),
      (.textFileBusy, "active swap file"),
      (.ioError, "cannot take a btrfs snapshot"),
    ]
    for (errno, words) in cases {
      expectLine(
        SnapshotProvider.explain(SkipBackupError(.btrfsSnapshotCreate, errno, path: home)),
        naming: home, "ioctl(BTRFS_IOC_SNAP_CREATE_V2)", saying: words)
    }
  }

  @Test func nestedSubvolumesThatCannotBeFoundPointToMinusX() {
    for call in [SystemCall.btrfsSubvolumeChildren, .btrfsSubvolumePlace] {
      expectLine(
        SnapshotProvider.explain(SkipBackupError(call, .permissionDenied, path: home)),
        naming: home, call.description, saying: "give -x to leave them out")
    }
  }

  @Test func aSnapshotThatCannotBeDeletedIsLeftForTheNextRun() {
    let snapshot = store.appending("run-1-0")
    for call in [
      SystemCall.btrfsSnapshotDestroy, .btrfsSubvolumeSetFlags, .btrfsSubvolumeGetFlags,
    ] {
      expectLine(
        SnapshotProvider.explain(SkipBackupError(call, .notPermitted, path: snapshot)),
        naming: snapshot, call.description, saying: "could not be deleted",
        ending: "the next run --snapshot on its filesystem tries again")
    }
  }

  /// Any other failure, and a refusal of SkipBackup's own, is the error's
  /// own description.
  @Test func otherErrorsAreTheirOwnDescription() {
    for error in [
      SkipBackupError(.fstat, .ioError, path: home),
      SkipBackupError(refusing: .changedOnTheWay, path: home),
      SkipBackupError(refusing: .readOnlySubvolume, path: home),
    ] {
      #expect(SnapshotProvider.explain(error) == error.description)
    }
  }

  // MARK: - ViewRun.explain and explainNamespace

  @Test func theViewsMountCallsSayWhatTheKernelLacks() {
    let root: FilePath = "/srv/data"
    expectLine(
      ViewRun.explain(SkipBackupError(.fsopen, .operationNotSupportedByDevice, path: root)),
      naming: root, "fsopen", saying: "no overlayfs or tmpfs (modprobe overlay)", ending: ")")
    for call in [SystemCall.fsopen, .fsconfig, .fsmount, .moveMount] {
      expectLine(
        ViewRun.explain(SkipBackupError(call, .noFunction, path: root)), naming: root,
        call.description, saying: "the mount API of Linux 5.2", ending: ")")
    }
    for errno in [Errno.invalidArgument, .notSupported, .notPermitted] {
      expectLine(
        ViewRun.explain(SkipBackupError(.fsconfig, errno, path: root)), naming: root, "fsconfig",
        saying: "overlayfs refuses this directory as a lower layer", ending: "see docs/backups.md")
    }
    for call in [
      SystemCall.mount, .fsopen, .fsconfig, .fsmount, .moveMount, .openTree, .mountSetattr,
    ] {
      expectLine(
        ViewRun.explain(SkipBackupError(call, .ioError, path: root)), naming: root,
        call.description, saying: "cannot mount the view", ending: ")")
    }
  }

  @Test func theViewsLayerSaysWhatItCannotCarry() {
    let item: FilePath = "/srv/data/f"
    expectLine(
      ViewRun.explain(SkipBackupError(.setInodeFlags, .notPermitted, path: item)), naming: item,
      "ioctl(FS_IOC_SETFLAGS)", saying: "only root may set them")
    for call in [SystemCall.mknodat, .mkdirat] {
      expectLine(
        ViewRun.explain(SkipBackupError(call, .noSpace, path: item)), naming: item,
        call.description, saying: "cannot make its whiteout", ending: ")")
    }
    for call in [SystemCall.setxattr, .fsetxattr, .setxattrat] {
      let line = ViewRun.explain(
        SkipBackupError(call, .notSupported, path: item, attribute: "user.x"))
      expectLine(
        line, naming: item, call.description, saying: "tmpfs keeps user.* attributes only from",
        ending: "so nothing was run")
      #expect(line.contains("user.x"), "\(line)")
      expectLine(
        ViewRun.explain(
          SkipBackupError(
            call, .invalidArgument, path: item, attribute: "system.posix_acl_access")),
        naming: item, call.description, saying: "its ACL names a user or group other than yours")
    }
    // EINVAL of another attribute is no ACL's.
    let other = SkipBackupError(.setxattr, .invalidArgument, path: item, attribute: "user.x")
    #expect(ViewRun.explain(other) == other.description)
    expectLine(
      ViewRun.explain(SkipBackupError(.fchown, .invalidArgument, path: item)), naming: item,
      "fchown", saying: "its owner or group cannot be copied")
    expectLine(
      ViewRun.explain(SkipBackupError(.chdir, .noSuchFileOrDirectory, path: item)), naming: item,
      "chdir", saying: "the working directory is not in the view", ending: ")")
    for call in [SystemCall.fchdir, .chroot] {
      let line = ViewRun.explain(SkipBackupError(call, .ioError, path: "/"))
      #expect(line.hasPrefix("cannot make the view of / COMMAND's root directory (\(call): "))
    }
    let plain = SkipBackupError(.fstat, .ioError, path: item)
    #expect(ViewRun.explain(plain) == plain.description)
  }

  @Test func theNamespaceThatCannotBeMadeSaysWhy() {
    for errno in [Errno.notPermitted, .noSpace] {
      let line = ViewRun.explainNamespace(SkipBackupError(.unshare, errno, path: "/srv"))
      #expect(line.contains("(unshare: "), "\(line)")
      #expect(line.hasSuffix("for the recipes without run"), "\(line)")
      #expect(line.contains("CAP_SYS_ADMIN") || line.contains("user namespace"), "\(line)")
    }
    #expect(
      ViewRun.explainNamespace(SkipBackupError(.unshare, .invalidArgument, path: "/srv"))
        .hasPrefix("cannot make a private mount namespace: unshare needs a process of one thread"))
    #expect(
      ViewRun.explainNamespace(SkipBackupError(.unshare, .ioError, path: "/srv"))
        .hasPrefix("cannot make a private mount namespace (unshare: "))
    let map: FilePath = "/proc/self/uid_map"
    for call in [SystemCall.write, .openat] {
      expectLine(
        ViewRun.explainNamespace(SkipBackupError(call, .permissionDenied, path: map)),
        naming: map, call.description, saying: "cannot map this user", ending: ")")
    }
    // Anything else is the view's own explanation.
    let mount = SkipBackupError(.moveMount, .ioError, path: "/srv")
    #expect(ViewRun.explainNamespace(mount) == ViewRun.explain(mount))
  }
}
