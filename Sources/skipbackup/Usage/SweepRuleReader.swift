import SkipBackupCore

/// The sweep rule behind a mark: the rule part of the `user.skipbackup.sweep`
/// attribute (`MECHANISMS RULE`, everything after the first space), which a
/// sweep writes beside the marks it makes. `nil` when the item has none, or
/// when it cannot be read (a rule is a detail of the report, never a reason
/// to fail it).
///
/// A stand-in until the sweep's own reader (Mechanisms/SweepProvenance.swift)
/// lands; the format is the one agreed on the team board.
func sweepRule(of item: FileItem) -> String? {
  guard let value = try? ExtendedAttributes(of: item).value(of: "user.skipbackup.sweep"),
    let space = value.firstIndex(of: UInt8(ascii: " "))
  else { return nil }
  let rule = value[(space + 1)...]
  return rule.isEmpty ? nil : String(decoding: rule, as: UTF8.self)
}
