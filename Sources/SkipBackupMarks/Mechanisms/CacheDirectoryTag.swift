import SkipBackupSystem
import CLinux
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A `CACHEDIR.TAG` file in a directory, as the Cache Directory Tagging
/// Specification defines it: ``Mechanism/cachedir``.
///
/// GNU tar `--exclude-caches`, borg `--exclude-caches`, restic
/// `--exclude-caches` and kopia honour it. A tag is a regular file whose
/// first 43 bytes are exactly `Signature: 8a477f597d28d172789f06886806bc55`.
///
/// This mechanism writes a file, so it acts only on directories and only when
/// asked for by name. It never writes over a `CACHEDIR.TAG` that is not a
/// valid tag, and clearing removes only the tags it wrote itself.
public enum CacheDirectoryTag {
  /// `CACHEDIR.TAG`.
  public static let fileName = "CACHEDIR.TAG"
  /// The 43 bytes a tag starts with.
  public static let signature = Array("Signature: 8a477f597d28d172789f06886806bc55".utf8)
  /// What a mark writes: the signature and the comment the
  /// specification suggests.
  public static let contents = Array(
    """
    Signature: 8a477f597d28d172789f06886806bc55
    # This file is a cache directory tag created by skipbackup.
    # For information about cache directory tags, see:
    #\thttps://bford.info/cachedir/

    """.utf8)

  /// `CACHEDIR.TAG`, as the name of an entry.
  private static let entryName = FilePath(fileName)

  static func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try withDirectory(item) { directory throws(SkipBackupError) in
      try hasTag(in: directory, item)
    } ?? false
  }

  static func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let written = try withDirectory(item) { directory throws(SkipBackupError) -> Bool in
      let created: Bool
      if let unnamed = try unnamedTag(in: directory, item) {
        created = try link(unnamed, in: directory, item)
      } else {
        created = try createInPlace(in: directory, item)
      }
      if created { return true }
      if try hasTag(in: directory, item) { return false }
      throw SkipBackupError(refusing: .foreignCacheDirectoryTag, path: tagPath(item))
    }
    guard let written else {
      throw SkipBackupError(refusing: .cacheDirectoryTagNeedsDirectory, path: item.displayPath)
    }
    return written
  }

  /// Throws what ``mark(_:)`` or ``clear(_:)`` would fail with, and
  /// leaves the directory as it is: no directory, another tool's or no
  /// tag's file under the name, or a directory this user may not write
  /// (an unnamed file, `O_TMPFILE`, made and dropped, answers that as the
  /// kernel would; where the filesystem cannot make one, that is not
  /// looked at).
  static func check(_ item: FileItem) throws(SkipBackupError) -> Bool {
    let checked = try withDirectory(item) { directory throws(SkipBackupError) -> Bool in
      let named = (try? directory.status(of: entryName, reporting: item.displayPath)) != nil
      if named, try !hasTag(in: directory, item) {
        throw SkipBackupError(refusing: .foreignCacheDirectoryTag, path: tagPath(item))
      }
      // The open the mark makes, so a dry run meets what it would meet.
      do throws(SkipBackupError) {
        _ = try UnnamedFile.open(in: directory, mode: 0o644, path: tagPath(item))
      } catch {
        throw item.explained(error)
      }
      return false
    }
    guard checked != nil else {
      throw SkipBackupError(refusing: .cacheDirectoryTagNeedsDirectory, path: item.displayPath)
    }
    return false
  }

  /// A whole tag with no name yet (`O_TMPFILE`), or `nil` where the
  /// filesystem cannot make one. Written unnamed and then linked, a tag
  /// appears whole or not at all: a mark killed half-way through leaves no
  /// short file that would read as another tool's tag (scripts/torture's
  /// kill rounds found such torn tags when the file was written in place).
  private static func unnamedTag(
    in directory: borrowing Descriptor, _ item: FileItem
  ) throws(SkipBackupError) -> Descriptor? {
    do throws(SkipBackupError) {
      guard let file = try UnnamedFile.open(in: directory, mode: 0o644, path: tagPath(item))
      else { return nil }
      try file.writeAll(contents)
      return file
    } catch {
      throw item.explained(error)
    }
  }

  /// Names the unnamed tag `file` `CACHEDIR.TAG`; `false` when that name is
  /// taken.
  private static func link(
    _ file: consuming Descriptor, in directory: borrowing Descriptor, _ item: FileItem
  ) throws(SkipBackupError) -> Bool {
    do throws(SkipBackupError) {
      try UnnamedFile.link(file, in: directory, as: entryName)
      return true
    } catch  where error.errno == .fileExists {
      return false
    } catch {
      throw item.explained(error)
    }
  }

  /// Where there is no `O_TMPFILE`: the tag created in place (`O_EXCL`);
  /// `false` when the name is taken.
  private static func createInPlace(
    in directory: borrowing Descriptor, _ item: FileItem
  ) throws(SkipBackupError) -> Bool {
    let file: Descriptor
    do throws(SkipBackupError) {
      file = try directory.open(
        entryName, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o644,
        reporting: tagPath(item))
    } catch  where error.errno == .fileExists {
      return false
    } catch {
      throw item.explained(error)
    }
    do throws(SkipBackupError) {
      try file.writeAll(contents)
    } catch {
      // The file is ours (O_EXCL). Left short, it would read as someone
      // else's CACHEDIR.TAG, which mark and clear never touch again.
      try? directory.removeEntry(entryName)
      throw item.explained(error)
    }
    return true
  }

  /// Removes the tag skipbackup wrote: a file that holds exactly
  /// ``contents``. A valid tag that another tool wrote (cargo tags its
  /// `target/` directories, restic and borg their caches) is not removed,
  /// because that tool expects it there: clearing it is refused with an
  /// error (`SkipBackupError.Refusal.cacheDirectoryTagOfAnotherTool`), so it
  /// never happens silently and the item is reported still excluded.
  static func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try withDirectory(item) { directory throws(SkipBackupError) -> Bool in
      switch try tag(in: directory, item) {
      case nil: return false
      case .another?:
        throw SkipBackupError(refusing: .cacheDirectoryTagOfAnotherTool, path: tagPath(item))
      case .skipbackup?: break
      }
      do throws(SkipBackupError) {
        try directory.removeEntry(entryName)
      } catch  where error.isNoSuchFile {
      } catch {
        throw item.explained(error)
      }
      return true
    } ?? false
  }

  /// Calls `body` with the item opened as a directory, or returns `nil` when
  /// the item is not a directory.
  private static func withDirectory<R>(
    _ item: FileItem, _ body: (borrowing Descriptor) throws(SkipBackupError) -> R
  ) throws(SkipBackupError) -> R? {
    let directory: Descriptor
    do throws(SkipBackupError) {
      directory = try item.open(.directory)
    } catch  where error.cause == .failed(.openat, .notDirectory) {
      return nil
    } catch  where error.errno == .tooManySymbolicLinkLevels && !item.followsSymbolicLinks {
      return nil  // a symbolic link, not followed: no directory, no tag
    }
    return try body(directory)
  }

  /// Whether `directory` holds a regular file `CACHEDIR.TAG` that starts with
  /// the signature.
  private static func hasTag(
    in directory: borrowing Descriptor, _ item: FileItem
  ) throws(SkipBackupError) -> Bool {
    try tag(in: directory, item) != nil
  }

  /// Who wrote a tag: skipbackup (the file holds exactly ``contents``) or
  /// another tool (cargo, restic, borg, a person: any other valid tag).
  package enum Writer { case skipbackup, another }

  /// How many bytes of a `CACHEDIR.TAG` tell its writer: one more than
  /// skipbackup writes tells a longer file from ours.
  package static let headLength = contents.count + 1

  /// The writer of a tag whose file starts with `head` (at most
  /// ``headLength`` bytes of it), or `nil` when it is no tag: it does not
  /// start with the signature.
  package static func writer(ofHead head: some Collection<UInt8>) -> Writer? {
    guard head.starts(with: signature) else { return nil }
    return head.elementsEqual(contents) ? .skipbackup : .another
  }

  /// The tag in `directory`, or `nil` when there is none: no regular file
  /// `CACHEDIR.TAG` that starts with the signature.
  private static func tag(
    in directory: borrowing Descriptor, _ item: FileItem
  ) throws(SkipBackupError) -> Writer? {
    let file: Descriptor
    do throws(SkipBackupError) {
      file = try directory.open(
        entryName, [.noFollow, .nonBlocking], reporting: tagPath(item))
    } catch  where error.isNoSuchFile || error.errno == .tooManySymbolicLinkLevels {
      return nil
    } catch {
      throw item.explained(error)
    }
    guard let status = try? file.status(), status.st_mode & S_IFMT == S_IFREG else { return nil }
    var head = [UInt8](repeating: 0, count: headLength)
    var filled = 0
    do throws(SkipBackupError) {
      while filled < head.count {
        let count = try file.read(into: &head, from: filled)
        if count == 0 { break }
        filled += count
      }
    } catch {
      throw item.explained(error)
    }
    return writer(ofHead: head[..<filled])
  }

  /// The path of the tag in the directory `item`, for messages.
  private static func tagPath(_ item: FileItem) -> FilePath {
    item.displayPath.appending(fileName)
  }
}
