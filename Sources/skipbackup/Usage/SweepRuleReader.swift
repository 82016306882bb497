import SkipBackupCore

/// The sweep rule behind a mark: the rule part of the `user.skipbackup.sweep`
/// attribute (`MECHANISMS RULE`, everything after the first space), which a
/// sweep writes beside the marks it makes. `nil` when the item has none, or
/// when it cannot be read (a rule is a detail of the report, never a reason
/// to fail it).
func sweepRule(of item: FileItem) -> String? {
  guard let record = try? SweepProvenance.read(from: item) else { return nil }
  return String(decoding: record.rule, as: UTF8.self)
}
