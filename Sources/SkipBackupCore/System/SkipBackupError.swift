// The one place where errno becomes a Swift error, and where every error's
// message is written.

import SystemPackage

/// A call on a file that failed: the errno, the C call, the item's path and
/// the attribute, with a sentence that says what went wrong.
///
/// Every throwing API of SkipBackup throws this type. Its ``description``
/// names the path first, as command-line tools do:
///
///     /proc/self/comm: the filesystem here keeps no user extended attributes
///     (lsetxattr user.com.apple.MobileBackup: Operation not supported)
public struct SkipBackupError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The error number the call set.
  public var errno: Errno
  /// The C function that failed, such as `lsetxattr`.
  public var call: String
  /// The item the call acted on, as the caller named it.
  public var path: FilePath
  /// The extended attribute involved, if any.
  public var attribute: AttributeName?
  /// What the item is, where that explains the error: Linux refuses user
  /// attributes on symbolic links, devices, FIFOs and sockets with `EPERM`.
  public var fileType: FileType?
  /// A condition SkipBackup refuses by itself, rather than the kernel.
  internal var refusal: Refusal?

  internal enum Refusal: Hashable, Sendable {
    /// A `CACHEDIR.TAG` that is not a cache directory tag: never overwritten.
    case foreignCacheDirectoryTag
    /// An item that is not a directory cannot carry a `CACHEDIR.TAG`.
    case cacheDirectoryTagNeedsDirectory
    /// Only regular files and directories carry inode flags; others are
    /// not even opened (opening a device can act on it).
    case inodeFlagsNeedFileOrDirectory
    /// A URL that names no file.
    case notAFileURL
    /// A save or copy that would lose an attribute of the old file (or the
    /// source), because it cannot be read, or not written on the new file.
    case attributeNotKept(reading: Bool)
    /// A copy from, or a save over, anything but a regular file.
    case notARegularFile
    /// A save through a symbolic link that leads nowhere.
    case danglingSymbolicLink
  }

  internal init(
    errno: Errno, call: String, path: FilePath, attribute: AttributeName? = nil,
    fileType: FileType? = nil, refusal: Refusal? = nil
  ) {
    self.errno = errno
    self.call = call
    self.path = path
    self.attribute = attribute
    self.fileType = fileType
    self.refusal = refusal
  }

  /// An error from a call on `item`. When Linux answers `EPERM`, the item's
  /// type is looked up, because for a symbolic link, a device, a FIFO or a
  /// socket that is the whole explanation.
  internal init(errno: Errno, call: String, item: FileItem, attribute: AttributeName? = nil) {
    self.init(errno: errno, call: call, path: item.displayPath, attribute: attribute)
    if errno == .notPermitted {
      fileType = item.typeIfKnown()
    }
  }

  /// Whether the item was gone when the call was made.
  public var isNoSuchFile: Bool { errno == .noSuchFileOrDirectory }

  /// Whether the error is the kernel refusing user attributes on a symbolic link.
  public var isSymbolicLinkRefusal: Bool {
    errno == .notPermitted && fileType == .symbolicLink
  }

  /// Whether the kernel refused because the item is a symbolic link, a
  /// device, a FIFO or a socket: Linux keeps user attributes on none of them.
  public var isRefusedForFileType: Bool {
    guard errno == .notPermitted, let fileType else { return false }
    return fileType != .regular && fileType != .directory
  }

  /// What went wrong, in words, without the path.
  public var reason: String {
    if let refusal {
      switch refusal {
      case .foreignCacheDirectoryTag:
        return "a CACHEDIR.TAG is there that is not a cache directory tag; it is left as it is"
      case .cacheDirectoryTagNeedsDirectory:
        return "only a directory can carry a CACHEDIR.TAG"
      case .inodeFlagsNeedFileOrDirectory:
        let what = fileType.map { ", and this is \(Self.article($0))" } ?? ""
        return "only regular files and directories carry the nodump flag (chattr +d)\(what)"
      case .notAFileURL:
        return "not a file URL: only files and directories carry backup marks"
      case .attributeNotKept(let reading):
        let why = errno.description.lowercasedFirst
        let what = attribute.map { "the attribute \($0)" } ?? "an attribute"
        return "\(what) cannot be \(reading ? "read" : "set on the new file") (\(why)), "
          + "and the new file would lose it; nothing was replaced"
      case .notARegularFile:
        let what = fileType.map { ", and this is \(Self.article($0))" } ?? ""
        return "only a regular file can be copied or saved over\(what)"
      case .danglingSymbolicLink:
        return "a symbolic link to nothing: a save writes through a link only to a file that "
          + "exists, and never turns the link into a file"
      }
    }
    let writes = call.contains("set") || call.contains("remove")
    switch errno {
    case .noSuchFileOrDirectory:
      return "no such file or directory"
    case .notSupported:
      if call.hasPrefix("ioctl") {
        return "the filesystem here keeps no nodump flag (chattr +d)"
      }
      if let attribute, attribute.namespace == nil {
        return "'\(attribute)' is in no namespace Linux knows (user., trusted., security., system.)"
      }
      return "the filesystem here keeps no user extended attributes "
        + "(a pseudo-filesystem such as /proc, or one mounted without user_xattr)"
    case .notPermitted:
      switch fileType {
      case .symbolicLink?:
        return "Linux keeps no user extended attributes on symbolic links"
      case .fifo?, .socket?, .characterSpecial?, .blockSpecial?:
        return "Linux keeps user extended attributes only on regular files and directories, "
          + "and this is \(Self.article(fileType!))"
      default:
        if call.hasPrefix("ioctl") {
          return "operation not permitted: only the owner or root may change inode flags"
        }
        return "operation not permitted: the item is immutable or append-only (chattr +i or +a), "
          + "or a sticky directory owned by someone else"
      }
    case .permissionDenied:
      if writes {
        return "permission denied: changing its attributes needs write permission on it"
      }
      return "permission denied"
    case .noSpace where call == "write":
      return "no space left on the device"
    case .noSpace:
      return "no space left for extended attributes on this item (ext4 keeps them in one block) "
        + "or on the device"
    case .argListTooLong:
      return "the attribute value is larger than the filesystem allows"
    case .outOfRange:
      return "the attribute value kept growing while it was read"
    case .readOnlyFileSystem:
      return "read-only file system"
    case .diskQuotaExceeded:
      return "disk quota exceeded"
    case .tooManySymbolicLinkLevels where call == "openat":
      return "it is a symbolic link, which is not followed"
    case .tooManyOpenFiles:
      return "too many open files: the tree is deeper than the limit on open files allows"
    case .inappropriateIOCTLForDevice:
      return "the filesystem here keeps no inode flags (chattr)"
    default:
      return errno.description.lowercasedFirst
    }
  }

  public var description: String {
    var detail = call
    if let attribute { detail += " \(attribute)" }
    return "\(path.escapedDescription): \(reason) (\(detail): \(errno.description))"
  }

  private static func article(_ type: FileType) -> String {
    switch type {
    case .fifo: "a FIFO"
    case .socket: "a socket"
    case .characterSpecial: "a character device"
    case .blockSpecial: "a block device"
    case .symbolicLink: "a symbolic link"
    case .directory: "a directory"
    default: "a regular file"
    }
  }
}

/// Runs a raw call until it is not interrupted; -1 becomes the errno.
@inline(__always)
internal func valueOrErrno<I: FixedWidthInteger>(_ call: () -> I) -> Result<I, Errno> {
  while true {
    let result = call()
    if result != -1 { return .success(result) }
    let errno = Errno(rawValue: Glibc.errno)
    if errno != .interrupted { return .failure(errno) }
  }
}

extension Result where Failure == Errno {
  /// The value, or the errno as a ``SkipBackupError`` about `item`.
  @inline(__always)
  internal func get(
    _ call: String, _ item: FileItem, _ attribute: AttributeName? = nil
  ) throws(SkipBackupError) -> Success {
    switch self {
    case .success(let value): return value
    case .failure(let errno):
      throw SkipBackupError(errno: errno, call: call, item: item, attribute: attribute)
    }
  }
}

extension String {
  fileprivate var lowercasedFirst: String {
    guard let first else { return self }
    return first.lowercased() + dropFirst()
  }
}

extension FilePath {
  /// The path for messages: bytes as they are, except control characters and
  /// bytes that are not UTF-8, which are written as escapes (`\n`, `\xff`).
  public var escapedDescription: String {
    withCString { pointer in
      let bytes = UnsafeBufferPointer(
        start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
        count: strlen(pointer))
      return String(escapingForDisplay: bytes)
    }
  }
}

extension String {
  /// Text for a terminal from arbitrary bytes: valid UTF-8 kept, control
  /// characters and invalid bytes escaped (`\n`, `\x1b`, `\xff`).
  package init(escapingForDisplay bytes: some Collection<UInt8>) {
    let bytes = Array(bytes)
    var result = ""
    var index = 0
    while index < bytes.count {
      guard let (scalar, length) = UTF8Scalar.decode(bytes, at: index) else {
        result += "\\x" + Self.hex(bytes[index])
        index += 1
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        result += "\\x" + Self.hex(UInt8(scalar.value))
      default: result.unicodeScalars.append(scalar)
      }
      index += length
    }
    self = result
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension SkipBackupError {
  /// The refusal of a URL that is not a file URL; `url` is its text.
  package init(notAFileURL url: String) {
    self.init(errno: .invalidArgument, call: "URL", path: FilePath(url), refusal: .notAFileURL)
  }

  /// The refusal of a copy from, or a save over, what is not a regular file.
  package init(notARegularFileAt path: FilePath, type: FileType, call: String) {
    self.init(
      errno: .invalidArgument, call: call, path: path, fileType: type, refusal: .notARegularFile)
  }

  /// The refusal of a save through the dangling symbolic link at `path`.
  package init(danglingSymbolicLinkAt path: FilePath) {
    self.init(
      errno: .noSuchFileOrDirectory, call: "realpath", path: path, fileType: .symbolicLink,
      refusal: .danglingSymbolicLink)
  }

  /// The refusal of a save or copy that would lose the attribute `error` is about.
  package init(attributeNotKept error: SkipBackupError, reading: Bool) {
    self = error
    refusal = .attributeNotKept(reading: reading)
  }

  /// The refusal of a user attribute on the symbolic link at `path`, found
  /// before asking the kernel, which would say `EPERM`.
  package init(symbolicLinkRefusalAt path: FilePath, call: String) {
    self.init(errno: .notPermitted, call: call, path: path, fileType: .symbolicLink)
  }
}
