@testable import GPUEncodeKit
@testable import GPUEncodePresets
import Foundation
import XCTest

/// The JSON parser and the preset reader on hostile input: RFC 8259 strictly, each refusal at its
/// line:column; depth limits instead of a stack overflow; linear time on huge inputs.
final class ParserHardeningTests: XCTestCase {
    // Presets load in this process: their pictures and movies decode through the FFmpeg decoder
    // the command line installs at start.
    override class func setUp() {
        super.setUp()
        FilterMedia.install(FFmpegFilterMedia())
    }

    /// Each input, where the error must point, and a word of its message.
    static let badJSON: [(input: [UInt8], line: Int, column: Int, message: String)] = [
        (Array("[1,]".utf8), 1, 4, "trailing comma"),
        (Array("{\"a\": 1,}".utf8), 1, 9, "trailing comma"),
        (Array("[1,\n2,\n]".utf8), 3, 1, "trailing comma"),
        (Array("[\"a\tb\"]".utf8), 1, 4, "control character"),
        ([0x5B, 0x22, 0x61, 0x00, 0x22, 0x5D], 1, 4, "control character 0x0"),
        ([0x5B, 0x22, 0xFF, 0x22, 0x5D], 1, 3, "invalid UTF-8"),
        ([0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D], 1, 3, "invalid UTF-8"),          // overlong '/'
        ([0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], 1, 3, "invalid UTF-8"),    // a surrogate in UTF-8
        ([0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D], 1, 3, "invalid UTF-8"),          // cut short
        (Array(#"["\ud800"]"#.utf8), 1, 3, "high surrogate"),
        (Array(#"["\ud800\u0041"]"#.utf8), 1, 3, "high surrogate"),
        (Array(#"["\udc00"]"#.utf8), 1, 3, "low surrogate"),
        (Array(#"["a\u0000"]"#.utf8), 1, 4, "NUL"),
        (Array(#"["\x"]"#.utf8), 1, 4, "invalid escape"),
        (Array(#"["\u12G4"]"#.utf8), 1, 5, "four hex digits"),
        (Array(#"["\u+123"]"#.utf8), 1, 5, "four hex digits"),
        (Array("[01]".utf8), 1, 3, "leading zeros"),
        (Array("[-01]".utf8), 1, 4, "leading zeros"),
        (Array("[+1]".utf8), 1, 2, "invalid number"),
        (Array("[.5]".utf8), 1, 2, "invalid number"),
        (Array("[1.]".utf8), 1, 4, "after '.'"),
        (Array("[1e]".utf8), 1, 4, "exponent"),
        (Array("[-]".utf8), 1, 3, "digit must follow"),
        (Array("[0x10]".utf8), 1, 3, "hexadecimal"),
        (Array("[NaN]".utf8), 1, 2, "NaN"),
        (Array("[Infinity]".utf8), 1, 2, "Infinity"),
        (Array("[-Infinity]".utf8), 1, 3, "digit must follow"),
        (Array("[1e400]".utf8), 1, 2, "too large"),
        (Array("[-1e400]".utf8), 1, 2, "too large"),
        (Array("['a']".utf8), 1, 2, "single quotes"),
        (Array("// note\n[1]".utf8), 1, 1, "comments"),
        (Array("[1 /* c */]".utf8), 1, 4, "'/'"),
        (Array("{\"a\": 1, \"a\": 2}".utf8), 1, 10, "duplicate member \"a\""),
        (Array("[\"éé\", x]".utf8), 1, 8, "character 'x'"),   // columns count characters, not bytes
        (Array("[1] 2".utf8), 1, 5, "after the end"),
        (Array("".utf8), 1, 1, "end of file"),
        (Array("[\"abc".utf8), 1, 6, "unterminated"),
        (Array("[\"a\nb\"]".utf8), 1, 4, "unterminated"),
        (Array("tru".utf8), 1, 1, "expected true"),
        ([0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], 1, 1, "UTF-16"),
        ([0x5B, 0x31, 0x2C, 0xEF, 0xBB, 0xBF, 0x32, 0x5D], 1, 4, "byte order mark"),
        (Array(String(repeating: "[", count: 129).utf8) + Array(String(repeating: "]", count: 129).utf8), 1, 129, "nested more than 128"),
    ]

    func testStrictJSONRefusesWithLineAndColumn() {
        for (input, line, column, message) in Self.badJSON {
            let shown = String(decoding: input.prefix(40), as: UTF8.self).debugDescription
            do {
                let value = try JSONParser.parse(bytes: input)
                XCTFail("\(shown) was accepted as \(value.kind)")
            } catch let e as JSONSyntaxError {
                XCTAssertEqual("\(e.line):\(e.column)", "\(line):\(column)", "\(shown): \(e.message)")
                XCTAssertTrue(e.message.contains(message), "\(shown): \"\(e.message)\" does not say \(message)")
            } catch {
                XCTFail("\(shown): \(error)")
            }
        }
    }

    func testStrictJSONAccepts() throws {
        // A UTF-8 byte order mark at the start is skipped (RFC 8259 §8.1), and columns start after it.
        let bom = try JSONParser.parse(bytes: [0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8))
        XCTAssertEqual(bom["a"]?.column, 7)
        guard case .string(let s)? = try JSONParser.parse(#"["\ud83d\ude00\u00e9\/\b\f\n\r\t\"\\"]"#).arrayValue?.first?.kind else {
            return XCTFail("not a string")
        }
        XCTAssertEqual(s, "😀é/\u{8}\u{C}\n\r\t\"\\")
        let numbers = try JSONParser.parse("[-0, 0, 1E+2, 0.5e-3, 1e-400, 123456789012345678901234567890]").arrayValue?.compactMap(\.numberValue)
        XCTAssertEqual(numbers, [0, 0, 100, 0.0005, 0, 123456789012345678901234567890])
        // DEL (0x7F) is not a control character to JSON; raw non-ASCII text is fine.
        XCTAssertNotNil(try JSONParser.parse(bytes: [0x5B, 0x22, 0x7F, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80, 0x22, 0x5D]).arrayValue)
        let deepest = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        XCTAssertNoThrow(try JSONParser.parse(deepest))
    }

    func testThirtyThousandNestedArraysAreAnErrorNotACrash() {
        let text = String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)
        XCTAssertThrowsError(try JSONParser.parse(text)) { error in
            XCTAssertTrue((error as? JSONSyntaxError)?.message.contains("nested more than") ?? false, "\(error)")
        }
        let objects = String(repeating: "{\"a\":", count: 30_000) + "1" + String(repeating: "}", count: 30_000)
        XCTAssertThrowsError(try JSONParser.parse(objects))
    }

    /// A blend whose `with` is a blend..., 1,000 deep: refused by the JSON depth limit; 40 deep
    /// (within it): refused by the preset reader's own limit, with the position of the culprit.
    func testDeeplyNestedBlendsAreAnError() {
        func nested(_ depth: Int) -> String {
            var with = "\"#ff0000\""
            for _ in 0..<depth { with = "{\"filter\": \"multiply\", \"with\": \(with)}" }
            return "{\"version\": 1, \"name\": \"deep\", \"filters\": [\(with)]}"
        }
        let thousand = Preset.check(json: nested(1000), origin: "deep.json")
        XCTAssertNil(thousand.preset)
        XCTAssertEqual(thousand.errors.count, 1)
        XCTAssertEqual(thousand.errors.first?.line, 1)
        XCTAssertGreaterThan(thousand.errors.first?.column ?? 0, 1)
        XCTAssertTrue(thousand.errors.first?.message.contains("nested more than 128") ?? false, "\(thousand.errors)")

        let forty = Preset.check(json: nested(40), origin: "deep.json")
        XCTAssertEqual(forty.errors.count, 1, "\(forty.errors)")
        XCTAssertTrue(forty.errors.first?.message.contains("nested more than \(PresetReader.maxNesting) deep") ?? false, "\(forty.errors)")
        XCTAssertGreaterThan(forty.errors.first?.column ?? 0, 1)

        // (A blend inside a `with` is refused anyway, as it samples its input; but the reader
        // reads the whole nest before it can say so.)
        XCTAssertNil(Preset.check(json: nested(1), origin: "ok.json").errors.first)
    }

    /// 100,000 unknown keys took 24 s (a quadratic duplicate check, then an edit distance per
    /// key); a chain of 50,000 graph nodes overflowed the stack of a recursive walk. Each must
    /// finish: the guard is generous (a hang, not a timing), as the suite runs on a shared machine.
    func testHugeInputsFinishInLinearTime() {
        let keys = (0..<100_000).map { "\"k\($0)\": 1" }.joined(separator: ", ")
        let unknownKeys = "{\"version\": 1, \"name\": \"k\", \"filters\": [], \(keys)}"
        let unknownParameters = "{\"version\": 1, \"name\": \"k\", \"filters\": [{\"filter\": \"sepia\", \(keys)}]}"
        var nodes = ["\"n0\": {\"filter\": \"sepia\", \"inputs\": [\"source\"]}"]
        for i in 1..<50_000 { nodes.append("\"n\(i)\": {\"filter\": \"sepia\", \"inputs\": [\"n\(i - 1)\"]}") }
        let chain = "{\"version\": 1, \"name\": \"g\", \"graph\": {\"nodes\": {\(nodes.joined(separator: ", "))}, \"output\": \"n49999\"}}"
        let badInputs = (0..<50_000).map { "\"n\($0)\": {\"filter\": \"sepia\", \"inputs\": [\"missing\($0)\"]}" }.joined(separator: ", ")
        let badGraph = "{\"version\": 1, \"name\": \"g\", \"graph\": {\"nodes\": {\(badInputs)}, \"output\": \"n0\"}}"

        // On a thread of its own, so a hang fails the test instead of stalling the suite.
        final class Box: @unchecked Sendable { var results: [PresetCheck] = [] }
        let box = Box()
        let done = expectation(description: "all checked")
        Thread.detachNewThread {
            box.results = [unknownKeys, unknownParameters, chain, badGraph].map { Preset.check(json: $0, origin: "big.json") }
            done.fulfill()
        }
        wait(for: [done], timeout: 300)
        let results = box.results
        guard results.count == 4 else { return }
        XCTAssertEqual(results[0].errors.count, 100_000)
        XCTAssertEqual(results[1].errors.count, 100_000)
        // Past the 256-node bound both graphs are one error at the first node beyond it, found
        // after one linear walk (no stack overflow, no quadratic messages on the way).
        XCTAssertEqual(results[2].errors.count, 1, "\(results[2].errors.prefix(3))")
        XCTAssertTrue(results[2].errors.first?.message.contains("at most 256 nodes") ?? false, "\(results[2].errors.prefix(1))")
        XCTAssertNil(results[2].preset)
        XCTAssertEqual(results[3].errors.count, 1, "\(results[3].errors.prefix(3))")
        XCTAssertTrue(results[3].errors.first?.message.contains("at most 256 nodes") ?? false, "\(results[3].errors.prefix(1))")
    }

    func testDuplicateMembersOfAHugeObjectAreFound() {
        let members = (0..<100_000).map { "\"k\($0)\": 1" }.joined(separator: ", ")
        XCTAssertThrowsError(try JSONParser.parse("{\(members), \"k99999\": 2}")) { error in
            XCTAssertTrue((error as? JSONSyntaxError)?.message.contains("duplicate member \"k99999\"") ?? false, "\(error)")
        }
    }

    /// A preset file is parsed from its bytes: invalid UTF-8 is reported where it is, not replaced.
    func testInvalidUTF8InAPresetFileHasItsPosition() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parser-hardening-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("latin1.json")
        try Data("{\"version\": 1,\n \"name\": \"caf".utf8 + [0xE9] + "\", \"filters\": []}".utf8).write(to: file)
        let check = Preset.checkFile(file.path)
        XCTAssertEqual(check.errors.count, 1)
        XCTAssertEqual(check.errors.first.map { "\($0.line):\($0.column)" }, "2:14")
        XCTAssertTrue(check.errors.first?.message.contains("invalid UTF-8") ?? false, "\(check.errors)")
    }

    /// Extends chains are bounded too: each level is a new reader, recursing.
    func testLongExtendsChainIsAnError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parser-hardening-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"version": 1, "name": "p0", "filters": [{"filter": "sepia"}]}"#.utf8).write(to: dir.appendingPathComponent("p0.json"))
        for i in 1...40 {
            try Data("{\"version\": 1, \"name\": \"p\(i)\", \"extends\": \"./p\(i - 1).json\"}".utf8).write(to: dir.appendingPathComponent("p\(i).json"))
        }
        let check = Preset.checkFile(dir.appendingPathComponent("p40.json").path)
        XCTAssertNil(check.preset)
        XCTAssertTrue(check.errors.contains { $0.message.contains("more than \(PresetReader.maxExtendsDepth) levels deep") }, "\(check.errors)")
        XCTAssertNotNil(Preset.checkFile(dir.appendingPathComponent("p5.json").path).preset)
    }

    /// Numbers a preset gives where an integer is expected are checked before any conversion.
    func testHugeNumbersInPresetsAreErrors() {
        let cases: [(String, String)] = [
            (#"{"version": 1e300, "name": "x", "filters": []}"#, "unsupported version"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "boxBlur", "radius": 1e300}]}"#, "whole number"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "resize", "width": 1e19}]}"#, "whole number"),
            (#"{"version": 1, "name": "x", "filters": [], "encode": {"keyint": 1e300}}"#, "whole number of frames"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "shader", "source": "void main() {}", "parameters": {"n": {"type": "int", "range": [-1e300, 1e300]}}}]}"#, "must lie within"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "shader", "source": "void main() {}", "parameters": {"n": {"type": "float", "range": [-1e300, 1e300]}}}]}"#, "must lie within"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "shader", "source": "void main() {}", "parameters": {"n": {"type": "int", "range": [0.2, 0.8]}}}]}"#, "no whole number"),
            (#"{"version": 1, "name": "x", "filters": [{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [1e400, 1]]}}]}"#, "too large"),
        ]
        for (json, message) in cases {
            let check = Preset.check(json: json, origin: "n.json")
            XCTAssertTrue(check.errors.contains { $0.message.contains(message) }, "\(json): \(check.errors)")
            XCTAssertTrue(check.errors.allSatisfy { $0.line > 0 && $0.column > 0 }, "\(json): \(check.errors)")
        }
        // A huge but finite keyframe time is only a late keyframe.
        let late = Preset.check(json: #"{"version": 1, "name": "x", "filters": [{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [1e300, 0.5]]}}]}"#, origin: "n.json")
        XCTAssertEqual(late.errors.count, 0, "\(late.errors)")
    }

    func testCheckedConversions() {
        XCTAssertNil(Int(wholeNumber: 1e300))
        XCTAssertNil(Int(wholeNumber: .nan))
        XCTAssertNil(Int(wholeNumber: .infinity))
        XCTAssertNil(Int(wholeNumber: 9.223372036854775807e18))
        XCTAssertNil(Int(wholeNumber: 0.5))
        XCTAssertEqual(Int(wholeNumber: -3), -3)
        XCTAssertNil(Int32(inRange: 2147483648))
        XCTAssertEqual(Int32(inRange: -2147483648), -2147483648)
        XCTAssertNil(Int64(inRange: 1e19))
        XCTAssertEqual(Int64(inRange: 1e18), 1_000_000_000_000_000_000)
        XCTAssertFalse(roundedSeconds(4.6e18, places: 3).isEmpty)  // no trap past Int64 (times 1000)
        XCTAssertEqual(roundedSeconds(-0.0019, places: 3), "-0.001")
        XCTAssertEqual(roundedSeconds(1.23456, places: 3), "1.234")
    }
}
