import Foundation
@testable import GPUEncodeCore
@testable import GPUEncodeKit
import Glibc
import XCTest

/// Issue 15's memory target (docs/PERFORMANCE.md, Memory). Peak RSS itself is measured by
/// bench/memory.sh, not here (it depends on the machine and on x264); these guard the two
/// causes the fix removed.
final class MemoryTests: XCTestCase {
    /// Each queue slot is a decoded or filtered frame (3 MiB at 1080p) that the decoder's pool or
    /// the output pool must hold on top of what the stages need: one slot measured as fast as three.
    func testPipelineQueuesHoldOneFrame() {
        XCTAssertEqual(PipelinedVideoStages.queueCapacity, 1,
                       "deeper queues cost 3 MiB of peak RSS per slot and frame size at 1080p (issue 15); measure with bench/memory.sh before changing")
    }

    /// Dropping the code pages of a loaded library takes its resident pages out of this process's
    /// RSS, as /proc/self/smaps (the kernel's own count, not ours) reports, and its code still runs
    /// afterwards (the pages fault back in from the file).
    func testDroppedCodePagesLeaveRSSAndStillRun() throws {
        let library = "libswiftCore"
        let before = try residentCodeKB(library)
        XCTAssertGreaterThan(before, 0, "\(library)'s code should be resident in a running Swift process")
        let dropped = CodePages.drop(pathContaining: library)
        let after = try residentCodeKB(library)
        XCTAssertGreaterThan(dropped, 0, "nothing dropped (\(before) KiB resident before)")
        XCTAssertLessThan(after, before, "resident \(library) code: \(before) KiB before, \(after) KiB after dropping \(dropped >> 10) KiB")
        // The runtime's code runs again: sorting, hashing and formatting go through libswiftCore.
        let words = (0..<1000).map { "w\(($0 * 7919) % 1000)" }
        XCTAssertEqual(Set(words).count, 1000)
        XCTAssertEqual(words.sorted().first, "w0")
        XCTAssertEqual(String(format: "%.2f", 3.14159), "3.14")
        XCTAssertEqual(CodePages.drop(pathContaining: "no-such-library-anywhere"), 0)
    }

    /// The resident KiB of `library`'s executable mappings, from /proc/self/smaps.
    /// (Read with stdio: /proc files report a size of 0, which Foundation's whole-file readers trust.)
    private func residentCodeKB(_ library: String) throws -> Int {
        guard let file = fopen("/proc/self/smaps", "r") else { throw XCTSkip("no /proc/self/smaps") }
        defer { fclose(file) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil { lines.append(String(cString: buffer).trimmingCharacters(in: .newlines)) }
        var total = 0, inCode = false
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5, first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inCode = fields[1] == "r-xp" && line.contains(library)
            } else if inCode, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb
            }
        }
        return total
    }
}
