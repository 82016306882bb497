// The command line as bytes: what argv holds reaches the engines exactly.

import Foundation
import Testing
import TestSupport

@testable import skipbackup

@Suite(.onTestThreads) struct RawArgumentsTests {
  /// An argument that is text is its own path, byte for byte, even when it
  /// looks like the placeholder of an argument that does not exist.
  @Test func textArgumentsAreTheirOwnPaths() {
    var generator = ByteStringGenerator(state: 8)
    var texts = (0..<500).map { _ in String(decoding: generator.bytes(slash: false), as: UTF8.self)
    }
    texts += ["\u{F8FF}skipbackup-argument-99999", "--files-from=\u{F8FF}skipbackup-argument-0"]
    for text in texts where !text.utf8.contains(0) {
      #expect(RawArguments.path(text).bytes == Array(text.utf8))
    }
  }
}
