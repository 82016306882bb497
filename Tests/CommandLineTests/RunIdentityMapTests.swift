import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// An unprivileged `run` maps its user into the user namespace it makes
/// (/proc/self/setgroups, uid_map, gid_map); a kernel whose policy refuses
/// that is named, and COMMAND never runs. The explanation is chosen by the
/// failed call and the file it was made on, not by the text of a path.
@Suite(.onTestThreads) struct RunIdentityMapTests {
  @Test func aRefusedIdentityMapNamesThePolicy() throws {
    let tree = try TemporaryDirectory()
    let root = tree.directory("root")
    try check(run(["chown", "-R", "nobody:nogroup", Argument(tree.path)]))
    let witness = tree.path + "/ran"
    // The first write of the run is to /proc/self/setgroups.
    let result = run(
      [
        "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
        Argument(skipbackupPath), "run", "-q", Argument(root), "--", "touch", Argument(witness),
      ],
      environment: ["SKIPBACKUP_FORCE_ERRNO": "write:EPERM:1:1"])
    #expect(result.status == 1, "\(result)")
    #expect(
      result.errors
        == "skipbackup: /proc/self/setgroups: cannot map this user into the user namespace: "
        + "the kernel's policy refuses it (kernel.apparmor_restrict_unprivileged_userns?) "
        + "(write: Operation not permitted)\n",
      "\(result)")
    #expect(access(witness, F_OK) != 0, "COMMAND ran")
  }
}
