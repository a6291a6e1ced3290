import Foundation
import XCTest

/// What a preset author relies on (issue 14): custom shaders may declare the built-ins they read as
/// GPUImage shaders do, `presets show` output loads from another folder without warnings, and a
/// blend without a second input is an error rather than a silent identity.
final class PresetAuthorTests: GPUEncodeTestCase {
    func write(_ text: String, _ url: URL) throws -> URL {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url
    }

    func frameMD5s(_ file: URL) throws -> [String] {
        let result = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0", "-f", "framemd5", "-"])
        return result.stdout.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }
            .map { String($0.split(separator: ",").last!.trimmingCharacters(in: .whitespaces)) }
    }

    func shaderPreset(_ body: String, _ name: String) throws -> URL {
        let source = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        return try write(#"{"version": 2, "name": "s", "filters": [{"filter": "shader", "source": "\#(source)"}]}"#, scratch(name))
    }

    /// A GPUImage-style shader that declares `time`, `frameIndex`, `texelWidth` and `inputSize` itself
    /// compiles (before, `uniform float time;` collided with the built-in), and the built-ins hold what
    /// docs/presets.md says: grey v = frameIndex * 20 / 255, then v = time * 2 at 10 fps, measured
    /// as ffmpeg's signalstats YAVG against 16 + 219 v (limited range).
    func testShaderMayDeclareTheBuiltinsItReads() throws {
        let input = scratch("clip.mp4")
        try Oracle.makeClip(input, seconds: 1, rate: 10, audio: false)
        for (name, value, expected) in [("frame", "frameIndex * 20.0 / 255.0", { (i: Int) in Double(20 * i) / 255 }),
                                        ("time", "time * 2.0", { (i: Int) in min(1, Double(i) * 0.2) })] {
            let preset = try shaderPreset("""
            varying highp vec2 textureCoordinate;
            uniform sampler2D inputImageTexture;
            uniform float time;
            uniform highp float frameIndex;
            uniform highp float texelWidth;
            uniform vec2 inputSize;
            void main() {
                vec4 c = texture2D(inputImageTexture, textureCoordinate);
                float v = \(value) + 0.0 * (c.r + texelWidth + inputSize.x);
                gl_FragColor = vec4(v, v, v, 1.0);
            }
            """, name + ".json")
            let validate = try gpuencode(["validate", preset.path])
            XCTAssertEqual(validate.status, ExitCode.ok, validate.summary)
            let out = scratch(name + ".mp4")
            let result = try gpuencode([input.path, out.path, "--preset", preset.path, "--crf", "0"])
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            let stats = try Oracle.signalStats(out)
            XCTAssertEqual(stats.count, 10)
            for (i, s) in stats.enumerated() {
                let want = 16 + 219 * expected(i)
                XCTAssertEqual(s["YAVG"]!, want, accuracy: 1.0, "\(name): frame \(i) YAVG \(s["YAVG"]!), expected \(want)")
            }
        }
    }

    /// A built-in declared with another type is one error line at the shader's line, exit 67.
    func testBuiltinDeclaredWithAnotherTypeIsAnError() throws {
        let preset = try shaderPreset("""
        uniform sampler2D inputImageTexture;
        uniform int frameIndex;
        void main() { gl_FragColor = vec4(float(frameIndex)); }
        """, "bad.json")
        let validate = try gpuencode(["validate", preset.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("line 2: frameIndex is a built-in float"), validate.stdout)
        let input = scratch("clip.mp4")
        try Oracle.makeClip(input, seconds: 0.2, audio: false)
        let run = try gpuencode([input.path, scratch("out.mp4").path, "--preset", preset.path])
        assertCleanFailure(run, exitCodes: [ExitCode.badPreset], mentioning: ["line 2: frameIndex is a built-in float", "uniform float frameIndex;"])
    }

    /// `presets show` of a preset reading a shader file, a LUT and an image, written into another
    /// folder, loads there (with --allow-path for the files' folder), gives the same frames (framemd5)
    /// and no warnings; every built-in's `show` output validates without warnings too.
    func testPresetsShowOutputLoadsFromAnotherFolder() throws {
        let a = scratch("a"), b = scratch("b")
        _ = try write("""
        uniform sampler2D inputImageTexture;
        varying highp vec2 textureCoordinate;
        uniform lowp float amount;
        void main() {
            lowp vec4 c = texture2D(inputImageTexture, textureCoordinate);
            gl_FragColor = vec4(mix(c.rgb, vec3(1.0) - c.rgb, amount), c.a);
        }
        """, a.appendingPathComponent("shaders/invert.frag"))
        var cube = "LUT_3D_SIZE 2\n"
        for z in 0...1 { for y in 0...1 { for x in 0...1 { cube += "\(0.1 + 0.8 * Double(x)) \(0.8 * Double(y)) \(0.2 + 0.6 * Double(z))\n" } } }
        _ = try write(cube, a.appendingPathComponent("looks/warm.cube"))
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=0xffa050:size=64x64", "-frames:v", "1",
                                         a.appendingPathComponent("over.png").path])
        let look = try write("""
        {"version": 2, "name": "look", "filters": [
          {"filter": "shader", "file": "shaders/invert.frag",
           "parameters": {"amount": {"type": "float", "default": 0.5, "range": [0, 1]}}, "amount": 0.25},
          {"filter": "lut3d", "file": "looks/warm.cube", "intensity": 0.8},
          {"filter": "multiply", "with": "over.png", "opacity": 0.5},
          {"filter": "vignette", "end": 0.9}
        ]}
        """, a.appendingPathComponent("look.json"))
        // Given relative to the working directory, as a user types it.
        let bin = try Paths.gpuencode()
        let shown = try Oracle.run("/bin/sh", ["-c", "cd '\(workDirectory.path)' && exec '\(bin)' presets show a/look.json"])
        XCTAssertEqual(shown.status, ExitCode.ok, shown.summary)
        for file in ["shaders/invert.frag", "looks/warm.cube", "over.png"] {
            XCTAssertTrue(shown.stdout.contains("\"\(a.path)/\(file)\""), "\(file) is not absolute in: \(shown.stdout)")
        }
        let copy = try write(shown.stdout, b.appendingPathComponent("shown.json"))
        let validate = try gpuencode(["validate", copy.path, "--allow-path", a.path])
        XCTAssertEqual(validate.status, ExitCode.ok, validate.summary)
        XCTAssertEqual(validate.stdout.split(whereSeparator: \.isNewline).first.map(String.init), "\(copy.path): ok", validate.stdout)

        let input = scratch("clip.mp4")
        try Oracle.makeClip(input, seconds: 0.4, audio: false)
        let original = scratch("original.mp4"), again = scratch("again.mp4")
        XCTAssertEqual(try gpuencode([input.path, original.path, "--preset", look.path]).status, ExitCode.ok)
        let run = try gpuencode([input.path, again.path, "--preset", copy.path, "--allow-path", a.path])
        XCTAssertEqual(run.status, ExitCode.ok, run.summary)
        XCTAssertEqual(try frameMD5s(again), try frameMD5s(original), "the shown preset runs differently from the original")

        // Built-ins: their show output validates from another folder without warnings about defaults.
        let list = try gpuencode(["presets", "list"])
        let builtins = list.stdout.split(whereSeparator: \.isNewline).filter { $0.contains(" built-in ") }.map { String($0.split(separator: " ").first!) }
        XCTAssertGreaterThan(builtins.count, 20, list.stdout)
        for name in builtins {
            let text = try gpuencode(["presets", "show", name]).stdout
            // A built-in's pictures are embedded in the program: named builtin:assets/NAME, which loads anywhere.
            XCTAssertFalse(text.contains("\"assets/"), "\(name): an embedded file named as if beside the preset: \(text)")
            let file = try write(text, b.appendingPathComponent("\(name).json"))
            let result = try gpuencode(["validate", file.path])
            XCTAssertEqual(result.status, ExitCode.ok, "\(name): \(result.summary)")
            XCTAssertFalse(result.stdout.contains("warning"), "\(name): \(result.stdout)")
        }
    }

    /// A built-in's embedded picture is named builtin:assets/NAME, so a preset in any folder (the
    /// output of `presets show amatorka` saved elsewhere) renders as the built-in does; an unknown
    /// embedded name is a preset error.
    func testBuiltinFilesLoadFromAnyFolder() throws {
        let elsewhere = scratch("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let shown = try gpuencode(["presets", "show", "amatorka"])
        XCTAssertTrue(shown.stdout.contains("\"builtin:assets/amatorka.png\""), shown.stdout)
        let copy = try write(shown.stdout, elsewhere.appendingPathComponent("amatorka-copy.json"))
        let input = scratch("clip.mp4")
        try Oracle.makeClip(input, seconds: 0.2, audio: false)
        let builtin = scratch("builtin.mp4"), copied = scratch("copied.mp4")
        XCTAssertEqual(try gpuencode([input.path, builtin.path, "--preset", "amatorka"]).status, ExitCode.ok)
        let run = try gpuencode([input.path, copied.path, "--preset", copy.path])
        XCTAssertEqual(run.status, ExitCode.ok, run.summary)
        XCTAssertEqual(try frameMD5s(copied), try frameMD5s(builtin), "the copy of amatorka renders differently")
        let bad = try write(#"{"version": 2, "name": "b", "filters": [{"filter": "lookup", "image": "builtin:assets/nope.png"}]}"#, elsewhere.appendingPathComponent("bad.json"))
        let failed = try gpuencode([input.path, scratch("bad.mp4").path, "--preset", bad.path])
        XCTAssertEqual(failed.status, ExitCode.badPreset, failed.summary)
        XCTAssertTrue(failed.stderr.contains("no such file in the program"), failed.stderr)
    }

    /// A blend with nothing to blend was a silent identity; now it is one line naming the filter, 67,
    /// in a preset, in validate and in --filter.
    func testBlendWithoutSecondInputIsAnError() throws {
        let preset = try write(#"{"version": 2, "name": "b", "filters": [{"filter": "sepia"}, {"filter": "multiply", "opacity": 0.5}]}"#, scratch("blend.json"))
        let input = scratch("clip.mp4")
        try Oracle.makeClip(input, seconds: 0.2, audio: false)
        let run = try gpuencode([input.path, scratch("out.mp4").path, "--preset", preset.path])
        assertCleanFailure(run, exitCodes: [ExitCode.badPreset], mentioning: ["blend.json: 1:62: filters[1]: multiply is a blend and needs \"with\""],
                           outputDirectory: workDirectory, before: listing(workDirectory))
        let validate = try gpuencode(["validate", preset.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("multiply is a blend and needs \"with\""), validate.stdout)
        let inline = try gpuencode([input.path, scratch("out.mp4").path, "--filter", "sepia,screen:opacity=0.5"])
        assertCleanFailure(inline, exitCodes: [ExitCode.badPreset], mentioning: ["--filter: 1:7: ", "screen is a blend and needs \"with\""])
        let fixed = try gpuencode([input.path, scratch("out.mp4").path, "--filter", "sepia,screen:opacity=0.5:with=#336699"])
        XCTAssertEqual(fixed.status, ExitCode.ok, fixed.summary)
    }
}
