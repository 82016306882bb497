import Foundation

/// The path of one of the project's tree generators (Tests/Trees: mkhome.py,
/// mktree.py), found from this source file, so that a clone needs nothing
/// beside it.
public func treeGenerator(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Trees").appendingPathComponent(name).path
}
