import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Debian's smbd on loopback with a private configuration: a free high
/// port on 127.0.0.1 only, its own pid, lock, state, cache and private
/// directories, and one guest share over a scratch directory with
/// `vfs objects = catia fruit streams_xattr`, as a Mac's file server has it.
///
/// smbd runs as the first process of a PID namespace of its own (`unshare
/// --pid --fork --kill-child`), in a process group of its own: `stop()`
/// ends the group and reaps `unshare`, which returns only once smbd, and
/// with it every helper it forked, is gone (pid_namespaces(7): when a
/// namespace's init ends, the kernel kills and reaps the rest). No process
/// of the tests' is made a subreaper: the orphans of every other test would
/// then stay its zombies.
final class SambaServer {
  let directory: TemporaryDirectory
  /// The shared directory on the server's disk.
  let share: String
  let configuration: String
  private(set) var port = 0
  private var pid: pid_t = 0
  private var drain: BackgroundThread?

  static let smbd = "/usr/sbin/smbd"
  static let unshare = "/usr/bin/unshare"
  /// Whether Debian's samba and smbclient are installed (scripts/deps test).
  static let installed =
    FileManager.default.isExecutableFile(atPath: smbd)
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/smbclient")

  /// Starts smbd with `fruit:encoding = ENCODING` (and with
  /// `streams_xattr:store_stream_type = no` unless `storeStreamType`), and
  /// returns once it waits
  /// for connections.
  init(encoding: String, storeStreamType: Bool = true) throws {
    directory = try TemporaryDirectory(prefix: "skipbackup-smbd")
    share = directory.directory("share")
    configuration = directory.path + "/smb.conf"
    var output = ""
    // A port found free may be taken before smbd binds it: try another.
    for _ in 0..<3 {
      port = try Self.freePort()
      try writeConfiguration(encoding: encoding, storeStreamType: storeStreamType)
      (pid, output) = try start()
      if pid != 0 { return }
      if !output.contains("Address already in use") { break }
    }
    throw SambaServerError(output: output)
  }

  deinit { stop() }

  private func writeConfiguration(encoding: String, storeStreamType: Bool) throws {
    let place = directory.path
    for name in ["pid", "lock", "state", "cache", "private", "ncalrpc", "binddns"] {
      directory.directory(name)
    }
    let text = """
      [global]
        smb ports = \(port)
        interfaces = 127.0.0.1
        bind interfaces only = yes
        disable netbios = yes
        server role = standalone server
        map to guest = Bad User
        pid directory = \(place)/pid
        lock directory = \(place)/lock
        state directory = \(place)/state
        cache directory = \(place)/cache
        private dir = \(place)/private
        ncalrpc dir = \(place)/ncalrpc
        binddns dir = \(place)/binddns
        load printers = no
        printing = bsd
        printcap name = /dev/null
        disable spoolss = yes
      [share]
        path = \(share)
        guest ok = yes
        read only = no
        force user = root
        vfs objects = catia fruit streams_xattr
        fruit:encoding = \(encoding)
        streams_xattr:store_stream_type = \(storeStreamType ? "yes" : "no")

      """
    try text.write(toFile: configuration, atomically: true, encoding: .utf8)
  }

  /// Spawns smbd in a new process group, its log on a pipe, and reads the
  /// log until smbd waits for connections (pid returned) or ends (0).
  private func start() throws -> (pid_t, String) {
    var pipeEnds: [Int32] = [0, 0]
    // Close-on-exec from the start: a program another test spawns meanwhile
    // must not hold the log's write end, or its end would never be read.
    guard LibC.pipe2(&pipeEnds, O_CLOEXEC) == 0 else { throw SambaServerError(output: "pipe2") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)
    let arguments = [
      Self.unshare, "--pid", "--fork", "--kill-child",
      Self.smbd, "--foreground", "--no-process-group", "--debug-stdout", "--debuglevel=2",
      "--configfile=" + configuration,
    ]
    let cStrings = arguments.map { strdup($0) }
    defer { for string in cStrings { free(string) } }
    var argv = cStrings + [nil]
    var child: pid_t = 0
    let spawned = posix_spawn(&child, Self.unshare, &actions, &attributes, &argv, environ)
    close(pipeEnds[1])
    guard spawned == 0 else {
      close(pipeEnds[0])
      throw SambaServerError(output: "cannot start smbd: error \(spawned)")
    }
    let log = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true)
    var output = ""
    while true {
      let chunk = log.availableData  // blocks until smbd writes or ends
      if chunk.isEmpty { break }
      output += String(decoding: chunk, as: UTF8.self)
      if output.contains("waiting for connections") {
        // The log goes on; read it to its end so that smbd never blocks on a full pipe.
        drain = BackgroundThread {
          while !log.availableData.isEmpty {}
        }
        return (child, output)
      }
    }
    pid = child
    reap()
    pid = 0
    return (0, output)
  }

  /// Ends smbd's process group and reaps each member.
  func stop() {
    guard pid != 0 else { return }
    kill(-pid, SIGTERM)
    reap()
    drain?.wait()
    drain = nil
  }

  /// Whether any process of smbd's group is left.
  var groupIsGone: Bool { kill(-processGroup, 0) != 0 && errno == ESRCH }
  private(set) var processGroup: pid_t = 0

  private func reap() {
    processGroup = pid
    var status: Int32 = 0
    while waitpid(-pid, &status, 0) > 0 || errno == EINTR {}
    pid = 0
  }

  /// Runs smbclient as a guest on the share with the commands `commands`.
  func smbclient(_ commands: String) -> ProcessResult {
    run([
      "smbclient", "-s", Argument(configuration), "-N", "-p", Argument(String(port)),
      "//127.0.0.1/share", "-c", Argument(commands),
    ])
  }

  /// A TCP port on 127.0.0.1 that nothing listens on now: the kernel's pick.
  private static func freePort() throws -> Int {
    let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socketDescriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socketDescriptor, $0, length) == 0 && getsockname(socketDescriptor, $0, &length) == 0
      }
    }
    guard bound else { throw SambaServerError(output: "no free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

/// `pipe2(2)`, which the Glibc module does not declare (its header needs
/// _GNU_SOURCE), found in the C library by name.
enum LibC {
  /// The C library's function `name`, as a function of type `type`.
  private static func function<F>(_ name: String, as type: F.Type) -> F {
    unsafeBitCast(dlsym(dlopen(nil, RTLD_NOW), name), to: type)
  }

  static func pipe2(_ ends: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32 {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    return function("pipe2", as: Pipe2.self)(ends, flags)
  }
}

struct SambaServerError: Error, CustomStringConvertible {
  var output: String
  var description: String { "smbd did not start:\n\(output)" }
}

extension CLITests {
  /// A real Samba server (scripts/deps test installs Debian's samba and
  /// smbclient): smbclient writes the streams as macOS names them, the tool
  /// on the server reads them, and what the tool writes in Samba's form
  /// smbclient reads back as the stream.
  @Suite(
    .serialized,
    .enabled(
      if: SambaServer.installed && getuid() == 0,
      "smbd needs Debian's samba and smbclient (scripts/deps test) and root"))
  struct SambaServerTests {
    /// The ':' of a Mac's attribute name as macOS sends it in a stream name.
    static let colon = "\u{F022}"
    static let resourceStream = "com.apple.metadata\(colon)com_apple_backup_excludeItem"

    /// Samba's two encodings, and the names without `:$DATA` that
    /// `store_stream_type = no` gives.
    @Test(arguments: [("private", true), ("native", true), ("private", false)])
    func aMacsMarksOnTheShareAreReadOnTheServer(encoding: String, storeStreamType: Bool) throws {
      let server = try SambaServer(encoding: encoding, storeStreamType: storeStreamType)
      let type = storeStreamType ? ":$DATA" : ""
      defer {
        server.stop()
        #expect(server.groupIsGone, "smbd's processes are all gone")
      }
      let share = server.share
      let scratch = try TemporaryDirectory()
      let plist = scratch.path + "/plist"
      try Data(bytes(fromHex: Names.resourceValueHex)).write(to: URL(fileURLWithPath: plist))
      let one = scratch.path + "/one"
      try Data([1]).write(to: URL(fileURLWithPath: one))
      for name in ["marked.txt", "legacy.txt", "plain.txt", "tagged.txt", "Folder/inside.txt"] {
        server.directory.file("share/" + name)
      }
      let put = server.smbclient(
        """
        put \(plist) "marked.txt:\(Self.resourceStream)"; \
        put \(plist) "Folder:\(Self.resourceStream)"; \
        put \(one) "legacy.txt:com.apple.MobileBackup"; \
        put \(plist) "tagged.txt:com.apple.metadata\(Self.colon)_kMDItemUserTags"
        """)
      #expect(put.status == 0, "\(put)")

      // What Samba stored: the stream's bytes and one 0 more.
      let storedName =
        "user.DosStream.com.apple.metadata" + (encoding == "private" ? Self.colon : ":")
        + "com_apple_backup_excludeItem" + type
      #expect(
        pythonGetxattr(share + "/marked.txt", storedName)
          == bytes(fromHex: Names.resourceValueHex + "00"))
      #expect(
        pythonGetxattr(share + "/legacy.txt", "user.DosStream.com.apple.MobileBackup" + type)
          == [1, 0])

      let status = skipbackup(
        "status", Argument(share + "/marked.txt"), Argument(share + "/legacy.txt"),
        Argument(share + "/plain.txt"), Argument(share + "/tagged.txt"),
        Argument(share + "/Folder/inside.txt"))
      #expect(status.status == 0, "\(status)")
      #expect(
        status.lines == [
          "[Excluded]    \(share)/marked.txt", "[Excluded]    \(share)/legacy.txt",
          "[Included]    \(share)/plain.txt", "[Included]    \(share)/tagged.txt",
          "[Excluded]    \(share)/Folder/inside.txt",
        ])
      let verbose = skipbackup("status", "-v", Argument(share + "/marked.txt"))
      let label =
        "fruit:encoding = \(encoding)" + (storeStreamType ? "" : ", store_stream_type = no")
      #expect(verbose.output.contains(label + ")"), "\(verbose)")
      #expect(skipbackup("check", "-m", "resource", Argument(share + "/marked.txt")).status == 0)
      #expect(skipbackup("check", "-m", "legacy", Argument(share + "/legacy.txt")).status == 0)
      #expect(skipbackup("check", Argument(share + "/tagged.txt")).status == 1)

      // The server's own backup, the recommended way: restic leaves them out.
      let place = try BackupPlace()
      try place.prepare(.restic)
      try check(place.shell(Recipe.restic, root: share, in: place.work))
      let backedUp = try place.backedUp(
        by: .restic, root: share, absoluteRoot: share, ranIn: place.work)
      #expect(
        backedUp == Set(["", "plain.txt", "tagged.txt"].map(\.bytes)),
        "\(backedUp.map(\.display).sorted())")

      // Written on the server in Samba's form, read by the client as the
      // stream; mark --form writes the names with `:$DATA`, Samba's default.
      guard storeStreamType else { return }
      let form = encoding == "private" ? "smb" : "smb-native"
      #expect(
        skipbackup("mark", "--form", Argument(form), Argument(share + "/plain.txt")).status == 0)
      let back = scratch.path + "/back"
      let streams = server.smbclient(
        "allinfo plain.txt; get \"plain.txt:\(Self.resourceStream)\" \(back)")
      #expect(streams.status == 0, "\(streams)")
      #expect(streams.output.contains("stream: [:\(Self.resourceStream):$DATA], 61 bytes"))
      #expect(
        FileManager.default.contents(atPath: back) == Data(bytes(fromHex: Names.resourceValueHex)))

      #expect(skipbackup("clear", Argument(share + "/plain.txt")).status == 0)
      let cleared = server.smbclient("allinfo plain.txt")
      #expect(cleared.status == 0, "\(cleared)")
      #expect(!cleared.output.contains("com_apple_backup_excludeItem"), "\(cleared)")
    }
  }
}
