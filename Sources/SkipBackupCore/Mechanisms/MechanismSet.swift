/// Several mechanisms acting as one: marking marks with each, clearing
/// clears each, and an item reads as marked when any of them says so.
///
/// ``marks(on:)`` says which members mark an item. For the members kept in
/// extended attributes it asks the kernel for the item's attribute names
/// once, and reads a value only where a rule needs it, so that a query of
/// every attribute mechanism usually costs one call per item.
///
/// The tool names sets by short names: `legacy`, `resource`, `xdg`,
/// `nodump` and `cachedir`, and `apple` (legacy and resource) and `all`
/// (legacy, resource and xdg: every mark kept in an attribute). `nodump`
/// and `cachedir` are left out of `all` because they act beyond
/// attributes: one changes inode flags, the other writes a file.
public struct MechanismSet: BackupExclusionMechanism, RandomAccessCollection, Hashable,
  CustomStringConvertible
{
  /// The members, each once, in the order they were given.
  public let members: [any BackupExclusionMechanism]
  /// How to read the members kept in extended attributes, in member order.
  private let attributeRules: [AttributeRule]
  /// The attribute names of those members, one after the other.
  private let attributeNames: [UInt8]
  /// The positions of the other members.
  private let otherMembers: [Int]

  /// What a reader needs of one attribute member, looked up once per set
  /// rather than once per item: plain values, so reading them per item
  /// copies no reference.
  private struct AttributeRule {
    let bit: UInt64
    let member: Int
    /// Where the name is in `attributeNames`.
    let nameStart: Int
    let nameCount: Int
    let presenceIsMark: Bool
  }

  /// A set of `members`; sets among them are flattened, and a mechanism named
  /// twice counts once.
  public init(_ members: [any BackupExclusionMechanism]) {
    var flat: [any BackupExclusionMechanism] = []
    for member in members {
      let expanded = (member as? MechanismSet)?.members ?? [member]
      for mechanism in expanded where !flat.contains(where: { $0.name == mechanism.name }) {
        flat.append(mechanism)
      }
    }
    precondition(flat.count <= 64, "a set holds at most 64 mechanisms")
    self.members = flat
    // The storage requirement, not a cast to a protocol: in a static binary
    // such a cast searches every conformance record, which costs a command's
    // whole start-up.
    var rules: [AttributeRule] = []
    var names: [UInt8] = []
    var others: [Int] = []
    for (index, member) in flat.enumerated() {
      switch member.storage {
      case .extendedAttribute(let name, let presenceIsMark):
        let bytes = name.bytes
        rules.append(
          AttributeRule(
            bit: 1 << index, member: index, nameStart: names.count, nameCount: bytes.count,
            presenceIsMark: presenceIsMark))
        names += bytes
      case .elsewhere:
        others.append(index)
      }
    }
    self.attributeRules = rules
    self.attributeNames = names
    self.otherMembers = others
  }

  /// iOS 5.0.1's attribute and the iOS 5.1 resource value.
  public static let apple = MechanismSet([.legacy, .resource])

  /// Every mark kept in an extended attribute: legacy, resource and xdg.
  public static let all = MechanismSet([.legacy, .resource, .xdg])

  /// The mechanisms the tool and the docs know, by short name.
  public static let named: [(name: String, set: MechanismSet)] = [
    ("legacy", MechanismSet([.legacy])),
    ("resource", MechanismSet([.resource])),
    ("xdg", MechanismSet([.xdg])),
    ("apple", .apple),
    ("all", .all),
    ("nodump", MechanismSet([.nodump])),
    ("cachedir", MechanismSet([.cachedir])),
  ]

  /// The set named by a comma-separated list of short names, such as
  /// `legacy,resource` or `all,nodump`. Members come in a fixed order
  /// (legacy, resource, xdg, nodump, cachedir), whatever the list's order.
  public init(parsing list: some StringProtocol) throws(UnknownMechanismError) {
    var chosen: [any BackupExclusionMechanism] = []
    for name in list.split(separator: ",", omittingEmptySubsequences: false) {
      // "legacy, resource" as well as "legacy,resource".
      let start = name.firstIndex { $0 != " " } ?? name.endIndex
      let name = name[start..<(name.lastIndex { $0 != " " }.map(name.index(after:)) ?? start)]
      guard let set = Self.named.first(where: { $0.name == name })?.set else {
        throw UnknownMechanismError(name: String(name))
      }
      chosen += set.members
    }
    let order = Self.named.map(\.name)
    self.init(
      chosen.sorted {
        (order.firstIndex(of: $0.name) ?? order.count)
          < (order.firstIndex(of: $1.name) ?? order.count)
      })
  }

  // MARK: - BackupExclusionMechanism

  /// The members' names joined by commas, such as `legacy,resource`.
  public var name: String { members.map(\.name).joined(separator: ",") }

  public var description: String { name }

  public func isMarked(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try markBits(on: item) != 0
  }

  /// Marks with each member. A member that fails does not stop the others;
  /// the first error is thrown after all have been tried.
  @discardableResult
  public func mark(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try forEachMember { member throws(SkipBackupError) in try member.mark(item) }
  }

  /// Clears each member's mark, as ``mark(_:)`` marks.
  @discardableResult
  public func clear(_ item: FileItem) throws(SkipBackupError) -> Bool {
    try forEachMember { member throws(SkipBackupError) in try member.clear(item) }
  }

  /// The members whose mark `item` carries.
  public func marks(on item: FileItem) throws(SkipBackupError) -> MechanismSet {
    members(in: try markBits(on: item))
  }

  /// The members whose bits are set, as ``markBits(on:)`` gives them.
  package func members(in bits: UInt64) -> MechanismSet {
    guard bits != 0 else { return .empty }
    return MechanismSet(members.indices.filter { bits & (1 << $0) != 0 }.map { members[$0] })
  }

  /// Which members mark `item`, bit `i` for `members[i]`: the walk's hot
  /// path, without an allocation.
  package func markBits(on item: FileItem) throws(SkipBackupError) -> UInt64 {
    var bits: UInt64 = 0
    switch attributeRules.count {
    case 0: break
    case 1:
      let rule = attributeRules[0]
      if try members[rule.member].isMarked(item) { bits |= rule.bit }
    default:
      // One listing of the item's attribute names tells which rules apply;
      // values are read only for rules that look at them.
      let listed = try listedBits(of: item)
      if listed == 0 { break }
      for rule in attributeRules where listed & rule.bit != 0 {
        if rule.presenceIsMark {
          bits |= rule.bit
        } else if try members[rule.member].isMarked(item) {
          bits |= rule.bit
        }
      }
    }
    for index in otherMembers {
      if try members[index].isMarked(item) { bits |= 1 << index }
    }
    return bits
  }

  /// The bits of the attribute rules whose attribute the item has.
  private func listedBits(of item: FileItem) throws(SkipBackupError) -> UInt64 {
    do {
      return try ExtendedAttributes(of: item).withNameList { list in
        attributeNames.withUnsafeBytes { names in
          var listed: UInt64 = 0
          // The listing is NUL-separated names; each is compared with the
          // rules' names, which are few.
          var start = 0
          while start < list.count {
            var end = start
            while end < list.count && list[end] != 0 { end += 1 }
            for rule in attributeRules
            where rule.nameCount == end - start
              && memcmp(
                list.baseAddress! + start, names.baseAddress! + rule.nameStart, rule.nameCount)
                == 0
            {
              listed |= rule.bit
            }
            start = end + 1
          }
          return listed
        }
      }
    } catch  where error.errno == .notSupported {
      return 0
    }
  }

  private func forEachMember(
    _ body: (any BackupExclusionMechanism) throws(SkipBackupError) -> Bool
  ) throws(SkipBackupError) -> Bool {
    var changed = false
    var firstError: SkipBackupError?
    for member in members {
      do {
        changed = try body(member) || changed
      } catch {
        if firstError == nil { firstError = error }
      }
    }
    if let firstError { throw firstError }
    return changed
  }

  /// The members that can mark a file that is not a directory: all but
  /// those that mark only directories.
  public var applicableToFiles: MechanismSet {
    members.contains { $0.marksDirectoriesOnly }
      ? MechanismSet(members.filter { !$0.marksDirectoriesOnly }) : self
  }

  private static let empty = MechanismSet([])

  // MARK: - Collection

  public var startIndex: Int { members.startIndex }
  public var endIndex: Int { members.endIndex }
  public subscript(position: Int) -> any BackupExclusionMechanism { members[position] }

  /// The members' short names.
  public var names: [String] { members.map(\.name) }

  public static func == (lhs: MechanismSet, rhs: MechanismSet) -> Bool {
    lhs.names == rhs.names
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(names)
  }
}

extension BackupExclusionMechanism where Self == MechanismSet {
  /// iOS 5.0.1's attribute and the iOS 5.1 resource value.
  public static var apple: MechanismSet { MechanismSet.apple }
  /// Every mark kept in an extended attribute: legacy, resource and xdg.
  public static var all: MechanismSet { MechanismSet.all }
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

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
