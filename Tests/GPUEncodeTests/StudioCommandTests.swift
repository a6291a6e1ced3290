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
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) == 0 && listen(holder, 1) == 0 && getsockname(holder, $0, &length) == 0 }
        }
        XCTAssertTrue(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        try assertFails([clip.path, "--port", "\(port)"], ExitCode.usage, mentioning: "cannot serve on 127.0.0.1:\(port)")
    }
}
