import Foundation

/// This process's mount table.
func mountInfo() -> String {
  (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
}

/// The mount points of this process's namespace at or below `directory`
/// (mountinfo's fifth field, whose spaces the kernel writes as \040). A test
/// compares these, not the whole table: other tests loop-mount images of
/// their own in the same namespace meanwhile.
func mountPoints(under directory: String) -> [String] {
  mountInfo().split(separator: "\n").compactMap { line in
    let fields = line.split(separator: " ")
    guard fields.count > 4 else { return nil }
    let point = String(fields[4])
    return point == directory || point.hasPrefix(directory + "/") ? point : nil
  }
}
