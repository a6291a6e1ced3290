import Foundation
import ParserFuzzHarness
import XCTest

/// Every input the fuzzer ever found a crash, hang or OOM with (Fuzz/regressions), and the seeds
/// (Fuzz/corpus, presets/), through the same parsers the fuzzer drives: a regression fails
/// `swift test` as well as .ci/fuzz, without libFuzzer. A crash here takes the test process down,
/// which fails the run; a hang is caught by the guard below.
final class ParserFuzzRegressionTests: XCTestCase {
    func testFuzzRegressionsAndSeedsParseWithoutCrashing() throws {
        let root = Paths.packageRoot
        var files: [URL] = []
        for folder in ["Fuzz/regressions", "Fuzz/corpus", "presets"] {
            let dir = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            files += names.filter { !$0.hasPrefix(".") }.sorted().map { dir.appendingPathComponent($0) }
                .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
        }
        XCTAssertGreaterThan(files.count, 20, "the seeds are missing from \(root.path)")
        let inputs = try files.map { (name: $0.lastPathComponent, bytes: [UInt8](try Data(contentsOf: $0))) }

        final class Progress: @unchecked Sendable { var last = "" }
        let progress = Progress()
        let done = expectation(description: "all inputs parsed")
        Thread.detachNewThread {
            for input in inputs {
                progress.last = input.name
                ParserFuzzHarness.run(input.bytes)
            }
            done.fulfill()
        }
        // libFuzzer's own limit is 5 s an input; this is a hang guard for all of them together.
        let result = XCTWaiter().wait(for: [done], timeout: 120)
        XCTAssertEqual(result, .completed, "the parsers hang on \(progress.last)")
    }
}
