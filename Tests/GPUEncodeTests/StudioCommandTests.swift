import Foundation
import XCTest

/// `gpuencode studio`'s failures before it serves: each one line on stderr with the tool's exit
/// code, nothing printed on stdout and no server left running. (What it serves, and what it
/// refuses once it runs, is tested in a real browser and over HTTP by Tests/Studio.)
final class StudioCommandTests: GPUEncodeTestCase {
    private func assertFails(_ arguments: [String], _ code: Int32, mentioning text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try gpuencode(["studio"] + arguments, timeout: 60)
        XCTAssertEqual(result.status, code, result.summary, file: file, line: line)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one error line: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("gpuencode: error: ") && result.stderr.contains(text), result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout, "", "no address printed for a server that did not start", file: file, line: line)
    }

    func testFailuresBeforeServing() throws {
        let clip = scratch("clip.mp4")
        try Oracle.makeClip(clip, seconds: 1, size: "160x120", rate: 10, audio: false)
        try assertFails([scratch("missing.mp4").path], ExitCode.noInput, mentioning: "missing.mp4")
        try assertFails([clip.path, "--port", "70000"], ExitCode.usage, mentioning: "--port")
        try assertFails([clip.path, "--at", "-1"], ExitCode.usage, mentioning: "--at")
        try assertFails([clip.path, "--preset", "sepiaa"], ExitCode.badPreset, mentioning: "did you mean \"sepia\"")
        try assertFails([clip.path, "--preset", scratch("no-such-folder").path + "/look.json"], ExitCode.usage, mentioning: "no such folder")
        try assertFails([clip.path, "--allow-path", scratch("nowhere").path], ExitCode.usage, mentioning: "--allow-path")
        // A port already taken: the bind fails with one line (the other server keeps it).
        let holder = try XCTUnwrap(LocalListener(backlog: 1))
        defer { close(holder.fd) }
        let port = Int(holder.port)
        try assertFails([clip.path, "--port", "\(port)"], ExitCode.usage, mentioning: "cannot serve on 127.0.0.1:\(port)")
    }
}
