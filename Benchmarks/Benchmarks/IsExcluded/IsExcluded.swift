// The library's one-path query against the raw system call it wraps.
//
// `FilePath.isExcludedFromBackup` is `MechanismSet.all.isMarked(FileItem(path:))`:
// one listxattr(2) and a scan of the names. `Mechanism.resource.isMarked`
// is one getxattr(2) of the resource-value attribute with no buffer. The floor
// is that same getxattr(2) called straight through CXattr, the C module the
// library itself calls. Each runs on a marked file and on an unmarked one (an
// unmarked file answers ENODATA, which the library turns into `false`).
//
// Every benchmark does `scalingFactor` (1,000) calls per measured iteration, so
// the clock's own cost is spread over many calls; scripts/benchmark reads p50
// of the wall clock and divides by 1,000.

import Benchmark
import CXattr
import SkipBackup

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

private let resourceName = "user.com.apple.metadata:com_apple_backup_excludeItem"

/// A temporary directory with `marked` (the 61-byte resource value) and
/// `unmarked` in it, made once for the whole run.
private final class Files: @unchecked Sendable {
  let directory: String
  let marked: String
  let unmarked: String

  init() {
    var template = Array("\(temporaryDirectory)/skipbackup-bench.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(errno)") }
    directory = String(cString: made)
    marked = directory + "/marked.dat"
    unmarked = directory + "/unmarked.dat"
    for path in [marked, unmarked] {
      let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
      guard fd >= 0 else { fatalError("open \(path): \(errno)") }
      _ = write(fd, "x", 1)
      close(fd)
    }
    let value = Mechanism.resource.markValue!
    let set = value.withUnsafeBytes { setxattr(marked, resourceName, $0.baseAddress, $0.count, 0) }
    guard set == 0 else { fatalError("setxattr \(marked): errno \(errno)") }
  }

  func remove() {
    unlink(marked)
    unlink(unmarked)
    rmdir(directory)
  }
}

/// $TMPDIR, or /tmp.
private var temporaryDirectory: String {
  getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
}

nonisolated(unsafe) private var files: Files?

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock],
    timeUnits: .nanoseconds,
    warmupIterations: 10,
    scalingFactor: .kilo,
    maxDuration: .seconds(2),
    maxIterations: 10_000
  )

  Benchmark.setup = { files = Files() }
  Benchmark.teardown = { files?.remove() }

  for (label, pick) in [("marked", { (f: Files) in f.marked }), ("unmarked", { $0.unmarked })] {
    Benchmark("raw getxattr (\(label))") { benchmark in
      let path = Array(pick(files!).utf8CString)
      let name = Array(resourceName.utf8CString)
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(getxattr(path, name, nil, 0))
      }
    }

    Benchmark("raw listxattr (\(label))") { benchmark in
      let path = Array(pick(files!).utf8CString)
      var list = [CChar](repeating: 0, count: 1024)
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(listxattr(path, &list, list.count))
      }
    }

    Benchmark("resource isMarked (\(label))") { benchmark in
      let path = FilePath(pick(files!))
      let resource = Mechanism.resource
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(try! resource.isMarked(FileItem(path: path)))
      }
    }

    Benchmark("isExcludedFromBackup (\(label))") { benchmark in
      let path = FilePath(pick(files!))
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(try! path.isExcludedFromBackup)
      }
    }
  }
}
