import Testing

// What find and Python's os.lstat say of a tree, for tests that compare
// a walk's result with a walk nobody here wrote.

/// What `find DIRECTORY [TESTS...] -print0` lists, as byte strings.
public func find(_ directory: String, _ tests: String...) -> [[UInt8]] {
  let result = run(
    [Argument("find"), Argument(directory)] + tests.map { Argument($0) } + ["-print0"])
  #expect(result.status == 0, "\(result)")
  return result.nulSeparated
}

/// Every item's ctime under `directory` (itself included), as Python's
/// os.lstat reads it in nanoseconds.
public func changeTimes(_ directory: String) -> [String] {
  let script = """
    import os, sys
    for top, directories, files in os.walk(os.fsencode(sys.argv[1])):
        for name in [b""] + directories + files:
            path = os.path.join(top, name)
            print(path.hex(), os.lstat(path).st_ctime_ns)
    """
  let result = run([python3, "-c", Argument(script), Argument(directory)])
  #expect(result.status == 0, "\(result)")
  return result.lines.sorted()
}
