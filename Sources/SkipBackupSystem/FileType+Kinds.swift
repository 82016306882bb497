import SystemPackage

extension FileType {
  // swift-system spells `.directory` and `.regular` as Glibc's `S_IFDIR`
  // and `S_IFREG`, which the Glibc overlay declares as computed properties
  // that no caller inlines: a call for each comparison, made for every
  // entry of a walk (`S_IFDIR`'s getter alone is 2.2 % of `status -R`'s
  // user samples on the 200,000-file tree). The walk's own checks compare
  // with the values of <sys/stat.h> instead, which are the same on every
  // Linux architecture: `status -R` of mkhome.py's projects takes 293.0M
  // user instructions under callgrind so, 301.0M through the getters
  // (docs/performance.md).

  /// `S_IFDIR`.
  @inlinable package static var directoryBits: CInterop.Mode { 0o040000 }
  /// `S_IFREG`.
  @inlinable package static var regularBits: CInterop.Mode { 0o100000 }

  /// `S_IFCHR`.
  @inlinable package static var characterDeviceBits: CInterop.Mode { 0o020000 }

  /// Whether this is a directory.
  @inlinable package var isDirectory: Bool { rawValue == Self.directoryBits }

  /// Whether this is a regular file.
  @inlinable package var isRegular: Bool { rawValue == Self.regularBits }

  /// Whether this is a character device.
  @inlinable package var isCharacterDevice: Bool { rawValue == Self.characterDeviceBits }

  /// Whether this is a regular file or a directory, the two kinds of item
  /// that carry user attributes and so marks.
  @inlinable package var isRegularOrDirectory: Bool { isRegular || isDirectory }
}
