import SkipBackupSystem
import CLinux
import CXattr
import Synchronization
import SystemPackage

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The extended attributes of one item: get, set, remove and list.
///
/// A missing attribute reads as `nil`, not as an error. Interrupted calls are
/// retried, and so is a read whose value grew between asking its size and
/// reading it (`ERANGE`). Every other failure throws a `SkipBackupError`
/// naming the call, the path and the attribute.
///
///     let attributes = ExtendedAttributes(of: FileItem(path: "notes.txt"))
///     try attributes.setValue([1], of: "user.com.apple.MobileBackup")
///     try attributes.value(of: "user.com.apple.MobileBackup")  // [1]
public struct ExtendedAttributes: Sendable {
  /// The item whose attributes these are.
  public let item: FileItem

  public init(of item: FileItem) {
    self.item = item
  }

  /// How ``setValue(_:of:mode:)`` treats an attribute that exists, or does not.
  public enum SetMode: Sendable {
    /// Create the attribute, or replace its value.
    case createOrReplace
    /// Create the attribute; fail with `EEXIST` when it exists.
    case create
    /// Replace the value; fail with `ENODATA` when the attribute does not exist.
    case replace

    fileprivate var flags: CInt {
      switch self {
      case .createOrReplace: 0
      case .create: CInt(XATTR_CREATE)
      case .replace: CInt(XATTR_REPLACE)
      }
    }
  }

  /// The value of the attribute `name`, or `nil` when the item has none.
  ///
  /// The corresponding C function is `getxattr(2)` (`lgetxattr`, `fgetxattr`
  /// or `getxattrat`, as the item is reached).
  public func value(of name: AttributeName) throws(SkipBackupError) -> [UInt8]? {
    try withValue(of: name) { $0.map { Array($0.bindMemory(to: UInt8.self)) } }
  }

  /// Whether the item has the attribute `name`, whatever its value.
  ///
  /// The corresponding C function is `getxattr(2)`.
  public func contains(_ name: AttributeName) throws(SkipBackupError) -> Bool {
    let result = name.withCString { name in
      get(name, into: nil, size: 0)
    }
    return try wasThere(result, attribute: name)
  }

  /// Sets the attribute `name` to `value`.
  ///
  /// The corresponding C function is `setxattr(2)`.
  public func setValue(
    _ value: some Collection<UInt8>, of name: AttributeName, mode: SetMode = .createOrReplace
  ) throws(SkipBackupError) {
    let bytes = Array(value)
    let result = name.withCString { name in
      bytes.withUnsafeBytes { bytes in
        call(
          path: .setxattr, link: .lsetxattr, descriptor: .fsetxattr, at: .setxattrat,
          byPath: { path, follow in
            follow
              // Raw: the public API's ways to reach an item, each named by its case in
              // call(path:link:descriptor:at:) (docs/architecture.md)
              ? system_setxattr(path, name, bytes.baseAddress, bytes.count, mode.flags)
              // Raw: the public API's ways to reach an item, each named by its case in
              // call(path:link:descriptor:at:) (docs/architecture.md)
              : system_lsetxattr(path, name, bytes.baseAddress, bytes.count, mode.flags)
          },
          // Raw: the public API's ways to reach an item, each named by its case in
          // call(path:link:descriptor:at:) (docs/architecture.md)
          byDescriptor: { system_fsetxattr($0, name, bytes.baseAddress, bytes.count, mode.flags) },
          relative: { directory, path, flags in
            // Raw: the public API's ways to reach an item, each named by its case in
            // call(path:link:descriptor:at:) (docs/architecture.md)
            system_setxattrat(
              directory, path, flags, name, bytes.baseAddress, bytes.count, mode.flags)
          })
      }
    }
    if case .failure(let errno) = result.value {
      throw failure(result.call, errno, attribute: name)
    }
  }

  /// Removes the attribute `name`; returns whether there was one.
  ///
  /// The corresponding C function is `removexattr(2)`.
  @discardableResult
  public func removeValue(of name: AttributeName) throws(SkipBackupError) -> Bool {
    try wasThere(remove(name), attribute: name)
  }

  /// The `removexattr` call that fits the item, on `name`.
  private func remove(_ name: AttributeName) -> (value: Result<CInt, Errno>, call: SystemCall) {
    name.withCString { name in
      call(
        path: .removexattr, link: .lremovexattr, descriptor: .fremovexattr, at: .removexattrat,
        byPath: { path, follow in
          // Raw: the public API's ways to reach an item, each named by its case in
          // call(path:link:descriptor:at:) (docs/architecture.md)
          follow ? system_removexattr(path, name) : system_lremovexattr(path, name)
        },
        // Raw: the public API's ways to reach an item, each named by its case in
        // call(path:link:descriptor:at:) (docs/architecture.md)
        byDescriptor: { system_fremovexattr($0, name) },
        // Raw: the public API's ways to reach an item, each named by its case in
        // call(path:link:descriptor:at:) (docs/architecture.md)
        relative: { directory, path, flags in system_removexattrat(directory, path, flags, name) })
    }
  }

  /// Throws what setting or removing the attribute `name` would fail
  /// with, as that call would report it, and changes nothing: for a
  /// dry run. The kernel checks that the filesystem and the file type keep
  /// user attributes, that the item is not immutable and that this user
  /// may write it, before it looks for the name; so removing a name no one
  /// uses, ``probeName``, fails exactly where a write would, and answers
  /// `ENODATA` where it would work.
  ///
  /// The corresponding C function is `removexattr(2)`.
  package func checkWritable(_ name: AttributeName) throws(SkipBackupError) {
    let result = remove(Self.probeName)
    switch result.value {
    case .success, .failure(.noData): return
    case .failure(let errno):
      let setting: SystemCall =
        switch result.call {
        case .lremovexattr: .lsetxattr
        case .fremovexattr: .fsetxattr
        case .removexattrat: .setxattrat
        default: .setxattr
        }
      throw failure(setting, errno, attribute: name)
    }
  }

  /// The name `checkWritable(_:)` removes: none of skipbackup's marks
  /// or records, and nothing any other program is known to write.
  package static let probeName: AttributeName = "user.skipbackup.dry-run"

  /// What a call on the attribute `name` says of it: there (the call
  /// worked), not there (`ENODATA`), or the error.
  private func wasThere<I>(
    _ result: (value: Result<I, Errno>, call: SystemCall), attribute name: AttributeName
  ) throws(SkipBackupError) -> Bool {
    switch result.value {
    case .success: return true
    case .failure(.noData): return false
    case .failure(let errno): throw failure(result.call, errno, attribute: name)
    }
  }

  /// The error of a call on the attribute `name` (or the list, when `nil`),
  /// with what a look at the item finds that explains it: Linux answers
  /// `EPERM` for a symbolic link, a device, a FIFO or a socket, for an
  /// immutable item and for /proc's directories, and `EACCES` for the item
  /// or for a directory on the way to it. This is the one place that
  /// reports those, so the look is made here, after the failure only.
  private func failure(
    _ call: SystemCall, _ errno: Errno, attribute name: AttributeName? = nil
  ) -> SkipBackupError {
    var error = SkipBackupError(call, errno, path: item.displayPath, attribute: name)
    (error.fileType, error.finding) = item.explanation(of: errno)
    return error
  }

  /// The names of all the item's attributes that this process may see.
  ///
  /// The corresponding C function is `listxattr(2)`.
  public func names() throws(SkipBackupError) -> [AttributeName] {
    try withNameList { list in
      list.split(separator: 0).compactMap { AttributeName(bytes: $0) }
    }
  }

  /// Copies each attribute `skip` does not pass over to `destination`, its
  /// value read just before it is written; one gone since the list was read
  /// is passed over. The first failure, of the read or of the write, is
  /// thrown as it is: the caller says what it costs (an attribute a safe
  /// save would lose; a view that would not be exact).
  package func copy(
    to destination: ExtendedAttributes,
    skipping skip: (AttributeName) throws(SkipBackupError) -> Bool
  ) throws(SkipBackupError) {
    for name in try names() where try !skip(name) {
      guard let value = try value(of: name) else { continue }
      try destination.setValue(value, of: name)
    }
  }

  // MARK: - Reading into borrowed memory

  /// Calls `body` with the value of `name`, or `nil` when there is none. Small
  /// values take one call and no allocation.
  package func withValue<R>(
    of name: AttributeName, _ body: (UnsafeRawBufferPointer?) -> R
  ) throws(SkipBackupError) -> R {
    var capacity = 256
    var lastCall = SystemCall.getxattr
    for _ in 0..<Self.attempts {
      let read = name.withCString { name in
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
          let result = get(name, into: buffer.baseAddress, size: buffer.count)
          return (
            result.value.map { body(UnsafeRawBufferPointer(rebasing: buffer[..<$0])) }, result.call
          )
        }
      }
      switch read.0 {
      case .success(let value): return value
      case .failure(.noData): return body(nil)
      case .failure(.outOfRange):
        // Larger than the buffer, or grown since its size was asked: ask again.
        let sized = name.withCString { get($0, into: nil, size: 0) }
        lastCall = sized.call
        switch sized.value {
        case .success(let size): capacity = Self.nextCapacity(after: capacity, needed: size)
        case .failure(.noData): return body(nil)
        case .failure(let errno):
          throw failure(sized.call, errno, attribute: name)
        }
      case .failure(let errno):
        throw failure(read.1, errno, attribute: name)
      }
    }
    throw SkipBackupError(lastCall, .outOfRange, path: item.displayPath, attribute: name)
  }

  /// Calls `body` with each name the item lists (without its NUL), in the
  /// order `listxattr` gives them: one call for the whole list, and none
  /// allocated for a short one.
  package func forEachName(
    _ body: (UnsafeRawBufferPointer) -> Void
  ) throws(SkipBackupError) {
    try withNameList { list in
      // The listing is NUL-separated names.
      var start = 0
      while start < list.count {
        var end = start
        while end < list.count && list[end] != 0 { end += 1 }
        body(UnsafeRawBufferPointer(rebasing: list[start..<end]))
        start = end + 1
      }
    }
  }

  /// Calls `body` with the NUL-separated list of the item's attribute names.
  /// A short list takes one call and no allocation.
  internal func withNameList<R>(
    _ body: (UnsafeRawBufferPointer) -> R
  ) throws(SkipBackupError) -> R {
    var capacity = 1024
    var lastCall = SystemCall.listxattr
    for _ in 0..<Self.attempts {
      let listed = withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
        let result = list(into: buffer.baseAddress, size: buffer.count)
        return (
          result.value.map { body(UnsafeRawBufferPointer(rebasing: buffer[..<$0])) }, result.call
        )
      }
      switch listed.0 {
      case .success(let value): return value
      case .failure(.outOfRange):
        let sized = list(into: nil, size: 0)
        lastCall = sized.call
        switch sized.value {
        case .success(let size): capacity = Self.nextCapacity(after: capacity, needed: size)
        case .failure(let errno): throw failure(sized.call, errno)
        }
      case .failure(let errno):
        throw failure(listed.1, errno)
      }
    }
    throw SkipBackupError(lastCall, .outOfRange, path: item.displayPath)
  }

  /// Linux keeps values and lists of names to 64 KiB (`XATTR_SIZE_MAX`,
  /// `XATTR_LIST_MAX`).
  private static let largest = 65536
  /// Enough for the buffer to reach `largest` by doubling, and then some.
  private static let attempts = 16

  /// The next buffer after an `ERANGE`: what the kernel said is needed, and
  /// never less than twice the last buffer (up to `largest`), so that a value
  /// that keeps changing size between the two calls is caught within a few
  /// rounds rather than raced forever.
  private static func nextCapacity(after capacity: Int, needed: Int) -> Int {
    max(needed, min(capacity * 2, largest), 1)
  }

  // MARK: - The calls, by how the item is reached

  private func get(
    _ name: UnsafePointer<CChar>, into value: UnsafeMutableRawPointer?, size: Int
  ) -> (value: Result<Int, Errno>, call: SystemCall) {
    call(
      path: .getxattr, link: .lgetxattr, descriptor: .fgetxattr, at: .getxattrat,
      byPath: { path, follow in
        follow
          // Raw: the public API's ways to reach an item, each named by its case in
          // call(path:link:descriptor:at:) (docs/architecture.md)
          ? system_getxattr(path, name, value, size) : system_lgetxattr(path, name, value, size)
      },
      // Raw: the public API's ways to reach an item, each named by its case in
      // call(path:link:descriptor:at:) (docs/architecture.md)
      byDescriptor: { system_fgetxattr($0, name, value, size) },
      relative: { directory, path, flags in
        // Raw: the public API's ways to reach an item, each named by its case in
        // call(path:link:descriptor:at:) (docs/architecture.md)
        system_getxattrat(directory, path, flags, name, value, size)
      })
  }

  private func list(
    into list: UnsafeMutableRawPointer?, size: Int
  ) -> (value: Result<Int, Errno>, call: SystemCall) {
    let list = list?.assumingMemoryBound(to: CChar.self)
    return call(
      path: .listxattr, link: .llistxattr, descriptor: .flistxattr, at: .listxattrat,
      byPath: { path, follow in
        // Raw: the public API's ways to reach an item, each named by its case in
        // call(path:link:descriptor:at:) (docs/architecture.md)
        follow ? system_listxattr(path, list, size) : system_llistxattr(path, list, size)
      },
      // Raw: the public API's ways to reach an item, each named by its case in
      // call(path:link:descriptor:at:) (docs/architecture.md)
      byDescriptor: { system_flistxattr($0, list, size) },
      relative: { directory, path, flags in
        // Raw: the public API's ways to reach an item, each named by its case in
        // call(path:link:descriptor:at:) (docs/architecture.md)
        system_listxattrat(directory, path, flags, list, size)
      })
  }

  /// Runs whichever call reaches the item: by path, by descriptor, or relative
  /// to a directory with the `*at` calls of Linux 6.13. Where the kernel lacks
  /// those (`ENOSYS`), a relative item is reached through `/proc/self/fd`.
  private func call<I: FixedWidthInteger>(
    path pathCall: SystemCall, link linkCall: SystemCall, descriptor descriptorCall: SystemCall,
    at atCall: SystemCall,
    byPath: (UnsafePointer<CChar>, _ follow: Bool) -> I,
    byDescriptor: (CInt) -> I,
    relative: (CInt, UnsafePointer<CChar>, CUnsignedInt) -> I
  ) -> (value: Result<I, Errno>, call: SystemCall) {
    let follow = item.followsSymbolicLinks
    let byPathCall = follow ? pathCall : linkCall
    switch item.base {
    case .workingDirectory:
      return (
        item.withPathPointer { path in valueOrErrno { byPath(path, follow) } }, byPathCall
      )
    case .descriptor(let descriptor):
      return (valueOrErrno { byDescriptor(descriptor) }, descriptorCall)
    case .directory(let directory):
      if !xattrAtIsMissing {
        let flags = CUnsignedInt(follow ? 0 : CLINUX_AT_SYMLINK_NOFOLLOW)
        let result = item.withPathPointer { path in
          valueOrErrno { relative(directory, path, flags) }
        }
        guard case .failure(.noFunction) = result else { return (result, atCall) }
        xattrAtIsMissing = true
      }
      return (withProcPath(directory) { path in valueOrErrno { byPath(path, follow) } }, byPathCall)
    }
  }

  /// Calls `body` with `/proc/self/fd/DIRECTORY/NAME`, which reaches the entry
  /// through the open directory whatever the directory's own path.
  ///
  /// Built on the stack, digits and all: on a kernel without the `*xattrat`
  /// calls (Debian 12's 6.1) this runs for every entry of a walk, and a
  /// `String` interpolated and copied into an `Array` each time is about a
  /// fifth of `list`'s user instructions (callgrind, mkhome.py's swept home;
  /// docs/performance.md).
  private func withProcPath<R>(_ directory: CInt, _ body: (UnsafePointer<CChar>) -> R) -> R {
    item.withPathPointer { name in
      let prefix: StaticString = "/proc/self/fd/"
      let nameLength = cStringLength(name)
      // The prefix, at most 10 digits, a slash, the name and its NUL.
      let capacity = prefix.utf8CodeUnitCount + 11 + nameLength + 1
      return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
        var count = 0
        for byte in UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount) {
          buffer[count] = CChar(bitPattern: byte)
          count += 1
        }
        var digits = UInt32(bitPattern: directory)
        let first = count
        repeat {
          buffer[count] = CChar(UInt8(ascii: "0") + UInt8(digits % 10))
          count += 1
          digits /= 10
        } while digits > 0
        buffer[first..<count].reverse()
        buffer[count] = CChar(UInt8(ascii: "/"))
        count += 1
        (buffer.baseAddress! + count).update(from: name, count: nameLength + 1)
        return body(buffer.baseAddress!)
      }
    }
  }
}

/// Set once a kernel answers `ENOSYS` to the `*xattrat` calls (before Linux 6.13).
private let xattrAtIsMissingInProcess = Atomic<Bool>(false)

/// Whether the `*xattrat` calls are known to be missing. Under a mocking
/// driver the answer is the driver's, so that a forced `ENOSYS` stays in
/// its test.
private var xattrAtIsMissing: Bool {
  get {
    #if ENABLE_MOCKING
      if let driver = MockingDriver.current { return driver.xattrAtIsMissing }
    #endif
    return xattrAtIsMissingInProcess.load(ordering: .relaxed)
  }
  set {
    #if ENABLE_MOCKING
      if let driver = MockingDriver.current {
        driver.xattrAtIsMissing = newValue
        return
      }
    #endif
    xattrAtIsMissingInProcess.store(newValue, ordering: .relaxed)
  }
}
