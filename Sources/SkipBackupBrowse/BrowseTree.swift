import SkipBackupCore

/// What is known of one item of the tree, as bits.
package struct NodeFlags: OptionSet {
  package let rawValue: UInt8

  package init(rawValue: UInt8) {
    self.rawValue = rawValue
  }

  package static let directory = NodeFlags(rawValue: 1)
  package static let symbolicLink = NodeFlags(rawValue: 2)
  /// Gone when a change reached it, and when it was looked up again: no
  /// longer shown, and out of every sum. (The walk leaves out what it found
  /// gone for good.)
  package static let vanished = NodeFlags(rawValue: 4)
  /// Its status, marks or entries could not be read: its sizes are what
  /// could be.
  package static let unreadable = NodeFlags(rawValue: 8)
  /// Left out of backups: marked itself, or below a marked directory.
  /// Derived from the marks, kept for the sums.
  package static let excluded = NodeFlags(rawValue: 16)
}

/// One column per fact of an item, as the walk finds them: what a walk
/// thread records (``TreePart``) and what the tree holds for every item.
package struct NodeColumns {
  /// Every name, one after the other; an item's is `nameLength` bytes at
  /// `nameStart` (a name is at most 255 bytes, NAME_MAX).
  package var names: [UInt8] = []
  package var nameStart: [UInt32] = []
  package var nameLength: [UInt8] = []
  /// The parent's number; -1 for ROOT (in a ``TreePart``, `-2 - s` for stub `s`).
  package var parent: [Int32] = []
  /// The item's own bytes (a directory's without its entries): disk usage,
  /// as du counts it; 0 for a hard link met before.
  package var ownBytes: [Int64] = []
  /// The counted mechanisms that mark the item itself.
  package var marks: [MechanismSet] = []
  package var flags: [NodeFlags] = []

  package var count: Int { parent.count }

  package mutating func add(
    name: UnsafeRawBufferPointer, parent: Int32, bytes: Int64, flags: NodeFlags
  ) -> Int32 {
    let index = Int32(self.parent.count)
    nameStart.append(UInt32(names.count))
    nameLength.append(UInt8(min(name.count, 255)))
    names.append(contentsOf: name.prefix(255))
    self.parent.append(parent)
    ownBytes.append(bytes)
    marks.append([])
    self.flags.append(flags)
    return index
  }

  /// Appends `other`'s items, numbered after these, with their parents
  /// given by `parentOf`.
  package mutating func append(_ other: NodeColumns, parentOf: (Int32) -> Int32) {
    let nameBase = UInt32(names.count)
    names += other.names
    nameStart += other.nameStart.lazy.map { $0 + nameBase }
    nameLength += other.nameLength
    parent += other.parent.lazy.map(parentOf)
    ownBytes += other.ownBytes
    marks += other.marks
    flags += other.flags
  }
}

/// The whole tree under ROOT, as the browser holds it: one entry per item,
/// in arrays of plain values (a structure of arrays), so that 1,000,000
/// items cost some 60 bytes each plus their names, and no object, pointer
/// or reference count per item. Items are numbered; the root is 0. The
/// columns of ``NodeColumns`` read as its own (`tree.flags`).
@dynamicMemberLookup
package struct BrowseTree {
  /// The root's path as given (trimmed of trailing slashes).
  package var rootPath: [UInt8]
  package var nodes = NodeColumns()

  package subscript<Column>(dynamicMember column: WritableKeyPath<NodeColumns, Column>) -> Column {
    get { nodes[keyPath: column] }
    set { nodes[keyPath: column] = newValue }
  }

  /// Bytes under each item (itself included) on each side.
  package var included: [Int64] = []
  package var excludedBytes: [Int64] = []
  /// Each directory's entries: `children[childStart[i]..<childStart[i + 1]]`.
  package var childStart: [Int32] = []
  package var children: [Int32] = []
  /// The sweep rule behind a swept item's marks.
  package var rules: [Int32: [UInt8]] = [:]
  /// Why an item could not be read.
  package var problems: [Int32: String] = [:]
  /// A marked directory above ROOT, which leaves all of it out: the screen
  /// names it as what holds ROOT's entries.
  package struct RootExclusion {
    package var path: [UInt8]

    package init(path: [UInt8]) {
      self.path = path
    }
  }
  package var rootExclusion: RootExclusion?

  package var count: Int { nodes.count }

  package func isDirectory(_ node: Int32) -> Bool { nodes.flags[Int(node)].contains(.directory) }
  package func isExcluded(_ node: Int32) -> Bool { nodes.flags[Int(node)].contains(.excluded) }

  /// The item's name (ROOT's is empty), without a copy.
  package func name(_ node: Int32) -> ArraySlice<UInt8> {
    let start = Int(nodes.nameStart[Int(node)])
    return nodes.names[start..<start + Int(nodes.nameLength[Int(node)])]
  }

  package func nameBytes(_ node: Int32) -> [UInt8] { Array(name(node)) }

  package func entries(of node: Int32) -> ArraySlice<Int32> {
    children[Int(childStart[Int(node)])..<Int(childStart[Int(node) + 1])]
  }

  /// The item's path below ROOT (`.` for ROOT itself), for the screen.
  package func relativePath(of node: Int32) -> [UInt8] {
    let names = chain(to: node).map(nameBytes)
    return names.isEmpty ? [UInt8(ascii: ".")] : Array(names.joined(separator: [0x2F]))
  }

  /// The items from below ROOT down to `node`.
  private func chain(to node: Int32) -> [Int32] {
    var chain: [Int32] = []
    var current = node
    while current > 0 {
      chain.append(current)
      current = nodes.parent[Int(current)]
    }
    return chain.reversed()
  }

  /// The nearest item at or above `node` marked itself, or `nil` when what
  /// leaves it out is above ROOT (or nothing does).
  package func markedAncestor(of node: Int32) -> Int32? {
    var current = node
    while current >= 0 {
      if !nodes.marks[Int(current)].isEmpty { return current }
      current = nodes.parent[Int(current)]
    }
    return nil
  }

  /// The entry of `directory` named `name` that is there, by a search of
  /// its entries.
  package func entry(named name: some Collection<UInt8>, in directory: Int32) -> Int32? {
    entries(of: directory).first {
      !nodes.flags[Int($0)].contains(.vanished) && self.name($0).elementsEqual(name)
    }
  }

  /// The item at `path` (as the walk spelled it, starting with ROOT), or
  /// `nil` when no item of the tree has it.
  package func node(at path: [UInt8]) -> Int32? {
    guard path.starts(with: rootPath) else { return nil }
    var node: Int32 = 0
    for component in path[rootPath.count...].split(separator: 0x2F) {
      guard let next = entry(named: component, in: node) else { return nil }
      node = next
    }
    return node
  }

  // MARK: - Sums

  /// Works out which items are left out and the sums of every directory,
  /// from the marks: once after the walk, in breadth-first order down and
  /// back up, no recursion (a deep tree cannot overflow the stack).
  package mutating func computeSums() {
    included = Array(repeating: 0, count: count)
    excludedBytes = Array(repeating: 0, count: count)
    resum(0, parentExcluded: rootExclusion != nil)
  }

  /// Recomputes the sums under `top` (whose parent is left out or not, as
  /// `parentExcluded` says), after its marks or a mark below it changed,
  /// and returns how its own sums moved, for the directories above.
  @discardableResult
  package mutating func resum(_ top: Int32, parentExcluded: Bool) -> (included: Int64, excluded: Int64) {
    let before = (included[Int(top)], excludedBytes[Int(top)])
    var order: [Int32] = [top]
    var index = 0
    while index < order.count {
      let node = order[index]
      index += 1
      let excluded =
        !nodes.marks[Int(node)].isEmpty
        || (node == top
          ? parentExcluded : nodes.flags[Int(nodes.parent[Int(node)])].contains(.excluded))
      if excluded {
        nodes.flags[Int(node)].insert(.excluded)
      } else {
        nodes.flags[Int(node)].remove(.excluded)
      }
      order += entries(of: node)
    }
    for node in order.reversed() {
      let own = nodes.ownBytes[Int(node)]
      var sums: (Int64, Int64) = nodes.flags[Int(node)].contains(.excluded) ? (0, own) : (own, 0)
      for child in entries(of: node) where !nodes.flags[Int(child)].contains(.vanished) {
        sums.0 += included[Int(child)]
        sums.1 += excludedBytes[Int(child)]
      }
      included[Int(node)] = sums.0
      excludedBytes[Int(node)] = sums.1
    }
    return (included[Int(top)] - before.0, excludedBytes[Int(top)] - before.1)
  }

  /// Takes `node`, gone, out of the tree as the screen shows it: out of
  /// its directory's rows, and its bytes out of every sum above it.
  package mutating func drop(_ node: Int32) {
    guard !nodes.flags[Int(node)].contains(.vanished) else { return }
    nodes.flags[Int(node)].insert(.vanished)
    problems[node] = nil
    var current = nodes.parent[Int(node)]
    while current >= 0 {
      included[Int(current)] -= included[Int(node)]
      excludedBytes[Int(current)] -= excludedBytes[Int(node)]
      current = nodes.parent[Int(current)]
    }
  }

  /// The entries of `node` that are there, as the screen shows them.
  package func shownEntries(of node: Int32) -> [Int32] {
    entries(of: node).filter { !nodes.flags[Int($0)].contains(.vanished) }
  }

  /// Sets `node`'s marks and rule and brings every sum that depends on
  /// them up to date: its subtree's, then each directory's above it.
  package mutating func update(_ node: Int32, marks newMarks: MechanismSet, rule: [UInt8]?) {
    nodes.marks[Int(node)] = newMarks
    rules[node] = rule
    let above = nodes.parent[Int(node)]
    let parentExcluded = above < 0 ? rootExclusion != nil : isExcluded(above)
    let delta = resum(node, parentExcluded: parentExcluded)
    var current = above
    while current >= 0 {
      included[Int(current)] += delta.included
      excludedBytes[Int(current)] += delta.excluded
      current = nodes.parent[Int(current)]
    }
  }
}
