import SkipBackupSystem

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
/// (legacy, resource and xdg: the default set, the rows of the table that
/// say so). `nodump` and `cachedir` are left out of `all` because they act
/// beyond attributes: one changes inode flags, the other writes a file.
/// Members always come in that order: legacy, resource, xdg, nodump,
/// cachedir.
///
/// A set algebra whose elements are sets, as an `OptionSet`'s are, but
/// not one: an `OptionSet`'s `rawValue` would make the bits, which the
/// table assigns, part of the library's API.
public struct MechanismSet: SetAlgebra, Hashable, Sendable, CustomStringConvertible {
  public typealias Element = MechanismSet

  /// One bit a member, as the table's rows claim them.
  package var bits: UInt8

  package init(bits: UInt8) {
    self.bits = bits
  }

  /// The empty set.
  public init() {
    bits = 0
  }

  /// The set of one mechanism.
  public init(_ mechanism: Mechanism) {
    bits = mechanism.definition.bit
  }

  public init(arrayLiteral sets: MechanismSet...) {
    bits = sets.reduce(0) { $0 | $1.bits }
  }

  /// Whether every member of `set` is a member.
  public func contains(_ set: MechanismSet) -> Bool { bits & set.bits == set.bits }

  public func union(_ other: MechanismSet) -> MechanismSet { MechanismSet(bits: bits | other.bits) }

  public func intersection(_ other: MechanismSet) -> MechanismSet {
    MechanismSet(bits: bits & other.bits)
  }

  public func symmetricDifference(_ other: MechanismSet) -> MechanismSet {
    MechanismSet(bits: bits ^ other.bits)
  }

  @discardableResult
  public mutating func insert(_ set: MechanismSet) -> (
    inserted: Bool, memberAfterInsert: MechanismSet
  ) {
    let inserted = !contains(set)
    bits |= set.bits
    return (inserted, set)
  }

  @discardableResult
  public mutating func remove(_ set: MechanismSet) -> MechanismSet? {
    let removed = intersection(set)
    bits &= ~set.bits
    return removed.isEmpty ? nil : removed
  }

  @discardableResult
  public mutating func update(with set: MechanismSet) -> MechanismSet? {
    let present = intersection(set)
    bits |= set.bits
    return present.isEmpty ? nil : present
  }

  public mutating func formUnion(_ other: MechanismSet) { bits |= other.bits }

  public mutating func formIntersection(_ other: MechanismSet) { bits &= other.bits }

  public mutating func formSymmetricDifference(_ other: MechanismSet) { bits ^= other.bits }

  public var isEmpty: Bool { bits == 0 }

  public static let legacy = MechanismSet(.legacy)
  public static let resource = MechanismSet(.resource)
  public static let xdg = MechanismSet(.xdg)
  public static let nodump = MechanismSet(.nodump)
  public static let cachedir = MechanismSet(.cachedir)

  /// iOS 5.0.1's attribute and the iOS 5.1 resource value: the marks a
  /// Mac writes (the table's ``Mechanism/Origin/apple`` rows).
  public static let apple = MechanismSet(
    Mechanism.allCases.filter { $0.definition.origin == .apple })

  /// Every mechanism.
  package static let every = MechanismSet(Mechanism.allCases)

  /// The mechanisms that only directories can carry.
  private static let directoriesOnly = MechanismSet(
    Mechanism.allCases.filter(\.marksDirectoriesOnly))

  /// The default set: legacy, resource and xdg, the rows of the table
  /// whose `inDefaultSet` says so. What the tool's commands act on without
  /// `-m`, and `isExcludedFromBackup` reads and writes.
  public static let all = MechanismSet(Mechanism.allCases.filter(\.definition.inDefaultSet))

  /// Every mark kept in an extended attribute, which one listing of an
  /// item's names reads (legacy, resource and xdg).
  package static let attributes = MechanismSet(Mechanism.attributeMechanisms)

  /// The set of `mechanisms`.
  public init(_ mechanisms: some Sequence<Mechanism>) {
    self = []
    for mechanism in mechanisms { insert(MechanismSet(mechanism)) }
  }

  /// The mechanisms the tool and the docs know, by short name: the
  /// default set's members, the sets `apple` and `all`, then the others.
  package static let named: [(name: String, set: MechanismSet)] =
    Mechanism.allCases.filter { all.includes($0) }.map { ($0.name, MechanismSet($0)) }
    + [("apple", .apple), ("all", .all)]
    + Mechanism.allCases.filter { !all.includes($0) }.map { ($0.name, MechanismSet($0)) }

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
  public var count: Int { bits.nonzeroBitCount }

  /// The members' short names.
  public var names: [String] { members.map(\.name) }

  /// The members' names joined by commas, such as `legacy,resource`.
  public var name: String { names.joined(separator: ",") }

  public var description: String { name }

  /// The members that can mark a file that is not a directory: all but
  /// those that mark only directories.
  public var applicableToFiles: MechanismSet { subtracting(Self.directoriesOnly) }

  /// Whether any member marks `item`.
  public func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try !marks(on: item).isEmpty
  }

  /// Marks with each member. A member that fails does not stop the others;
  /// the first error is thrown after all have been tried.
  @discardableResult
  public func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try mark(item, form: .local)
  }

  /// Marks with each member, Apple's (legacy and resource) in `form` (a
  /// Samba server's stream for ``MarkForm/smb``), the others as
  /// ``mark(_:)`` does.
  ///
  /// Each attribute member is written at once where its name is not there
  /// (one call an item, for an unmarked tree); where it is, whether it is a
  /// mark already is read, when other members write a Linux name too, from
  /// one listing of the item's names (``ItemAttributes``), made then and
  /// kept for them; a member alone reads its value, one call where a
  /// listing and then the value would be two.
  @discardableResult
  package func mark(_ item: FileItem, form: MarkForm) throws(SkipBackupError) -> Bool {
    // The members that write their Linux name: in another form, Apple's
    // write a Samba stream instead.
    let linuxNames =
      form == .local ? intersection(.attributes) : intersection(.attributes).subtracting(.apple)
    let withOthers = linuxNames.count > 1
    var listing: ItemAttributes?
    return try forEachMember { mechanism throws(SkipBackupError) in
      guard linuxNames.includes(mechanism) else { return try form.mark(mechanism, on: item) }
      return try mechanism.markAttribute(item, sharing: &listing, withOthers: withOthers)
    }
  }

  /// Whether every member's mark is on `item` as ``mark(_:form:)`` writes
  /// it: Apple's in `form`, the others as ever. What a dry run of `mark
  /// --form` asks.
  package func isMarked(_ item: FileItem, in form: MarkForm) throws(SkipBackupError) -> Bool {
    for mechanism in members {
      if try !form.holdsMark(of: mechanism, on: item) { return false }
    }
    return true
  }

  /// Clears each member's mark, as ``mark(_:)`` marks, in every form it has:
  /// for legacy and resource the streams a Samba server keeps too. One
  /// listing of the item's names (``ItemAttributes``) says which members'
  /// attributes and which streams are there, so an item without marks costs
  /// that one call; where the listing cannot be made, each member's own
  /// calls say why, as they would alone.
  @discardableResult
  public func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try clear(
      item,
      listed: isDisjoint(with: .attributes) && isDisjoint(with: .apple)
        ? nil : try? ItemAttributes(of: item))
  }

  /// ``clear(_:)`` by the caller's listing of the item's names, made just
  /// before: only what it lists is removed.
  @discardableResult
  package func clear(_ item: FileItem, listed listing: ItemAttributes?) throws(SkipBackupError)
    -> Bool
  {
    var changed = try forEachMember { mechanism throws(SkipBackupError) in
      if let listing, mechanism.isAttribute {
        return try mechanism.clearAttribute(item, listed: listing)
      }
      return try mechanism.clear(item)
    }
    if !isDisjoint(with: .apple) {
      changed = try MarkForm.clearSambaStreams(self, on: item, listed: listing) || changed
    }
    return changed
  }

  /// Throws what ``mark(_:)`` or ``clear(_:)`` with each member would
  /// fail with (the first error, after all were looked at), writing nothing.
  /// The attribute members share one question, whether this user may write
  /// the item's user attributes, and their probes are one identical call
  /// (`ExtendedAttributes.checkWritable(_:)`): the first asks it for all,
  /// and its error is the one the others would throw after it.
  public func check(_ item: FileItem) throws(SkipBackupError) {
    var probed = false
    _ = try forEachMember { mechanism throws(SkipBackupError) in
      if mechanism.attributeName != nil {
        if probed { return false }
        probed = true
      }
      try mechanism.check(item)
      return false
    }
  }

  /// The members whose mark `item` carries: the walk's hot path, without an
  /// allocation.
  public func marks(on item: FileItem) throws(SkipBackupError) -> MechanismSet {
    var ownNames = false
    return try marks(on: item, holdsOwnNames: &ownNames)
  }

  /// ``marks(on:)``, and whether the item may hold a name in skipbackup's
  /// own namespace (``ItemAttributes/holdsOwnNames``, where a sweep keeps its
  /// record): `false` only when the listing of names that the marks needed
  /// anyway has none. `du` reads the rule behind a mark only there: on the
  /// 200,000-file tree, 20,040 marked items and not one record, a
  /// `getxattr` each saved.
  package func marks(
    on item: FileItem, holdsOwnNames: inout Bool
  ) throws(SkipBackupError) -> MechanismSet {
    var marks: MechanismSet = []
    let attributeMembers = intersection(.attributes)
    holdsOwnNames = true
    if !attributeMembers.isEmpty {
      // One listing of the item's attribute names tells which members may
      // mark it; values are read only for members that look at them. Even
      // for one member: a `getxattr` of a `user.` name checks read
      // permission on the inode, which a listing does not: on the
      // 200,000-file tree `status -R -m resource` took 175.7 ms that way and
      // takes 158.0 ms with the listing (hyperfine, 15 runs).
      let attributes = try ItemAttributes(of: item)
      marks = try attributes.marks(attributeMembers, on: item)
      holdsOwnNames = attributes.holdsOwnNames
    }
    return marks.union(try marksOutsideAttributes(on: item))
  }

  /// ``marks(on:)`` from `attributes`, a listing of the item's names that
  /// the caller made and reads more from: one listing where two would say
  /// the same. With `namesSuffice`, a listed name is its mark
  /// (``ItemAttributes/marks(_:on:namesSuffice:)``).
  package func marks(
    on item: FileItem, listed attributes: ItemAttributes, namesSuffice: Bool = false
  ) throws(SkipBackupError) -> MechanismSet {
    try attributes.marks(intersection(.attributes), on: item, namesSuffice: namesSuffice)
      .union(marksOutsideAttributes(on: item))
  }

  /// The members kept elsewhere than in attributes (the nodump flag, a
  /// CACHEDIR.TAG) whose mark `item` carries, each read where the table
  /// says it is kept.
  @inline(__always)
  private func marksOutsideAttributes(on item: FileItem) throws(SkipBackupError) -> MechanismSet {
    var marks: MechanismSet = []
    let outside = subtracting(.attributes)
    if outside.isEmpty { return marks }
    for mechanism in Mechanism.allCases where outside.includes(mechanism) {
      if try mechanism.isMarked(item) { marks.insert(MechanismSet(mechanism)) }
    }
    return marks
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

/// A mechanism name that is none of the short names ``MechanismSet/init(parsing:)``
/// takes: the mechanisms (`legacy`, `resource`, `xdg`, `nodump`, `cachedir`)
/// and the sets `all` and `apple`.
public struct UnknownMechanismError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The name as it was given.
  public var name: String

  public var description: String {
    let known = MechanismSet.named.map(\.name).joined(separator: ", ")
    return "unknown mechanism '\(name)'; the mechanisms are \(known)"
  }
}
