#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Several mechanisms acting as one: marking marks with each, clearing
/// clears each, and an item reads as marked when any of them says so.
///
/// ``marks(on:)`` says which members mark an item. For the members kept in
/// extended attributes it asks the kernel for the item's attribute names
/// once, and reads a value only where a member needs it, so that a query of
/// every attribute mechanism usually costs one call per item.
///
/// The tool names sets by short names: `legacy`, `resource`, `xdg`,
/// `nodump` and `cachedir`, and `apple` (legacy and resource) and `all`
/// (legacy, resource and xdg: every mark kept in an attribute). `nodump`
/// and `cachedir` are left out of `all` because they act beyond
/// attributes: one changes inode flags, the other writes a file. Members
/// always come in that order: legacy, resource, xdg, nodump, cachedir.
public struct MechanismSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt8

  public init(rawValue: UInt8) {
    self.rawValue = rawValue
  }

  /// The set of one mechanism.
  public init(_ mechanism: Mechanism) {
    switch mechanism {
    case .legacy: rawValue = 1
    case .resource: rawValue = 2
    case .xdg: rawValue = 4
    case .nodump: rawValue = 8
    case .cachedir: rawValue = 16
    }
  }

  public static let legacy = MechanismSet(.legacy)
  public static let resource = MechanismSet(.resource)
  public static let xdg = MechanismSet(.xdg)
  public static let nodump = MechanismSet(.nodump)
  public static let cachedir = MechanismSet(.cachedir)

  /// iOS 5.0.1's attribute and the iOS 5.1 resource value.
  public static let apple: MechanismSet = [.legacy, .resource]

  /// Every mark kept in an extended attribute: legacy, resource and xdg.
  public static let all: MechanismSet = [.legacy, .resource, .xdg]

  /// The mechanisms the tool and the docs know, by short name.
  public static let named: [(name: String, set: MechanismSet)] =
    Mechanism.allCases.prefix(3).map { ($0.name, MechanismSet($0)) }
    + [("apple", .apple), ("all", .all), ("nodump", .nodump), ("cachedir", .cachedir)]

  /// The set named by a comma-separated list of short names, such as
  /// `legacy,resource` or `all,nodump`.
  public init(parsing list: some StringProtocol) throws(UnknownMechanismError) {
    self = []
    for name in list.split(separator: ",", omittingEmptySubsequences: false) {
      // "legacy, resource" as well as "legacy,resource".
      let start = name.firstIndex { $0 != " " } ?? name.endIndex
      let name = name[start..<(name.lastIndex { $0 != " " }.map(name.index(after:)) ?? start)]
      guard let set = Self.named.first(where: { $0.name == name })?.set else {
        throw UnknownMechanismError(name: String(name))
      }
      formUnion(set)
    }
  }

  /// Whether `mechanism` is a member.
  public func includes(_ mechanism: Mechanism) -> Bool {
    contains(MechanismSet(mechanism))
  }

  /// The members, in order.
  public var members: [Mechanism] { Mechanism.allCases.filter(includes) }

  /// How many members there are.
  public var count: Int { rawValue.nonzeroBitCount }

  /// The members' short names.
  public var names: [String] { members.map(\.name) }

  /// The members' names joined by commas, such as `legacy,resource`.
  public var name: String { names.joined(separator: ",") }

  public var description: String { name }

  /// The members that can mark a file that is not a directory: all but
  /// those that mark only directories.
  public var applicableToFiles: MechanismSet { subtracting(.cachedir) }

  /// Whether any member marks `item`.
  public func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try !marks(on: item).isEmpty
  }

  /// Marks with each member. A member that fails does not stop the others;
  /// the first error is thrown after all have been tried.
  @discardableResult
  public func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try forEachMember { mechanism throws(SkipBackupError) in try mechanism.mark(item) }
  }

  /// Clears each member's mark, as ``mark(_:)`` marks.
  @discardableResult
  public func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try forEachMember { mechanism throws(SkipBackupError) in try mechanism.clear(item) }
  }

  /// Throws what ``mark(_:)`` or ``clear(_:)`` with each member would
  /// fail with (the first error, after all were looked at), writing nothing.
  public func check(_ item: FileItem) throws(SkipBackupError) {
    _ = try forEachMember { mechanism throws(SkipBackupError) in
      try mechanism.check(item)
      return false
    }
  }

  /// The members whose mark `item` carries: the walk's hot path, without an
  /// allocation.
  public func marks(on item: FileItem) throws(SkipBackupError) -> MechanismSet {
    var sweepRecord = false
    return try marks(on: item, sweepRecord: &sweepRecord)
  }

  /// ``marks(on:)``, and whether the item may carry a sweep's record
  /// (``SweepProvenance/attributeName``): `false` only when the listing of
  /// names that the marks needed anyway has none. `du` reads the rule behind
  /// a mark only there: on the 200,000-file tree, 20,040 marked items and
  /// not one record, a `getxattr` each saved.
  package func marks(
    on item: FileItem, sweepRecord: inout Bool
  ) throws(SkipBackupError) -> MechanismSet {
    var marks: MechanismSet = []
    let attributeMembers = intersection(.all)
    sweepRecord = true
    if !attributeMembers.isEmpty {
      // One listing of the item's attribute names tells which members may
      // mark it; values are read only for members that look at them. Even
      // for one member: a `getxattr` of a `user.` name checks read
      // permission on the inode, which a listing does not: on the
      // 200,000-file tree `status -R -m resource` took 175.7 ms that way and
      // takes 158.0 ms with the listing (hyperfine, 15 runs).
      let listed = try Self.listedAttributeMarks(of: item, sweepRecord: &sweepRecord)
        .intersection(attributeMembers)
      marks = listed.intersection(.resource)  // present is marked
      if listed.contains(.legacy), try Mechanism.legacy.isAttributeMarked(item) {
        marks.insert(.legacy)
      }
      if listed.contains(.xdg), try Mechanism.xdg.isAttributeMarked(item) { marks.insert(.xdg) }
    }
    if contains(.nodump), try NodumpFlag.isMarked(item) { marks.insert(.nodump) }
    if contains(.cachedir), try CacheDirectoryTag.isMarked(item) { marks.insert(.cachedir) }
    return marks
  }

  /// The attribute mechanisms whose attribute the item has, whatever its
  /// value, and whether a sweep's record is among the names.
  private static func listedAttributeMarks(
    of item: FileItem, sweepRecord: inout Bool
  ) throws(SkipBackupError) -> MechanismSet {
    do {
      var listed: MechanismSet = []
      var record = false
      try ExtendedAttributes(of: item).forEachName { name in
        if let mechanism = Mechanism.attributeMechanism(named: name) {
          listed.insert(MechanismSet(mechanism))
        } else if SweepProvenance.isRecordName(name) {
          record = true
        }
      }
      sweepRecord = record
      return listed
    } catch  where error.errno == .notSupported {
      sweepRecord = false
      return []
    }
  }

  private func forEachMember(
    _ body: (Mechanism) throws(SkipBackupError) -> Bool
  ) throws(SkipBackupError) -> Bool {
    var changed = false
    var firstError: SkipBackupError?
    for mechanism in members {
      do {
        changed = try body(mechanism) || changed
      } catch {
        if firstError == nil { firstError = error }
      }
    }
    if let firstError { throw firstError }
    return changed
  }
}

/// A mechanism name that is none of those ``MechanismSet/named`` lists.
public struct UnknownMechanismError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The name as it was given.
  public var name: String

  public var description: String {
    let known = MechanismSet.named.map(\.name).joined(separator: ", ")
    return "unknown mechanism '\(name)'; the mechanisms are \(known)"
  }
}
