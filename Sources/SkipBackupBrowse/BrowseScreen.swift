import CNcurses
import SkipBackupCore
import SkipBackupReport

/// The browser's screen and keys: one directory of the tree at a time, its
/// entries in rows, a selection, and marks changed in place.
///
///     row 0        ROOT and the directory shown
///     row 1        what the backup keeps and leaves out, here and in all ROOT
///     row 2        the column heads
///     rows 3...    the entries
///     last row     the keys, or what the last key did
package struct BrowseScreen {
  package enum Order: Equatable {
    /// By backed-up bytes, then left-out bytes, then name.
    case size(descending: Bool)
    case name(descending: Bool)
  }

  package var tree: BrowseTree
  package let editor: MarkEditor
  /// A directory with more backed-up bytes than this asks before `m` marks it.
  package let confirmAbove: Int64
  /// Whether names in UTF-8 are shown as they are (the locale's character set).
  package let utf8: Bool

  package var directory: Int32 = 0
  package var rows: [Int32] = []
  package var selected = 0
  package var top = 0
  package var order = Order.size(descending: true)
  package var message: String?
  package var showingHelp = false
  /// Sizes in bytes, exactly, as `du -B1` prints them (`b`), rather than in
  /// KiB, MiB and GiB.
  package var exactBytes = false
  package var confirming: Int32?

  package init(tree: BrowseTree, editor: MarkEditor, confirmAbove: Int64, utf8: Bool, message: String?) {
    self.tree = tree
    self.editor = editor
    self.confirmAbove = confirmAbove
    self.utf8 = utf8
    self.message = message
    sortRows(keeping: nil)
  }

  // MARK: - Keys

  /// Reads keys and redraws until `q`.
  package mutating func run() {
    draw()
    var failures = 0
    while true {
      let key = cncurses_key()
      // A blocking read fails only when the terminal is gone (EOF, EIO
      // after a hang-up) or a signal cut it short: failing again and again,
      // it is gone, and reading on would spin.
      if key == CInt(CNCURSES_KEY_NONE) {
        failures += 1
        if failures == 10 { return }
        continue
      }
      failures = 0
      if !handle(key) { return }
      draw()
    }
  }

  /// Acts on one key; `false` to quit.
  package mutating func handle(_ key: CInt) -> Bool {
    if key == CInt(CNCURSES_KEY_RESIZE) { return true }
    if showingHelp {
      showingHelp = false
      return true
    }
    if let node = confirming {
      confirming = nil
      if key == CInt(UInt8(ascii: "y")) || key == CInt(UInt8(ascii: "Y")) {
        message = editor.apply(.mark, to: node, in: &tree)
        sortRows(keeping: node)
      } else {
        message = "not marked"
      }
      return true
    }
    message = nil
    switch key {
    case CInt(UInt8(ascii: "q")):
      return false
    case CInt(CNCURSES_KEY_UP), CInt(UInt8(ascii: "k")):
      select(selected - 1)
    case CInt(CNCURSES_KEY_DOWN), CInt(UInt8(ascii: "j")):
      select(selected + 1)
    case CInt(CNCURSES_KEY_PPAGE):
      select(selected - listHeight)
    case CInt(CNCURSES_KEY_NPAGE):
      select(selected + listHeight)
    case CInt(CNCURSES_KEY_HOME), CInt(UInt8(ascii: "g")):
      select(0)
    case CInt(CNCURSES_KEY_END), CInt(UInt8(ascii: "G")):
      select(rows.count - 1)
    case CInt(CNCURSES_KEY_ENTER), CInt(CNCURSES_KEY_RIGHT), 10, 13,
      CInt(UInt8(ascii: "l")):
      open()
    case CInt(CNCURSES_KEY_BACKSPACE), CInt(CNCURSES_KEY_LEFT), 8, 127,
      CInt(UInt8(ascii: "h")), CInt(UInt8(ascii: "<")):
      goUp()
    case CInt(UInt8(ascii: "s")):
      if case .size(let descending) = order {
        order = .size(descending: !descending)
      } else {
        order = .size(descending: true)
      }
      sortRows(keeping: currentRow)
    case CInt(UInt8(ascii: "n")):
      if case .name(let descending) = order {
        order = .name(descending: !descending)
      } else {
        order = .name(descending: false)
      }
      sortRows(keeping: currentRow)
    case CInt(UInt8(ascii: "m")):
      guard let node = currentRow else { break }
      if tree.isDirectory(node) && tree.included[Int(node)] > confirmAbove {
        confirming = node
      } else {
        message = editor.apply(.mark, to: node, in: &tree)
        sortRows(keeping: node)
      }
    case CInt(UInt8(ascii: "c")):
      guard let node = currentRow else { break }
      message = editor.apply(.clear, to: node, in: &tree)
      sortRows(keeping: node)
    case CInt(UInt8(ascii: "u")):
      message = editor.undo(in: &tree) ?? "nothing to undo"
      sortRows(keeping: currentRow)
    case CInt(UInt8(ascii: "b")):
      exactBytes.toggle()
    case CInt(UInt8(ascii: "?")):
      showingHelp = true
    default:
      message = "? shows the keys"
    }
    return true
  }

  private var currentRow: Int32? { rows.indices.contains(selected) ? rows[selected] : nil }

  private var listHeight: Int { max(1, Int(cncurses_lines()) - 4) }

  private mutating func select(_ index: Int) {
    selected = max(0, min(index, rows.count - 1))
  }

  private mutating func open() {
    guard let node = currentRow else { return }
    guard tree.isDirectory(node) else {
      message = "not a directory"
      return
    }
    directory = node
    selected = 0
    top = 0
    sortRows(keeping: nil)
  }

  private mutating func goUp() {
    guard directory != 0 else {
      message = "this is ROOT"
      return
    }
    let from = directory
    directory = tree.parent[Int(directory)]
    sortRows(keeping: from)
  }

  /// Sorts the entries of the directory shown, and keeps `node` selected.
  package mutating func sortRows(keeping node: Int32?) {
    let tree = self.tree
    let byName: (Int32, Int32) -> Bool = { a, b in
      tree.name(a).lexicographicallyPrecedes(tree.name(b))
    }
    switch order {
    case .size(let descending):
      rows = tree.shownEntries(of: directory).sorted { a, b in
        let (ia, ib) = (tree.included[Int(a)], tree.included[Int(b)])
        if ia != ib { return descending ? ia > ib : ia < ib }
        let (ea, eb) = (tree.excludedBytes[Int(a)], tree.excludedBytes[Int(b)])
        if ea != eb { return descending ? ea > eb : ea < eb }
        return byName(a, b)
      }
    case .name(let descending):
      rows = tree.shownEntries(of: directory).sorted {
        descending ? byName($1, $0) : byName($0, $1)
      }
    }
    if let node, let index = rows.firstIndex(of: node) { selected = index }
    select(selected)
  }

  // MARK: - Drawing

  package mutating func draw() {
    cncurses_erase()
    let lines = Int(cncurses_lines())
    let columns = Int(cncurses_columns())
    if showingHelp {
      drawHelp(lines, columns)
    } else {
      drawDirectory(lines, columns)
    }
    cncurses_refresh()
  }

  private func put(_ y: Int, _ x: Int, _ text: ScreenText, _ attributes: Int32 = 0) {
    text.bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { characters in
        cncurses_put(
          CInt(y), CInt(x), characters.baseAddress, CInt(characters.count), CInt(attributes))
      }
    }
  }

  private mutating func drawDirectory(_ lines: Int, _ columns: Int) {
    let reverse = Int32(CInt(CNCURSES_REVERSE))
    let bold = Int32(CInt(CNCURSES_BOLD))
    // Row 0: where we are.
    var title = ScreenText(" skipbackup browse: ")
    title.append(name: tree.rootPath, utf8: utf8)
    if directory != 0 {
      title.append("/")
      title.append(name: tree.relativePath(of: directory), utf8: utf8)
    }
    cncurses_fill(0, 0, CInt(reverse))
    put(0, 0, title.fitted(to: columns - 9), reverse)
    if columns >= 20 { put(0, columns - 8, ScreenText("? help"), reverse) }

    // Row 1: the backup here and in all of ROOT, in 80 columns.
    let here = Int(directory)
    var totals = ScreenText(
      " Backup here: \(size(tree.included[here])), left out \(size(tree.excludedBytes[here]))")
    if directory != 0 {
      totals.append(
        "   ROOT: \(size(tree.included[0])), left out \(size(tree.excludedBytes[0]))")
    }
    put(1, 0, totals.fitted(to: columns))

    // Row 2: the heads.
    let sizeWidth = exactBytes ? 13 : 10
    // 21 columns in 80, enough for `swept: node_modules`; 24 at most.
    let whyWidth = max(6, min(24, (columns - 26) * 2 / 5))
    let nameColumn = 1 + sizeWidth + 1 + sizeWidth + 2 + whyWidth + 2
    let heads =
      ScreenText(" ") + ScreenText("Backed up").rightAligned(sizeWidth) + ScreenText(" ")
      + ScreenText("Left out").rightAligned(sizeWidth) + ScreenText("  Why")
    put(2, 0, heads.fitted(to: columns), bold)
    if nameColumn < columns { put(2, nameColumn, ScreenText("Name"), bold) }

    // The entries.
    let height = max(1, lines - 4)
    if selected < top { top = selected }
    if selected >= top + height { top = selected - height + 1 }
    if rows.isEmpty {
      put(3, 1, ScreenText(directoryNote))
    }
    for (offset, node) in rows[min(top, rows.count)...].prefix(height).enumerated() {
      let y = 3 + offset
      let attributes = top + offset == selected ? reverse : 0
      if attributes != 0 { cncurses_fill(CInt(y), 0, CInt(attributes)) }
      let sizes =
        ScreenText(" ") + ScreenText(size(tree.included[Int(node)])).rightAligned(sizeWidth)
        + ScreenText(" ") + ScreenText(size(tree.excludedBytes[Int(node)])).rightAligned(sizeWidth)
        + ScreenText("  ")
        + why(node).fitted(to: whyWidth)
      put(y, 0, sizes.fitted(to: columns), attributes)
      guard nameColumn < columns else { continue }
      var name = ScreenText()
      name.append(name: tree.name(node), utf8: utf8)
      if tree.isDirectory(node) {
        name.append("/")
      } else if tree.flags[Int(node)].contains(.symbolicLink) {
        name.append("@")
      }
      put(y, nameColumn, name.fitted(to: columns - nameColumn), attributes)
    }

    // The last row: what happened, or the keys.
    let status: ScreenText
    if let node = confirming {
      var text = ScreenText(" Mark ")
      text.append(name: tree.name(node), utf8: utf8)
      text.append(
        "/ (\(humanSize(tree.included[Int(node)])) backed up)? y to mark, any other key not to")
      status = text
    } else if let message {
      var text = ScreenText(" ")
      text.append(name: Array(message.utf8), utf8: utf8, escaped: true)
      status = text
    } else if let node = currentRow, let problem = tree.problems[node] {
      var text = ScreenText(" ")
      text.append(name: Array(problem.utf8), utf8: utf8, escaped: true)
      status = text
    } else {
      let sort: String
      switch order {
      case .size(let descending): sort = descending ? "size" : "size, smallest first"
      case .name(let descending): sort = descending ? "name, Z first" : "name"
      }
      status = ScreenText(
        " \(rows.count) items by \(sort)  m mark  c clear  u undo  s/n sort  ? help  q quit")
    }
    cncurses_fill(CInt(lines - 1), 0, CInt(reverse))
    put(lines - 1, 0, status.fitted(to: columns - 1), reverse)
  }

  private var directoryNote: String {
    let flags = tree.flags[Int(directory)]
    if flags.contains(.unreadable) { return "(could not be read)" }
    return "(empty)"
  }

  private func size(_ bytes: Int64) -> String { exactBytes ? String(bytes) : humanSize(bytes) }

  /// Why the item is out, or what went wrong with it.
  package func why(_ node: Int32) -> ScreenText {
    var text = ScreenText()
    let flags = tree.flags[Int(node)]
    if flags.contains(.unreadable) { text.append("! unreadable ") }
    let marks = tree.marks[Int(node)]
    if !marks.isEmpty {
      if let rule = tree.rules[node] {
        text.append("swept: ")
        text.append(name: rule, utf8: utf8)
      } else {
        text.append("marked: " + marks.names.joined(separator: ","))
      }
    } else if flags.contains(.excluded) {
      if let ancestor = tree.markedAncestor(of: node) {
        text.append("in ")
        text.append(name: tree.relativePath(of: ancestor), utf8: utf8)
        text.append("/")
      } else if let above = tree.rootExclusion {
        text.append("in ")
        text.append(name: above.path, utf8: utf8)
        text.append("/")
      }
    }
    return text
  }

  private func drawHelp(_ lines: Int, _ columns: Int) {
    let marking = editor.marking.names.joined(separator: ",")
    let clearing = editor.clearing.names.joined(separator: ",")
    let text = [
      "skipbackup browse: what backups keep under ROOT, and what the marks leave out",
      "",
      "Each row is an entry of the directory shown: the bytes backups keep",
      "(Backed up), the bytes the marks leave out (Left out), and why it is out:",
      "  marked: M    it carries the marks M     in DIR/    a marked DIR holds it",
      "  swept: RULE  a sweep marked it by RULE  ! ...      it could not be read",
      "",
      "To make the backup smaller: rows are sorted by backed-up size, largest",
      "first. Enter opens the selected directory, Backspace goes back up. m marks",
      "the selected row: its bytes move to Left out, and Backup (row 2) drops.",
      "",
      "  Up/Down k/j     select            PgUp/PgDn Home/End  by pages, to ends",
      "  Enter Right l   open a directory  Backspace Left h    up",
      "  m  mark (\(marking))",
      "  c  clear (\(clearing)), a sweep's mark too",
      "  u  undo the last change           ? this help",
      "  s  sort by size (again: reverse)  n  sort by name (again: reverse)",
      "  b  sizes in bytes, as du -B1      q  quit",
      "",
      "Marking a directory of more than \(humanSize(confirmAbove)) asks first.",
      "Any key closes this help.",
    ]
    for (index, line) in text.prefix(lines).enumerated() {
      put(index, 0, ScreenText(line).fitted(to: columns))
    }
  }
}
