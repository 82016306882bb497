import SkipBackupCore

extension Diagnostics {
  /// Which of `mechanisms` mark a walk's entry, as `MechanismSet.markBits`
  /// gives them: none for a symbolic link or special file, which keep no
  /// user attributes, and `nil` when the entry is gone since its directory
  /// was listed, or cannot be read (that failure reported, after `output`).
  func markBits(
    of entry: TreeEntry, _ mechanisms: MechanismSet, after output: Output
  ) -> UInt64? {
    guard entry.type == .regular || entry.type == .directory else { return 0 }
    do throws(SkipBackupError) {
      return try mechanisms.markBits(on: entry.item)
    } catch  where error.isNoSuchFile && entry.depth > 0 {
      return nil
    } catch {
      report(entry.depth > 0 ? entry.located(error) : error, after: output)
      return nil
    }
  }
}
