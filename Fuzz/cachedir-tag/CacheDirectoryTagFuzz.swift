import SkipBackupCore

/// The head of a `CACHEDIR.TAG` file anyone can write in a directory they
/// own: a tag exactly when it starts with the signature, skipbackup's own
/// (which clear may remove) only when it holds skipbackup's bytes and no
/// more.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let head = UnsafeBufferPointer(start: data, count: size).prefix(CacheDirectoryTag.headLength)
  let writer = CacheDirectoryTag.writer(ofHead: head)
  let signed = head.starts(with: CacheDirectoryTag.signature)
  precondition((writer != nil) == signed, "a tag without the signature, or a tag missed")
  if writer == .skipbackup {
    precondition(head.elementsEqual(CacheDirectoryTag.contents), "another's tag taken for ours")
  }
  return 0
}
