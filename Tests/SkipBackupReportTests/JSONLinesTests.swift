// JSON Lines and Base64 as every report writes them, against Python's json
// and base64.

import Foundation
import Testing
import TestSupport

@testable import SkipBackupReport

@Suite(.onTestThreads) struct JSONLinesTests {
  /// Every line parses as strict JSON; a path comes back byte for byte,
  /// from the string when it is UTF-8, else from `path_base64`, whose
  /// string is the lossy decoding; text and numbers come back as given.
  @Test func linesParseAsPythonJSONAndPathsComeBackExactly() {
    var generator = ByteStringGenerator(state: 3)
    let paths = (0..<2000).map { _ in generator.bytes() }
    var lines: [[UInt8]] = []
    for (index, path) in paths.enumerated() {
      var line = JSONLine()
      line.path("path", path)
      line.bool("excluded", index % 2 == 0)
      line.string("text", String(decoding: path, as: UTF8.self))
      line.number("n", Int64(index) * 1_000_003 - 7)
      line.null("nothing")
      line.strings("list", ["a\"b", "c\\d", "e\nf"])
      let finished = line.finish()
      #expect(finished.last == UInt8(ascii: "\n"))
      #expect(finished.dropLast().contains(UInt8(ascii: "\n")) == false)
      lines.append(Array(finished.dropLast()))
    }
    let oracle = python(
      """
      import sys, base64, json
      for index, line in enumerate(sys.stdin):
          o = json.loads(base64.b64decode(line))
          if "path_base64" in o:
              exact = base64.b64decode(o["path_base64"], validate=True)
          else:
              exact = o["path"].encode("utf-8")
          assert o["excluded"] is (index % 2 == 0)
          assert o["n"] == index * 1000003 - 7 and o["nothing"] is None
          assert o["list"] == ["a\\"b", "c\\\\d", "e\\nf"]
          assert set(o) <= {"path", "path_base64", "excluded", "text", "n", "nothing", "list"}
          print(base64.b64encode(exact).decode(), base64.b64encode(o["path"].encode()).decode(),
                base64.b64encode(o["text"].encode()).decode(), "path_base64" in o)
      """, lines)
    #expect(oracle.count == paths.count)
    for (path, answer) in zip(paths, oracle) {
      let fields = answer.split(separator: " ", omittingEmptySubsequences: false)
      let lossy = Array(String(decoding: path, as: UTF8.self).utf8)
      #expect(base64Decoded(fields[0]) == path)
      #expect(base64Decoded(fields[1]) == lossy)
      #expect(base64Decoded(fields[2]) == lossy)
      #expect((fields[3] == "True") == (String(validating: path, as: UTF8.self) == nil))
    }
  }

  @Test func base64IsPythonBase64() {
    var generator = ByteStringGenerator(state: 4)
    let inputs = (0..<2000).map { _ in
      (0..<generator.below(40)).map { _ in UInt8(generator.below(256)) }
    }
    let oracle = python(
      """
      import sys, base64
      for line in sys.stdin:
          print(base64.b64encode(base64.b64decode(line)).decode())
      """, inputs)
    #expect(oracle.count == inputs.count)
    for (bytes, expected) in zip(inputs, oracle) {
      #expect(Base64.encode(bytes) == expected)
    }
  }
}
