// The lexical path code export names ROOT with, against Python's posixpath.

import Foundation
import Testing
import TestSupport

@testable import SkipBackupExport

@Suite(.onTestThreads) struct LexicalPathTests {
  @Test func pythonNormalizedIsPosixpathNormpath() {
    var generator = ByteStringGenerator(state: 1)
    let paths =
      (0..<3000).map { _ in generator.bytes() } + [[], Array("//".utf8), Array("///".utf8)]
    let oracle = python(
      """
      import sys, base64, posixpath
      for line in sys.stdin:
          print(base64.b64encode(posixpath.normpath(base64.b64decode(line))).decode())
      """, paths)
    #expect(oracle.count == paths.count)
    var wrong = 0
    for (path, expected) in zip(paths, oracle) {
      let ours = LexicalPath.pythonNormalized(path)
      if ours != base64Decoded(Substring(expected)) {
        wrong += 1
        Issue.record(
          "normpath(\(path)): ours \(ours), Python's \(base64Decoded(Substring(expected)))")
        if wrong > 5 { break }
      }
    }
  }

  @Test func pythonJoinedIsPosixpathJoin() {
    var generator = ByteStringGenerator(state: 2)
    let pairs = (0..<1000).map { _ in (generator.bytes(), generator.relativePath()) }
    let oracle = python(
      """
      import sys, base64, posixpath
      lines = [base64.b64decode(line) for line in sys.stdin]
      for directory, name in zip(lines[0::2], lines[1::2]):
          print(base64.b64encode(posixpath.join(directory, name)).decode())
      """, pairs.flatMap { [$0.0, $0.1] })
    #expect(oracle.count == pairs.count)
    for ((directory, name), expected) in zip(pairs, oracle) {
      #expect(LexicalPath.pythonJoined(directory, name) == base64Decoded(Substring(expected)))
    }
  }
}
