import SkipBackupCore
import SkipBackupReport

/// Prints `du`'s results: a block of text for each ROOT (and a total when
/// there are several), or one JSON object a ROOT.
package struct UsageReport {
  package let mechanismNames: [String]
  package let json: Bool
  package let output: Output

  package init(mechanismNames: [String], json: Bool, output: Output) {
    self.mechanismNames = mechanismNames
    self.json = json
    self.output = output
  }

  package func write(_ usage: DiskUsage) {
    json ? writeJSON(usage) : writeText(usage)
    output.endRecord()
  }

  // MARK: - JSON

  private func writeJSON(_ usage: DiskUsage) {
    var line = JSONLine()
    // A ROOT that is not UTF-8 gets its bytes as `path_base64`, the key
    // every other command uses for them.
    line.path("root", usage.root, base64Key: "path_base64")
    line.key("included")
    line.raw(Self.countsObject(usage.included))
    line.key("excluded")
    line.raw(Self.countsObject(usage.excluded))
    line.key("by_mechanism")
    line.raw(
      Self.object(zip(mechanismNames, usage.byMechanism).map { ($0, $1) }))
    line.key("by_rule")
    line.raw(Self.object(usage.byRule.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
    line.key("top_excluded")
    line.raw(Self.list(usage.topExcluded))
    line.key("top_included_directories")
    line.raw(Self.list(usage.topIncludedDirectories))
    output.write(line.finish())
  }

  private static func countsObject(_ counts: UsageCounts) -> [UInt8] {
    Array(
      "{\"files\": \(counts.files), \"directories\": \(counts.directories), \"bytes\": \(counts.bytes)}"
        .utf8)
  }

  private static func object(_ pairs: [(String, Int64)]) -> [UInt8] {
    var item = JSONLine()
    for (name, bytes) in pairs { item.number(name, bytes) }
    return item.closed()
  }

  private static func list(_ paths: [SizedPath]) -> [UInt8] {
    var bytes: [UInt8] = [UInt8(ascii: "[")]
    for (index, sized) in paths.enumerated() {
      if index > 0 { bytes += ", ".utf8 }
      var item = JSONLine()
      item.path("path", sized.path)
      item.number("bytes", sized.bytes)
      bytes += item.closed()
    }
    bytes.append(UInt8(ascii: "]"))
    return bytes
  }

  // MARK: - Text

  private func writeText(_ usage: DiskUsage) {
    output.writeName(usage.root)
    output.write("\n")
    writeCounts(usage.included, usage.excluded)
    let mechanisms = zip(mechanismNames, usage.byMechanism).map { "\($0) \(humanSize($1))" }
    output.write("  by mechanism:  " + mechanisms.joined(separator: ", ") + "\n")
    if !usage.byRule.isEmpty {
      let rules = usage.byRule.sorted {
        $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key
      }
      output.write(
        "  by sweep rule: "
          + rules.map { "\($0.key) \(humanSize($0.value))" }.joined(separator: ", ")
          + "\n")
    }
    writeList("largest excluded:", usage.topExcluded)
    writeList("largest included directories:", usage.topIncludedDirectories)
  }

  /// The total of several ROOTs, in text only.
  package func writeTotal(_ usages: [DiskUsage]) {
    var included = UsageCounts()
    var excluded = UsageCounts()
    for usage in usages {
      included += usage.included
      excluded += usage.excluded
    }
    output.write("total\n")
    writeCounts(included, excluded)
    output.endRecord()
  }

  private func writeCounts(_ included: UsageCounts, _ excluded: UsageCounts) {
    let rows = [("included", included), ("excluded", excluded)]
    let files = rows.map { counted($0.1.files, "file", "files") }
    let directories = rows.map { counted($0.1.directories, "directory", "directories") }
    let sizes = rows.map { humanSize($0.1.bytes) }
    let widths = [files, directories, sizes].map { $0.map(\.count).max()! }
    for (index, row) in rows.enumerated() {
      output.write(
        "  \(row.0)  " + pad(sizes[index], widths[2]) + "  " + pad(files[index], widths[0])
          + "  " + pad(directories[index], widths[1]) + "\n")
    }
  }

  private func writeList(_ title: String, _ paths: [SizedPath]) {
    guard !paths.isEmpty else { return }
    output.write("  \(title)\n")
    let sizes = paths.map { humanSize($0.bytes) }
    let width = sizes.map(\.count).max()!
    for (index, sized) in paths.enumerated() {
      output.write("    " + pad(sizes[index], width) + "  ")
      output.writeName(sized.path)
      output.write("\n")
    }
  }

  private func counted(_ count: Int, _ one: String, _ many: String) -> String {
    Progress.grouped(count) + " " + (count == 1 ? one : many)
  }

  private func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
