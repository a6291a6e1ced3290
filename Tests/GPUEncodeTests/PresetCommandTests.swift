import Foundation
import XCTest

/// `gpuencode presets` and user presets: lookup through XDG_CONFIG_HOME and --preset-dir,
/// shadowing, show, upgrade, and a preset's encode settings against command-line flags.
final class PresetCommandTests: GPUEncodeTestCase {
    private func userDirectory() throws -> (env: [String: String], dir: URL) {
        let config = scratch("config")
        let dir = config.appendingPathComponent("gpuencode/presets")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (["XDG_CONFIG_HOME": config.path], dir)
    }

    func testListShowsUserPresetsAndShadowing() throws {
        let (env, dir) = try userDirectory()
        try #"{"version": 1, "name": "sepia", "description": "My own sepia", "filters": [{"filter": "sepia", "intensity": 0.5}]}"#
            .write(to: dir.appendingPathComponent("sepia.json"), atomically: true, encoding: .utf8)
        let extra = scratch("extra")
        try FileManager.default.createDirectory(at: extra, withIntermediateDirectories: true)
        try #"{"version": 1, "name": "mine", "description": "From a preset dir", "filters": [{"filter": "grayscale"}]}"#
            .write(to: extra.appendingPathComponent("mine.json"), atomically: true, encoding: .utf8)
        let result = try gpuencode(["presets", "--preset-dir", extra.path], environment: env)
        XCTAssertEqual(result.status, 0, result.summary)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.contains("mine") && $0.contains(extra.path + "/mine.json") && $0.contains("From a preset dir") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.contains("My own sepia") && $0.contains("shadows the built-in sepia") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.contains("built-in") && $0.contains("shadowed by \(dir.path)/sepia.json") }, result.stdout)

        // show resolves the user preset first.
        let show = try gpuencode(["presets", "show", "sepia"], environment: env)
        XCTAssertEqual(show.status, 0, show.summary)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        let filters = try XCTUnwrap(json["filters"] as? [[String: Any]])
        XCTAssertEqual(filters.first?["intensity"] as? Double, 0.5)
        XCTAssertEqual(json["description"] as? String, "My own sepia")

        let unknown = try gpuencode(["presets", "show", "sepai"], environment: env)
        assertCleanFailure(unknown, exitCodes: [ExitCode.badPreset], mentioning: ["sepai", "did you mean \"sepia\""])
    }

    func testTranscodeFindsUserPresetAndEncodeDefaultsYieldToFlags() throws {
        let (env, dir) = try userDirectory()
        try #"{"version": 1, "name": "gop", "description": "short GOP", "encode": {"keyint": 5, "x264Preset": "ultrafast"}, "filters": [{"filter": "grayscale"}]}"#
            .write(to: dir.appendingPathComponent("gop.json"), atomically: true, encoding: .utf8)
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 1, size: "160x120", audio: false)
        func keyframes(_ file: URL) throws -> Int {
            let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "frame=key_frame", file.path])
            return (json["frames"] as? [[String: Any]] ?? []).filter { ($0["key_frame"] as? Int) == 1 }.count
        }
        let fromPreset = scratch("preset.mp4")
        let r1 = try gpuencode([input.path, fromPreset.path, "--preset", "gop"], environment: env)
        XCTAssertEqual(r1.status, 0, r1.summary)
        XCTAssertEqual(try keyframes(fromPreset), 5, "25 frames with the preset's keyint 5")

        let fromFlag = scratch("flag.mp4")
        let r2 = try gpuencode([input.path, fromFlag.path, "--preset", "gop", "--keyint", "250"], environment: env)
        XCTAssertEqual(r2.status, 0, r2.summary)
        XCTAssertEqual(try keyframes(fromFlag), 1, "--keyint 250 overrides the preset")

        // x264 writes its settings into the stream (an SEI message): the preset's speed preset
        // (ultrafast: no CABAC) and the flag's keyint are there.
        let strings = try Oracle.runChecked("strings", [fromPreset.path]).stdout
        XCTAssertTrue(strings.contains("cabac=0"), "ultrafast from the preset: no CABAC")
        let flagStrings = try Oracle.runChecked("strings", [fromFlag.path]).stdout
        XCTAssertTrue(flagStrings.contains("keyint=250"), "the flag's keyint reached x264")
    }

    func testUpgradeWritesTheCurrentVersion() throws {
        let old = scratch("old.json")
        try #"{"version": 0, "name": "old", "filters": [{"type": "GPUImageGaussianBlurFilter", "blurRadiusInPixels": 3}]}"#
            .write(to: old, atomically: true, encoding: .utf8)
        let out = try gpuencode(["presets", "upgrade", old.path])
        XCTAssertEqual(out.status, 0, out.summary)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["version"] as? Int, 2)
        let f = (json["filters"] as? [[String: Any]])?.first
        XCTAssertEqual(f?["filter"] as? String, "gaussianBlur")
        XCTAssertEqual(f?["sigma"] as? Int, 3)

        let target = scratch("new.json")
        XCTAssertEqual(try gpuencode(["presets", "upgrade", old.path, "-o", target.path]).status, 0)
        XCTAssertEqual(try gpuencode(["validate", target.path]).status, 0)
        let again = try gpuencode(["presets", "upgrade", old.path, "-o", target.path])
        assertCleanFailure(again, exitCodes: [ExitCode.cannotCreate], mentioning: [target.path, "-y"])
        XCTAssertEqual(try gpuencode(["presets", "upgrade", old.path, "-o", target.path, "-y"]).status, 0)

        // Version 1's encode.x264Preset becomes speed (version 2), keeping its value and the rest.
        let v1 = scratch("v1.json")
        try #"{"version": 1, "name": "v1", "encode": {"crf": 20, "x264Preset": "slow"}, "filters": [{"filter": "sepia"}]}"#
            .write(to: v1, atomically: true, encoding: .utf8)
        let upgraded = try gpuencode(["presets", "upgrade", v1.path])
        XCTAssertEqual(upgraded.status, 0, upgraded.summary)
        let v2 = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(upgraded.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(v2["version"] as? Int, 2)
        let encode = v2["encode"] as? [String: Any]
        XCTAssertEqual(encode?["speed"] as? String, "slow")
        XCTAssertEqual(encode?["crf"] as? Int, 20)
        XCTAssertNil(encode?["x264Preset"])
        XCTAssertFalse(upgraded.stdout.contains("x264Preset"))

        let newer = scratch("newer.json")
        try #"{"version": 7, "name": "n", "filters": []}"#.write(to: newer, atomically: true, encoding: .utf8)
        assertCleanFailure(try gpuencode(["presets", "upgrade", newer.path]), exitCodes: [ExitCode.badPreset], mentioning: [newer.path, "unsupported version 7"])
    }
}
