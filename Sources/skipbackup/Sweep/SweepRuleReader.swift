import SkipBackupCore

/// The sweep rule behind a mark, from the record a sweep writes beside the
/// marks it makes (``SweepProvenance``), escaped for display as every name
/// is (a `path` rule is a path, whose bytes need not be UTF-8). `nil` when
/// the item has none, or when it cannot be read (a rule is a detail of the
/// report, never a reason to fail it).
func sweepRule(of item: FileItem) -> String? {
  guard let record = try? SweepProvenance.read(from: item) else { return nil }
  return String(escapingForDisplay: record.rule)
}
