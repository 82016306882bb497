import SkipBackupCore

extension TreeEntry {
  /// Which of `mechanisms` mark this entry: none for a symbolic link or special file, which keep no
  /// user attributes, and `nil` when the entry is gone since its directory
  /// was listed, or cannot be read (that failure reported to `diagnostics`,
  /// after what `output` holds).
  func marks(
    _ mechanisms: MechanismSet, reportingTo diagnostics: Diagnostics, after output: Output
  ) -> MechanismSet? {
    guard type == .regular || type == .directory else { return [] }
    do throws(SkipBackupError) {
      return try mechanisms.marks(on: item)
    } catch  where error.isNoSuchFile && depth > 0 {
      return nil
    } catch {
      diagnostics.report(depth > 0 ? located(error) : error, after: output)
      return nil
    }
  }
}
