import SkipBackupSystem

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where a Mac's marks land on a Linux file server that shares folders with
/// Macs: the one table of the names a mark can have on disk, which mark each
/// name is, and which server stores it so.
///
/// A Mac client sends an extended attribute to the server; the server keeps
/// it in one of these forms (each read from the server's source and seen on
/// Debian 12's Samba 4.17, docs/format.md):
///
/// | form | legacy (`com.apple.MobileBackup`) | resource (`com.apple.metadata:com_apple_backup_excludeItem`) |
/// | --- | --- | --- |
/// | ``local`` | `user.com.apple.MobileBackup` | `user.com.apple.metadata:com_apple_backup_excludeItem` |
/// | ``smb`` | `user.DosStream.com.apple.MobileBackup:$DATA` | `user.DosStream.com.apple.metadata` U+F022 `com_apple_backup_excludeItem:$DATA` |
/// | ``smbNative`` | as ``smb`` | `user.DosStream.com.apple.metadata:com_apple_backup_excludeItem:$DATA` |
///
/// - ``local``: Linux's own name, which `rsync -X` gives a Mac's attribute
///   and netatalk 3 stores (`libatalk/vfs/extattr.c` puts `user.` before the
///   name; with `ea = samba` `ea_sys.c` adds one NUL byte to the value).
/// - ``smb``: Samba with `vfs_fruit` and `vfs_streams_xattr`: a Mac's
///   attribute reaches it as an alternate data stream, kept in the attribute
///   `user.DosStream.` STREAM `:$DATA` (`streams_xattr_get_name`), whose
///   value is the stream's bytes and one byte more, 0: `streams_xattr_openat`
///   creates the attribute as that one byte ("xattrs need at least 1 byte")
///   and `streams_xattr_pwrite` keeps it after the data. With fruit's default `fruit:encoding =
///   private` the ":" of a Mac's name arrives as U+F022 (bytes EF 80 A2,
///   `macos_ntfs_char` in string_replace.c).
/// - ``smbNative``: `fruit:encoding = native` with `vfs_catia`: the ":" stays.
///
/// With `streams_xattr:store_stream_type = no` Samba leaves `:$DATA` off
/// (`streams_xattr_get_name`): the reader takes those names too.
///
/// What counts is Apple's rule on the stream's bytes, as for the local name:
/// the resource value counts whenever it is there; the legacy attribute when
/// its first byte is not 0. Samba's and netatalk's extra byte is at the end,
/// so the first byte is the stream's: a stream of `01` is `01 00` on disk and
/// counts, an empty one is `00` and does not. No other `user.DosStream.`
/// stream counts.
package enum MarkForm: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// `user.` and the Mac's name: Linux, `rsync -X`, netatalk.
  case local
  /// Samba's stream, `fruit:encoding = private` (Samba's default).
  case smb
  /// Samba's stream, `fruit:encoding = native`.
  case smbNative = "smb-native"

  /// The form's short name, as `mark --form` takes it.
  package var name: String { rawValue }

  package var description: String { name }

  /// The attribute that keeps `mechanism`'s mark in this form, for the
  /// Apple mechanisms (with `:$DATA`, as Samba writes by default).
  package func attributeName(for mechanism: Mechanism) -> AttributeName? {
    guard self != .local else { return mechanism.attributeName }
    return SambaStream.written(mechanism, in: self).map { AttributeName($0.name) }
  }

  /// The bytes a mark writes in this form: Samba's stream ends with its extra 0.
  package func value(for mechanism: Mechanism) -> [UInt8]? {
    guard let value = mechanism.markValue else { return nil }
    return self == .local ? value : value + [0]
  }
}

/// One attribute name under which Samba keeps a Mac's mark: the rows of
/// ``MarkForm``'s table that start with `user.DosStream.`.
package enum SambaStream: Int, CaseIterable, Sendable {
  case legacy, legacyUntyped
  case resourcePrivate, resourceNative, resourcePrivateUntyped, resourceNativeUntyped

  /// The whole attribute name.
  package var name: StaticString {
    switch self {
    case .legacy: "user.DosStream.com.apple.MobileBackup:$DATA"
    case .legacyUntyped: "user.DosStream.com.apple.MobileBackup"
    case .resourcePrivate:
      "user.DosStream.com.apple.metadata\u{F022}com_apple_backup_excludeItem:$DATA"
    case .resourceNative: "user.DosStream.com.apple.metadata:com_apple_backup_excludeItem:$DATA"
    case .resourcePrivateUntyped:
      "user.DosStream.com.apple.metadata\u{F022}com_apple_backup_excludeItem"
    case .resourceNativeUntyped: "user.DosStream.com.apple.metadata:com_apple_backup_excludeItem"
    }
  }

  /// The stream in which `form` keeps `mechanism`'s mark, as Samba writes
  /// it by default (with `:$DATA`); `nil` in the local form, and for a mark
  /// no Mac writes. One case for each mechanism, and no default: a new
  /// mechanism is a compile error here until it says which streams, if
  /// any, a Mac's copy of it lands in.
  package static func written(_ mechanism: Mechanism, in form: MarkForm) -> SambaStream? {
    switch (mechanism, form) {
    case (_, .local): nil
    case (.legacy, .smb), (.legacy, .smbNative): .legacy
    case (.resource, .smb): .resourcePrivate
    case (.resource, .smbNative): .resourceNative
    case (.xdg, _), (.nodump, _), (.cachedir, _): nil
    }
  }

  /// The mark the stream is.
  package var mechanism: Mechanism {
    switch self {
    case .legacy, .legacyUntyped: .legacy
    case .resourcePrivate, .resourceNative, .resourcePrivateUntyped, .resourceNativeUntyped:
      .resource
    }
  }

  /// How `status -v` names the form.
  package var label: String {
    switch self {
    case .legacy: "Samba stream com.apple.MobileBackup"
    case .legacyUntyped: "Samba stream com.apple.MobileBackup, store_stream_type = no"
    case .resourcePrivate:
      "Samba stream com.apple.metadata:com_apple_backup_excludeItem, fruit:encoding = private"
    case .resourceNative:
      "Samba stream com.apple.metadata:com_apple_backup_excludeItem, fruit:encoding = native"
    case .resourcePrivateUntyped:
      "Samba stream com.apple.metadata:com_apple_backup_excludeItem, fruit:encoding = private, "
        + "store_stream_type = no"
    case .resourceNativeUntyped:
      "Samba stream com.apple.metadata:com_apple_backup_excludeItem, fruit:encoding = native, "
        + "store_stream_type = no"
    }
  }

  /// The stream whose attribute has the name `name` (one entry of a
  /// `listxattr` list), if any. The six names differ in length (43, 37, 70,
  /// 68, 64 and 62 bytes), so the length picks the one candidate and one
  /// `memcmp` settles it: a name of any other length costs a few
  /// comparisons of integers, as in `Mechanism.attributeMechanism(named:)`.
  @inline(__always)
  package static func named(_ name: UnsafeRawBufferPointer) -> SambaStream? {
    let stream: SambaStream
    switch name.count {
    case SambaStream.legacy.name.utf8CodeUnitCount: stream = .legacy
    case SambaStream.legacyUntyped.name.utf8CodeUnitCount: stream = .legacyUntyped
    case SambaStream.resourcePrivate.name.utf8CodeUnitCount: stream = .resourcePrivate
    case SambaStream.resourceNative.name.utf8CodeUnitCount: stream = .resourceNative
    case SambaStream.resourcePrivateUntyped.name.utf8CodeUnitCount: stream = .resourcePrivateUntyped
    case SambaStream.resourceNativeUntyped.name.utf8CodeUnitCount: stream = .resourceNativeUntyped
    default: return nil
    }
    let candidate = stream.name
    return name.equals(candidate) ? stream : nil
  }
}

/// The Samba streams a listing of an item's attribute names held.
package struct SambaStreams: OptionSet, Sendable {
  package let rawValue: UInt8
  package init(rawValue: UInt8) { self.rawValue = rawValue }
  package init(_ stream: SambaStream) { rawValue = 1 << UInt8(stream.rawValue) }

  package static let resource: SambaStreams = [
    .init(.resourcePrivate), .init(.resourceNative), .init(.resourcePrivateUntyped),
    .init(.resourceNativeUntyped),
  ]

  package mutating func insert(named name: UnsafeRawBufferPointer) -> Bool {
    guard let stream = SambaStream.named(name) else { return false }
    insert(SambaStreams(stream))
    return true
  }

  package var members: [SambaStream] {
    SambaStream.allCases.filter { contains(SambaStreams($0)) }
  }

  /// Which of `mechanisms` these streams mark on `item`, by the table's
  /// value rule of each stream's mechanism (the resource value by its
  /// presence, the legacy attribute by its first byte), read only from the
  /// streams listed and only until one marks it.
  package func marks(
    for mechanisms: MechanismSet, on item: FileItem
  ) throws(SkipBackupError) -> MechanismSet {
    var marks: MechanismSet = []
    for stream in SambaStream.allCases where contains(SambaStreams(stream)) {
      let mechanism = MechanismSet(stream.mechanism)
      guard mechanisms.contains(mechanism), !marks.contains(mechanism) else { continue }
      if stream.mechanism.presenceIsMark {
        marks.insert(mechanism)
      } else if try stream.isMark(on: item) {
        marks.insert(mechanism)
      }
    }
    return marks
  }
}

extension SambaStream {
  /// Whether the stream's attribute on `item` holds a mark, by Apple's rule
  /// for its mechanism (see ``MarkForm``).
  package func isMark(on item: FileItem) throws(SkipBackupError) -> Bool {
    let attributes = ExtendedAttributes(of: item)
    do {
      if mechanism.presenceIsMark { return try attributes.contains(AttributeName(name)) }
      return try attributes.withValue(of: AttributeName(name)) { $0.map(mechanism.isMark) ?? false }
    } catch  where error.errno == .notSupported {
      return false
    }
  }
}

extension MarkForm {
  /// The forms in which `item` carries a mark of `mechanisms`, by the names
  /// `status -v` gives them, when a Samba stream is among them (the local
  /// name alone goes without saying): one listing, and a value read only
  /// for a legacy name. Read for marked items only.
  package static func labels(
    of item: FileItem, mechanisms: MechanismSet
  ) throws(SkipBackupError) -> [String] {
    try labels(of: item, listed: ItemAttributes(of: item), mechanisms: mechanisms)
  }

  /// ``labels(of:mechanisms:)`` from `attributes`, the caller's listing of
  /// the item's names.
  package static func labels(
    of item: FileItem, listed attributes: ItemAttributes, mechanisms: MechanismSet
  ) throws(SkipBackupError) -> [String] {
    let (local, streams) = (attributes.listed, attributes.streams)
    if streams.isEmpty { return [] }
    var labels: [String] = []
    for mechanism in MechanismSet.apple.members where mechanisms.includes(mechanism) {
      if local.includes(mechanism), try mechanism.isAttributeMarked(item) {
        labels.append(mechanism.attributeName!.description)
      }
      for stream in streams.members where stream.mechanism == mechanism {
        if try stream.isMark(on: item) { labels.append(stream.label) }
      }
    }
    return labels
  }

  /// Whether `item` carries `mechanism`'s mark in this form's attribute
  /// (a mark no Mac writes, where it always is).
  package func holdsMark(of mechanism: Mechanism, on item: FileItem) throws(SkipBackupError) -> Bool
  {
    guard let stream = SambaStream.written(mechanism, in: self) else {
      return try mechanism.isMarked(item)
    }
    return try stream.isMark(on: item)
  }

  /// Writes `mechanism`'s mark on `item` in this form (a mark no Mac
  /// writes, where it always is); returns whether anything was written
  /// (not when the form's attribute holds a mark already).
  package func mark(_ mechanism: Mechanism, on item: FileItem) throws(SkipBackupError) -> Bool {
    guard let stream = SambaStream.written(mechanism, in: self), let value = value(for: mechanism)
    else { return try mechanism.mark(item) }
    let attributes = ExtendedAttributes(of: item)
    let name = AttributeName(stream.name)
    do {
      try attributes.setValue(value, of: name, mode: .create)
      return true
    } catch  where error.errno == .fileExists {
      if mechanism.presenceIsMark { return false }
      if try stream.isMark(on: item) { return false }
      try attributes.setValue(value, of: name)
      return true
    }
  }

  /// Removes every Samba stream that keeps a mark of `mechanisms` on `item`
  /// (a legacy stream only when it is a mark, as the local name): one
  /// listing, and a removal for each stream listed. Returns whether one was
  /// removed.
  package static func clearSambaStreams(
    _ mechanisms: MechanismSet, on item: FileItem, listed listing: ItemAttributes? = nil
  ) throws(SkipBackupError) -> Bool {
    let streams: SambaStreams
    if let listing {
      streams = listing.streams
    } else {
      do {
        streams = try ItemAttributes(of: item).streams
      } catch  where error.isRefusedForFileType {
        return false
      }
    }
    var removed = false
    for stream in streams.members where mechanisms.includes(stream.mechanism) {
      if !stream.mechanism.presenceIsMark, try !stream.isMark(on: item) { continue }
      removed =
        try ExtendedAttributes(of: item).removeValue(of: AttributeName(stream.name)) || removed
    }
    return removed
  }
}
