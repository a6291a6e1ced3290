import Foundation
import XCTest

/// What must end, and end soon: a file a preset or the command line names that is no regular file
/// (a FIFO would block forever), a custom shader whose compile would take minutes and gigabytes,
/// an output larger than the largest picture, and a dry run that must refuse what the run refuses.
/// Every command runs under a short timeout, so a regression fails instead of hanging the suite.
final class BoundsTests: GPUEncodeTestCase {
    /// A hang guard, not a timing: each of these is refused before any work.
    private static let guardSeconds: TimeInterval = 60

    private func clip(_ name: String = "in.mp4", size: String = "64x48") throws -> URL {
        let file = scratch(name)
        if !FileManager.default.fileExists(atPath: file.path) {
            try Oracle.makeClip(file, seconds: 0.2, size: size, rate: 10, audio: false)
        }
        return file
    }

    private func write(_ name: String, _ text: String) throws -> URL {
        let file = scratch(name)
        try Data(text.utf8).write(to: file)
        return file
    }

    private func fifo(_ name: String) throws -> URL {
        let file = scratch(name)
        XCTAssertEqual(mkfifo(file.path, 0o644), 0, "mkfifo \(file.path)")
        return file
    }

    private func folder(_ name: String) throws -> URL {
        let dir = scratch(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    private func run(_ arguments: [String]) throws -> ProcessResult {
        try gpuencode(arguments, timeout: Self.guardSeconds)
    }

    // MARK: - Files that are not regular files

    /// Every kind of file a preset names, as a FIFO and as a folder: validate, preview and the run
    /// refuse it at once with 67 and one line. The `video` overlay is handed to FFmpeg by path, whose
    /// open blocked forever on a FIFO.
    func testEveryFileAPresetNamesIsRefusedAtOnceWhenNotARegularFile() throws {
        let input = try clip()
        let references: [(name: String, filter: String)] = [
            ("overlay.mp4", #"{"filter": "video", "file": "overlay.mp4"}"#),
            ("with.mp4", #"{"filter": "multiply", "with": "with.mp4"}"#),
            ("lookup.png", #"{"filter": "lookup", "image": "lookup.png"}"#),
            ("picture.png", #"{"filter": "image", "file": "picture.png"}"#),
            ("table.cube", #"{"filter": "lut3d", "file": "table.cube"}"#),
            ("curves.acv", #"{"filter": "toneCurve", "acv": "curves.acv"}"#),
            ("look.frag", #"{"filter": "shader", "file": "look.frag"}"#),
        ]
        for kind in ["fifo", "folder"] {
            for (name, filter) in references {
                let dir = try folder("\(kind)-\(name)-dir")
                let target = dir.appendingPathComponent(name)
                if kind == "fifo" { XCTAssertEqual(mkfifo(target.path, 0o644), 0) } else {
                    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
                }
                let preset = dir.appendingPathComponent("p.json")
                try Data(#"{"version": 2, "name": "p", "filters": [\#(filter)]}"#.utf8).write(to: preset)
                let what = kind == "fifo" ? "FIFO" : "directory"
                let validate = try run(["validate", preset.path])
                XCTAssertEqual(validate.status, ExitCode.badPreset, "validate, \(name) a \(kind): \(validate.summary)")
                XCTAssertTrue(validate.stdout.contains(what), "validate, \(name) a \(kind): \(validate.stdout)")
                assertCleanFailure(try run(["preview", input.path, "--preset", preset.path, "-o", scratch("p.png").path]),
                                   exitCodes: [ExitCode.badPreset], mentioning: [name, what])
                let out = try folder("out-\(kind)-\(name)")
                assertCleanFailure(try run([input.path, out.appendingPathComponent("o.mp4").path, "--preset", preset.path]),
                                   exitCodes: [ExitCode.badPreset], mentioning: [name, what], outputDirectory: out, before: [])
            }
        }
        // `extends` and --filter's inline chain go through the same check.
        let dir = try folder("extends")
        let parent = dir.appendingPathComponent("parent.json")
        XCTAssertEqual(mkfifo(parent.path, 0o644), 0)
        let child = dir.appendingPathComponent("child.json")
        try Data(#"{"version": 2, "name": "c", "extends": "./parent.json", "filters": []}"#.utf8).write(to: child)
        XCTAssertEqual(try run(["validate", child.path]).status, ExitCode.badPreset)
        let overlay = try fifo("inline.mp4")
        assertCleanFailure(try run([input.path, scratch("o.mp4").path, "--allow-path", workDirectory.path, "--filter", "video:file=\(overlay.path)"]),
                           exitCodes: [ExitCode.badPreset, ExitCode.usage], mentioning: ["inline.mp4", "FIFO"])
    }

    /// `studio --preset` on a FIFO or a folder: one line, 67 (it was 1 with `FileReadError(...)`).
    func testStudioPresetThatIsNotARegularFileIsOneLinePresetError() throws {
        let input = try clip()
        let pipe = try fifo("look.json")
        let dir = try folder("dir.json")
        for (preset, what) in [(pipe, "FIFO"), (dir, "directory")] {
            assertCleanFailure(try run(["studio", input.path, "--preset", preset.path]),
                               exitCodes: [ExitCode.badPreset], mentioning: [preset.lastPathComponent, what])
            assertCleanFailure(try run(["studio", input.path, "--preset", "sepia", "--compare-with", preset.path]),
                               exitCodes: [ExitCode.badPreset], mentioning: [preset.lastPathComponent, what])
        }
    }

    // MARK: - A dry run refuses what the run refuses

    /// Each case run for real and with --dry-run: the same exit code, one line, nothing left behind.
    func testDryRunRefusesWhatTheRunRefuses() throws {
        let input = try clip()
        let victim = try write("victim.txt", "must not change\n")
        let overlayDir = try folder("overlay")
        XCTAssertEqual(mkfifo(overlayDir.appendingPathComponent("o.mp4").path, 0o644), 0)
        let fifoPreset = overlayDir.appendingPathComponent("p.json")
        try Data(#"{"version": 2, "name": "p", "filters": [{"filter": "video", "file": "o.mp4"}]}"#.utf8).write(to: fifoPreset)
        let exists = try write("exists.mp4", "x")
        let cases: [(label: String, arguments: (URL) -> [String], setup: (URL) throws -> Void, code: Int32)] = [
            ("progress file is a symlink", { [input.path, $0.appendingPathComponent("o.mp4").path, "-progress", $0.appendingPathComponent("p.txt").path] },
             { try FileManager.default.createSymbolicLink(at: $0.appendingPathComponent("p.txt"), withDestinationURL: victim) }, ExitCode.cannotCreate),
            ("progress file exists, no -y", { [input.path, $0.appendingPathComponent("o.mp4").path, "-progress", $0.appendingPathComponent("p.txt").path] },
             { try Data("old".utf8).write(to: $0.appendingPathComponent("p.txt")) }, ExitCode.cannotCreate),
            ("progress file in a missing folder", { [input.path, $0.appendingPathComponent("o.mp4").path, "-progress", $0.appendingPathComponent("no/p.txt").path] },
             { _ in }, ExitCode.cannotCreate),
            ("progress file is a folder", { [input.path, $0.appendingPathComponent("o.mp4").path, "-progress", $0.path] }, { _ in }, ExitCode.cannotCreate),
            ("output exists, no -y", { _ in [input.path, exists.path] }, { _ in }, ExitCode.cannotCreate),
            ("output is a planted link", { [input.path, $0.appendingPathComponent("o.mp4").path] },
             { try FileManager.default.createSymbolicLink(at: $0.appendingPathComponent("o.mp4"), withDestinationURL: victim) }, ExitCode.cannotCreate),
            ("output folder in /proc", { _ in [input.path, "/proc/gpuencode-bounds-test.mp4"] }, { _ in }, ExitCode.cannotCreate),
            ("output folder missing", { [input.path, $0.appendingPathComponent("no/o.mp4").path] }, { _ in }, ExitCode.cannotCreate),
            ("size past the largest output", { [input.path, $0.appendingPathComponent("o.mp4").path, "--size", "16384x16384"] }, { _ in }, ExitCode.usage),
            ("overlay is a FIFO", { [input.path, $0.appendingPathComponent("o.mp4").path, "--preset", fifoPreset.path] }, { _ in }, ExitCode.badPreset),
            ("codec the container cannot hold", { [input.path, $0.appendingPathComponent("o.webm").path, "--codec", "h264"] }, { _ in }, ExitCode.usage),
            ("missing input", { [self.scratch("nope.mp4").path, $0.appendingPathComponent("o.mp4").path] }, { _ in }, ExitCode.noInput),
        ]
        for (n, c) in cases.enumerated() {
            for dry in [false, true] {
                let dir = try folder("case-\(n)-\(dry)")
                try c.setup(dir)
                let before = listing(dir)
                let result = try run(c.arguments(dir) + ["--speed", "ultrafast"] + (dry ? ["--dry-run"] : []))
                XCTAssertEqual(result.status, c.code, "\(c.label)\(dry ? " (dry run)" : ""): \(result.summary)")
                XCTAssertEqual(result.stderrLines.count, 1, "\(c.label)\(dry ? " (dry run)" : ""): \(result.stderr)")
                XCTAssertEqual(listing(dir), before, "\(c.label)\(dry ? " (dry run)" : ""): files left behind")
            }
        }
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "must not change\n")
    }

    /// A dry run that passes leaves nothing: not the progress file it checked, nor a temporary.
    func testDryRunThatPassesLeavesNothing() throws {
        let input = try clip()
        let dir = try folder("out")
        let result = try run([input.path, dir.appendingPathComponent("o.mp4").path, "-progress", dir.appendingPathComponent("p.txt").path, "--dry-run"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertEqual(listing(dir), [])
    }

    // MARK: - The largest output

    /// Past 16384 a side or 8,912,896 pixels (4096x2176) for a movie: 64 when asked for, before any
    /// frame, for the run, its dry run and a batch job; exactly at the limit a dry run passes. A
    /// picture output's limit is 67,108,864 pixels (8192x8192).
    func testOutputsPastTheLargestPictureAreRefusedUpfront() throws {
        let input = try clip(size: "64x48")
        // 64x48 is 4:3: --width 3600 is 3600x2700, 9.7 million pixels.
        for arguments in [["--size", "16384x16384"], ["--width", "3600"], ["--height", "16384"]] {
            let out = try folder("o-\(arguments.joined())")
            for extra in [[], ["--dry-run"]] {
                assertCleanFailure(try run([input.path, out.appendingPathComponent("o.mp4").path] + arguments + extra),
                                   exitCodes: [ExitCode.usage], mentioning: ["8912896"], outputDirectory: out, before: [])
            }
            assertCleanFailure(try run([input.path, "--benchmark-filters", "2"] + arguments), exitCodes: [ExitCode.usage], mentioning: ["8912896"])
            let batch = try run(["batch", input.path, "--out-dir", out.path, "--speed", "ultrafast"] + arguments)
            XCTAssertEqual(batch.status, 80, "batch: \(batch.summary)")
            XCTAssertTrue(batch.stderr.contains("8912896"), batch.summary)
        }
        for arguments in [["--size", "16384x16384"], ["--height", "16384"], ["--width", "9600"]] {
            let out = try folder("p-\(arguments.joined())")
            assertCleanFailure(try run([input.path, out.appendingPathComponent("o.png").path] + arguments),
                               exitCodes: [ExitCode.usage], mentioning: ["67108864"], outputDirectory: out, before: [])
        }
        // 256x136 is 4096x2176's shape: that size exactly is accepted.
        let exact = try clip("exact.mp4", size: "256x136")
        let plan = try run([exact.path, scratch("big.mp4").path, "--size", "4096x2176", "--dry-run", "--speed", "ultrafast"])
        XCTAssertEqual(plan.status, ExitCode.ok, plan.summary)
        XCTAssertTrue(plan.stdout.contains("4096x2176"), plan.stdout)
    }

    /// A movie past the largest picture is refused as an input (66) before any frame; a still past
    /// the picture limit too, unless a size option brings it within.
    func testInputPastTheLargestPictureIsRefused() throws {
        let big = scratch("big.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=gray:size=4096x2192:rate=1",
                                         "-frames:v", "1", "-c:v", "ffv1", big.path])
        assertCleanFailure(try run([big.path, scratch("o.mp4").path, "--max-width", "640"]),
                           exitCodes: [ExitCode.noInput], mentioning: ["big.mkv", "4096x2192", "8912896"])
        let still = scratch("still.png")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=gray:size=8200x8200",
                                         "-frames:v", "1", still.path])
        assertCleanFailure(try run([still.path, scratch("o.png").path]),
                           exitCodes: [ExitCode.noInput], mentioning: ["still.png", "8200x8200", "67108864"])
        let small = scratch("small.png")
        let r = try run([still.path, small.path, "--max-width", "512"])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        let s = try XCTUnwrap(Oracle.streams(small).first)
        XCTAssertEqual([s.width, s.height], [512, 512])
    }

    // MARK: - Custom shaders

    private func shaderPreset(_ name: String, _ source: String) throws -> URL {
        let escaped = source.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return try write(name, #"{"version": 2, "name": "s", "filters": [{"filter": "shader", "source": "\#(escaped)"}]}"#)
    }

    private static let sample = "gl_FragColor = texture2D(inputImageTexture, textureCoordinate)"

    /// Arrays past the bound, however they are spelled, and sources that expand past theirs: validate
    /// and the run refuse them alike (67, the same words), quickly, where a million-element array took
    /// minutes and 6 GB to compile.
    func testShadersPastTheBoundsAreRefusedAlikeByValidateAndRun() throws {
        let cases: [(String, String, String)] = [
            ("local", "void main() { float a[1000000]; a[0] = 1.0; \(Self.sample) * a[int(textureCoordinate.x)]; }", "more than 4096 elements"),
            ("global", "float g[5000];\nvoid main() { g[0] = 1.0; \(Self.sample) * g[0]; }", "more than 4096 elements"),
            ("vec4 counts 4", "void main() { vec4 a[1025]; a[0] = vec4(1.0); \(Self.sample) * a[0]; }", "more than 4096 elements"),
            ("const", "const int N = 1000 * 1000;\nvoid main() { float a[N]; a[0] = 1.0; \(Self.sample) * a[0]; }", "more than 4096 elements"),
            ("define", "#define N 1000000\nvoid main() { float a[N]; a[0] = 1.0; \(Self.sample) * a[0]; }", "more than 4096 elements"),
            ("type first", "void main() { float[1000000] a; a[0] = 1.0; \(Self.sample) * a[0]; }", "more than 4096 elements"),
            ("parameter", "float f(float a[100000]) { return a[0]; }\nvoid main() { \(Self.sample); }", "more than 4096 elements"),
            ("struct", "struct S { float v[100]; };\nvoid main() { S s[100]; s[0].v[0] = 1.0; \(Self.sample) * s[0].v[0]; }", "more than 4096 elements"),
            // Inlined eight times, a local array is eight arrays (4096 each took 33 s and 1.2 GB).
            ("inlined copies", "float f(float x) { float a[1024]; a[0] = x; return a[int(x)]; }\nvoid main() { float t = textureCoordinate.x; \(Self.sample) * (f(t) + f(t) + f(t) + f(t) + f(t)); }",
             "inlined 5 times"),
            ("two together", "float a[3000];\nvoid main() { float b[3000]; \(Self.sample); }", "more than 4096 elements"),
            ("unknown size", "void main() { float a[gl_MaxDrawBuffers * 100000]; \(Self.sample); }", "must be a whole number"),
            ("macro bomb", (1...30).map { "#define M\($0) M\($0 - 1) M\($0 - 1)" }.joined(separator: "\n") + "\n#define M0 1.0+\nvoid main() { float x = M30 1.0; \(Self.sample) * x; }",
             "more than 200000 tokens"),
            ("inlining bomb", "float f0(float x) { return x * 1.0001; }\n" + (1...30).map { "float f\($0)(float x) { return f\($0 - 1)(x) + f\($0 - 1)(x); }" }.joined(separator: "\n")
             + "\nvoid main() { \(Self.sample) * f30(1.0); }", "inlines them"),
            ("deep nesting", "void main() { float x = " + String(repeating: "(", count: 300) + "1.0" + String(repeating: ")", count: 300) + "; \(Self.sample) * x; }",
             "more than 256 deep"),
            ("too long", "void main() { \(Self.sample); }\n" + String(repeating: "// padding\n", count: 7000), "at most 65536"),
        ]
        let input = try clip()
        for (label, source, message) in cases {
            let p = try shaderPreset("\(label.replacingOccurrences(of: " ", with: "-")).json", source)
            let validate = try run(["validate", p.path])
            XCTAssertEqual(validate.status, ExitCode.badPreset, "\(label): \(validate.summary)")
            XCTAssertTrue(validate.stdout.contains(message), "\(label): \(validate.stdout)")
            assertCleanFailure(try run([input.path, scratch("o.mp4").path, "--preset", p.path]),
                               exitCodes: [ExitCode.badPreset], mentioning: [p.lastPathComponent, message])
        }
    }

    /// Within the bounds: the largest array accepted (4096 floats, indexed at run time), macros and
    /// small helper functions compile and run; the compile of the largest is measured (-v prints nothing
    /// of it; the whole run's time is the bound here, generous for a loaded machine).
    func testShadersWithinTheBoundsRun() throws {
        let input = try clip()
        let sources = [
            "float a[4096];\nvoid main() { for (int i = 0; i < 4096; i++) a[i] = float(i) / 4096.0; \(Self.sample) * a[int(textureCoordinate.x * 4095.0)]; }",
            "#define TAPS 9\nconst int N = TAPS * 4;\nuniform float unused;\nvec4 w[N];\nfloat f(float x) { return x * 0.5; }\nvoid main() { w[0] = vec4(1.0); \(Self.sample) * w[0] * f(2.0); }",
            "const float k[] = float[](0.25, 0.5, 0.25);\nvoid main() { \(Self.sample) * (k[0] + k[1] + k[2]); }",
        ]
        for (n, source) in sources.enumerated() {
            let p = try shaderPreset("ok\(n).json", source)
            let validate = try run(["validate", p.path])
            XCTAssertEqual(validate.status, ExitCode.ok, "\(source): \(validate.summary)")
            let started = Date()
            let result = try run([input.path, scratch("o\(n).mp4").path, "--preset", p.path, "--speed", "ultrafast"])
            XCTAssertEqual(result.status, ExitCode.ok, "\(source): \(result.summary)")
            print("shader \(n): the run took \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
        }
    }
}
