import Foundation
import XCTest

/// Numbers from the command line and from presets that do not fit where they go (an Int32 for
/// FFmpeg, an Int64 of microseconds, a whole number of frames) must be a clear one-line error
/// (64 for options, 67 for presets), never a trap of the Swift runtime. Each case is one the
/// adversarial pass of issue 10 found, run against the real binary.
final class NumericInputTests: GPUEncodeTestCase {
    // MARK: - Command-line options (64)

    func testKeyintTooLargeForFFmpeg() throws {
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--keyint", "99999999999"], mentioning: "--keyint")
    }

    func testBatchKeyintTooLarge() throws {
        try expectUsageError(["batch", "in.mp4", "--out-dir", scratch("out").path, "--keyint", "99999999999"], mentioning: "--keyint")
    }

    /// The manifest's keyint killed the whole batch (a trap in the first job) with no report.
    func testManifestKeyintTooLarge() throws {
        let manifest = scratch("jobs.json")
        try Data(#"[{"input": "a.mp4", "keyint": 99999999999}]"#.utf8).write(to: manifest)
        try expectUsageError(["batch", "--manifest", manifest.path, "--out-dir", scratch("out").path], mentioning: "keyint")
    }

    func testThreadsHuge() throws {
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--threads", "99999999999"], mentioning: "--threads")
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--threads", "1e400"], mentioning: "--threads")
        try expectUsageError(["batch", "in.mp4", "--out-dir", scratch("out").path, "--threads", "99999999999"], mentioning: "--threads")
    }

    func testCrfNotANumber() throws {
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--crf", "nan"], mentioning: "--crf")
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--crf", "inf"], mentioning: "--crf")
    }

    func testBitrateOverflowingDouble() throws {
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--bitrate", "1e400"], mentioning: "--bitrate")
        try expectUsageError(["in.mp4", scratch("out.mp4").path, "--bitrate", "nan"], mentioning: "--bitrate")
        // Hex, exponents and rates under libx264's 1 kbit/s step were taken by Double() and then
        // failed at the encoder with 74.
        for rate in ["0x10", "1e3", "16", "0.5k", "inf", "-4M", "4 M", ""] {
            try expectUsageError(["in.mp4", scratch("out.mp4").path, "--bitrate", rate], mentioning: "--bitrate")
            try expectUsageError(["batch", "in.mp4", "--out-dir", scratch("o").path, "--bitrate", rate], mentioning: "--bitrate")
        }
    }

    func testPreviewAtHugeInfiniteOrNaN() throws {
        for at in ["1e18", "inf", "nan", "-inf", "1e308"] {
            try expectUsageError(["preview", "in.mp4", "--at", at, "-o", scratch("p.png").path], mentioning: "--at")
        }
    }

    func testContactSheetAtHuge() throws {
        try expectUsageError(["contact-sheet", "in.mp4", "--at", "1e308", "-o", scratch("s.png").path], mentioning: "--at")
        try expectUsageError(["contact-sheet", "in.mp4", "--at", "nan", "-o", scratch("s.png").path], mentioning: "--at")
    }

    func testSplitAngleInfinite() throws {
        try expectUsageError(["preview", "in.mp4", "--compare", "--split-angle", "inf", "-o", scratch("p.png").path], mentioning: "--split-angle")
        try expectUsageError(["preview", "in.mp4", "--compare", "--split", "nan", "-o", scratch("p.png").path], mentioning: "--split")
    }

    /// A batch report is read back from disk by `report merge`; its numbers are the file's word.
    func testReportWithHugeNumbers() throws {
        let report = scratch("shard.json")
        try Data(#"{"schema": "gpuencode-batch-report", "version": 1e300, "plan": {"jobs": 1e300, "digest": "x"}, "jobs": []}"#.utf8).write(to: report)
        let result = try gpuencode(["report", "merge", report.path, "-o", scratch("all.json").path])
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [report.path])
    }

    // MARK: - Presets (67)

    func testShaderParameterRangeHuge() throws {
        for type in ["int", "float", "vec2"] {
            let preset = try writePreset("""
            {"version": 1, "name": "x", "filters": [{"filter": "shader", "source": "void main() { gl_FragColor = vec4(0.0); }",
              "parameters": {"n": {"type": "\(type)", "range": [-1e300, 1e300]}}}]}
            """)
            try expectPresetError(preset, mentioning: ["filters[0].parameters.n.range", "must lie within"])
        }
    }

    func testIntParameterGivenAsHugeNumber() throws {
        let preset = try writePreset(#"{"version": 1, "name": "x", "filters": [{"filter": "boxBlur", "radius": 1e300}]}"#)
        try expectPresetError(preset, mentioning: ["filters[0].radius", "whole number"])
        let size = try writePreset(#"{"version": 1, "name": "x", "filters": [{"filter": "resize", "width": 1e19}]}"#)
        try expectPresetError(size, mentioning: ["filters[0].width", "whole number"])
    }

    func testPresetKeyintAndVersionHuge() throws {
        let keyint = try writePreset(#"{"version": 1, "name": "x", "filters": [], "encode": {"keyint": 1e300}}"#)
        try expectPresetError(keyint, mentioning: ["encode.keyint"])
        let version = try writePreset(#"{"version": 1e300, "name": "x", "filters": []}"#)
        try expectPresetError(version, mentioning: ["unsupported version"])
    }

    func testKeyframeTimesHuge() throws {
        let overflow = try writePreset(#"{"version": 1, "name": "x", "filters": [{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [1e400, 0.5]]}}]}"#)
        try expectPresetError(overflow, mentioning: ["1:", "too large"])
        let infinite = try writePreset(#"{"version": 1, "name": "x", "filters": [{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [Infinity, 0.5]]}}]}"#)
        try expectPresetError(infinite, mentioning: ["invalid number"])
        // Huge but finite is only a keyframe never reached.
        let late = try writePreset(#"{"version": 1, "name": "x", "filters": [{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [1e300, 0.5]]}}]}"#)
        let result = try gpuencode(["validate", late.path])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
    }

    /// `gpuencode presets` lists a folder with a file nested 1,000 deep (which crashed it) and
    /// says what is wrong with it.
    func testPresetsListingSurvivesAHostileFile() throws {
        let dir = scratch("presets")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var with = "\"#ff0000\""
        for _ in 0..<1000 { with = "{\"filter\": \"multiply\", \"with\": \(with)}" }
        try Data("{\"version\": 1, \"name\": \"deep\", \"filters\": [\(with)]}".utf8).write(to: dir.appendingPathComponent("deep.json"))
        try Data((String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)).utf8).write(to: dir.appendingPathComponent("arrays.json"))
        let result = try gpuencode(["presets", "--preset-dir", dir.path])
        XCTAssertFalse(result.signalled, result.summary)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertTrue(result.stdout.contains("nested more than"), result.stdout)
        let validate = try gpuencode(["validate", dir.appendingPathComponent("deep.json").path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("deep.json:1:") || validate.stderr.contains("deep.json:1:"), validate.stdout + validate.stderr)
    }

    // MARK: - Helpers

    private func writePreset(_ json: String) throws -> URL {
        let file = scratch("preset-\(UUID().uuidString.prefix(8)).json")
        try Data(json.utf8).write(to: file)
        return file
    }

    private func expectUsageError(_ arguments: [String], mentioning culprit: String,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try gpuencode(arguments)
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [culprit], file: file, line: line)
    }

    /// `validate` (every error, exit 67) and a transcode (the first error, one line, exit 67).
    private func expectPresetError(_ preset: URL, mentioning culprits: [String],
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        let validate = try gpuencode(["validate", preset.path])
        XCTAssertFalse(validate.signalled, validate.summary, file: file, line: line)
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary, file: file, line: line)
        let input = scratch("in.mp4")
        if !FileManager.default.fileExists(atPath: input.path) { try Oracle.makeClip(input) }
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--preset", preset.path])
        assertCleanFailure(result, exitCodes: [ExitCode.badPreset], mentioning: [preset.path] + culprits, file: file, line: line)
    }
}
