import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// What the sized walk's tests (du, browse, the sweep's sizes) hold it to:
// GNU du, on trees they make themselves, and a filesystem of its own for -x.

/// GNU du's number for each of `paths` with `options` (`-s -B1`,
/// `--inodes`, `-b`, `-x` ...), in its order; with `-a` or without `-s`
/// one for every item it prints, keyed by path. Records end in NUL (`-0`),
/// so any name reads back.
public func gnuDu(_ options: [String], _ paths: [String]) -> [(path: String, value: Int64)] {
  let result = run(
    [Argument("du"), "-0"] + options.map { Argument($0) } + paths.map { Argument($0) })
  #expect(result.status == 0, "du \(options) \(paths): \(result)")
  return result.nulSeparated.compactMap { record in
    guard let tab = record.firstIndex(of: UInt8(ascii: "\t")),
      let value = Int64(String(decoding: record[..<tab], as: UTF8.self))
    else { return nil }
    return (String(decoding: record[(tab + 1)...], as: UTF8.self), value)
  }
}

/// GNU du's total for `path` alone (`du -s OPTIONS PATH`).
public func gnuDuTotal(_ options: [String], _ path: String) -> Int64 {
  gnuDu(["-s"] + options, [path]).first?.value ?? -1
}

/// What a sized walk must count alike under every classification: a tree
/// of some 4,000 items, deep and wide enough that a walk with a low
/// hand-over threshold splits most directories across threads, with
/// regular files of many sizes, empty directories, a sparse file, hard
/// links within one directory, symbolic links and a FIFO; and marks at
/// several depths (a marked directory with marks inside it, marked files).
public struct SizedTree {
  public let root: String
  /// The topmost excluded items, with the mechanism's attribute name that marks each.
  public let excluded: [(path: String, attribute: String)]
  /// Items marked inside an excluded directory (not read by du, kept by browse).
  public let markedInside: [(path: String, attribute: String)]

  /// Makes the tree at `root` (which must not exist).
  public init(at root: String) {
    self.root = root
    let script = """
      import os, sys
      root = sys.argv[1]
      os.makedirs(root)
      for a in range(6):
          for b in range(5):
              for c in range(4):
                  d = os.path.join(root, f"a{a}", f"b{b}", f"c{c}")
                  os.makedirs(d)
                  for i in range(20 + (a * 7 + b * 3 + c) % 17):
                      with open(os.path.join(d if i % 3 else os.path.dirname(d), f"f{c}-{i}"), "wb") as f:
                          f.write(b"x" * ((a + 1) * (i + 1) * 131 % 70000))
              os.makedirs(os.path.join(root, f"a{a}", f"b{b}", "empty"))
              with open(os.path.join(root, f"a{a}", f"b{b}", "one"), "wb") as f:
                  f.write(b"y" * (a * 4096 + b))
              os.link(os.path.join(root, f"a{a}", f"b{b}", "one"), os.path.join(root, f"a{a}", f"b{b}", "one-again"))
              os.symlink("one", os.path.join(root, f"a{a}", f"b{b}", "link"))
      os.mkfifo(os.path.join(root, "a0", "fifo"))
      with open(os.path.join(root, "a1", "sparse"), "wb") as f:
          f.truncate(5 * 1024 * 1024)
          f.seek(1024 * 1024)
          f.write(b"z" * 10000)
      """
    let made = run([python3, "-c", Argument(script), Argument(root)])
    #expect(made.status == 0, "the tree generator failed: \(made)")
    excluded = [
      (root + "/a2", Names.xdg),
      (root + "/a4/b1", Names.legacy),
      (root + "/a0/b3/c2", Names.resource),
      (root + "/a5/b0/f2-6", Names.legacy),
      (root + "/a1/b2/c0/f0-1", Names.xdg),
      (root + "/a3/b4/f1-3", Names.resource),
    ]
    markedInside = [
      (root + "/a2/b3", Names.legacy),
      (root + "/a4/b1/c0/f0-4", Names.xdg),
    ]
    for (path, attribute) in excluded + markedInside { Self.mark(path, attribute) }
  }

  /// Marks `path` with `attribute` as the tool writes it (setfattr).
  public static func mark(_ path: String, _ attribute: String) {
    switch attribute {
    case Names.legacy: setfattr(path, attribute, hex: "01")
    case Names.resource: setfattr(path, attribute, hex: Names.resourceValueHex)
    default: setfattr(path, attribute, hex: hex(Array("false".utf8)))
    }
  }

  /// Whether `path` is `other` or lies below it.
  public static func path(_ path: String, isAtOrBelow other: String) -> Bool {
    path == other || path.hasPrefix(other + "/")
  }
}

/// A tmpfs mounted at `path` for the life of the value: a filesystem of
/// its own below a walk's root, for `-x`. Unmounted (lazily, should a test
/// still hold it open) in `deinit`.
public final class TemporaryMount {
  public let path: String

  /// `nil`, with the failure recorded, when the mount cannot be made
  /// (tests run as root).
  public init?(at path: String) {
    self.path = path
    let mounted = run(["mount", "-t", "tmpfs", "-o", "size=8m", "skipbackup-test", Argument(path)])
    guard mounted.status == 0 else {
      Issue.record("cannot mount a tmpfs at \(path) (the tests run as root): \(mounted)")
      return nil
    }
  }

  private var mounted = true

  /// Unmounts it now, before the directory it is on goes.
  public func unmount() {
    guard mounted else { return }
    mounted = false
    let result = run(["umount", "-l", Argument(path)])
    #expect(result.status == 0, "umount \(path): \(result)")
  }

  deinit { unmount() }
}

/// The JSON objects, one a line, that `body` writes to the descriptor it
/// is given (an engine's report, in a file of its own).
public func jsonObjectsWritten(by body: (CInt) throws -> Void) throws -> [[String: Any]] {
  let scratch = try TemporaryDirectory(prefix: "skipbackup-report")
  let path = scratch.path + "/report"
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
  precondition(descriptor >= 0, "cannot create \(path)")
  defer { close(descriptor) }
  try body(descriptor)
  let report = FileManager.default.contents(atPath: path) ?? Data()
  return report.split(separator: UInt8(ascii: "\n")).map { line in
    let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
    #expect(object != nil, "not a JSON object: \(String(decoding: line, as: UTF8.self))")
    return object ?? [:]
  }
}
