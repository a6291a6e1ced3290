import Foundation
import XCTest

/// `validate` predicts what runs: presets beyond one shader's limits run (their passes split), and
/// presets nothing can run are refused by validate and the run alike with 67. Pictures and options
/// the GPU or encoder cannot take get their own documented codes, never 69 (which means no GPU).
final class GPULimitTests: GPUEncodeTestCase {
    private func clip(_ name: String = "in.mp4", size: String = "64x48", codec: [String] = Oracle.defaultVideoArguments) throws -> URL {
        let file = scratch(name)
        try Oracle.makeClip(file, seconds: 0.2, size: size, rate: 10, audio: false, videoArguments: codec)
        return file
    }

    private func preset(_ name: String, filters: [String]) throws -> URL {
        let file = scratch(name)
        try Data(#"{"version": 1, "name": "p", "filters": [\#(filters.joined(separator: ",\n"))]}"#.utf8).write(to: file)
        return file
    }

    private func graph(_ name: String, nodes: [String], output: String) throws -> URL {
        let file = scratch(name)
        try Data(#"{"version": 1, "name": "g", "graph": {"nodes": {\#(nodes.joined(separator: ",\n"))}, "output": "\#(output)"}}"#.utf8).write(to: file)
        return file
    }

    /// 16 fused tone curves validated and then failed to link (69) on llvmpipe.
    func testSixteenToneCurvesValidateAndRun() throws {
        let curve = #"{"filter": "toneCurve", "rgb": [[0, 0.05], [0.5, 0.6], [1, 0.95]]}"#
        let p = try preset("curves.json", filters: Array(repeating: curve, count: 16))
        let validate = try gpuencode(["validate", "--passes", p.path])
        XCTAssertEqual(validate.status, ExitCode.ok, validate.summary)
        XCTAssertTrue(validate.stdout.contains("pass 2:"), "the plan splits the chain: \(validate.stdout)")
        let out = scratch("out.mp4")
        let run = try gpuencode([try clip().path, out.path, "--preset", p.path])
        XCTAssertEqual(run.status, ExitCode.ok, run.summary)
        XCTAssertEqual(try Oracle.frameTimes(out).count, 2)
    }

    func testHundredFilterChainValidatesAndRuns() throws {
        let steps = (0..<100).map { i in
            i % 2 == 0 ? #"{"filter": "contrast", "contrast": 1.01}"# : #"{"filter": "toneCurve", "rgb": [[0, 0], [0.5, 0.52], [1, 1]]}"#
        }
        let p = try preset("long.json", filters: steps)
        XCTAssertEqual(try gpuencode(["validate", p.path]).status, ExitCode.ok)
        let out = scratch("out.mp4")
        let run = try gpuencode([try clip().path, out.path, "--preset", p.path])
        XCTAssertEqual(run.status, ExitCode.ok, run.summary)
        XCTAssertEqual(try Oracle.frameTimes(out).count, 2)
    }

    /// A chain past the bound: 67 with the first step past it, at validate and at run.
    func testChainLongerThanTheBoundIsRefusedWithItsPosition() throws {
        let p = try preset("long.json", filters: [#"{"filter": "sepia", "id": "a"}"#]
                           + Array(repeating: #"{"filter": "multiply", "with": {"node": "a"}}"#, count: 300))
        let validate = try gpuencode(["validate", p.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("long.json:257:1: error: filters[256]: a chain has at most 256 steps"), validate.stdout)
        let input = try clip()
        let before = listing(workDirectory)
        assertCleanFailure(try gpuencode([input.path, scratch("out.mp4").path, "--preset", p.path]), exitCodes: [ExitCode.badPreset],
                           mentioning: ["long.json: 257:1: filters[256]"], outputDirectory: workDirectory, before: before)
    }

    /// A 2,000-node fan-out: refused by validate and the run alike, at the 257th node.
    func testHugeFanOutGraphIsRefusedByValidateAndRun() throws {
        var nodes = (0..<1000).map { #""n\#($0)": {"filter": "sepia", "inputs": ["source"]}"# }
        var previous = "n0"
        for i in 1..<1000 {
            nodes.append(#""b\#(i)": {"filter": "screen", "inputs": ["\#(previous)", "n\#(i)"]}"#)
            previous = "b\(i)"
        }
        let g = try graph("fan.json", nodes: nodes, output: previous)
        let validate = try gpuencode(["validate", g.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("fan.json:257:"), validate.stdout)
        XCTAssertTrue(validate.stdout.contains("graph.nodes.n256: a graph has at most 256 nodes, this one has 1999"), validate.stdout)
        assertCleanFailure(try gpuencode([try clip().path, scratch("out.mp4").path, "--preset", g.path]),
                           exitCodes: [ExitCode.badPreset], mentioning: ["fan.json: 257:", "at most 256 nodes"])
    }

    /// Compile time is bounded: 86 smoothToon filters are 259 passes.
    func testTooManyPassesAreRefusedByValidateAndRun() throws {
        let p = try preset("toon.json", filters: Array(repeating: #"{"filter": "smoothToon"}"#, count: 86))
        try assertRefusedAlike(p, saying: "filters[85] smoothToon takes the chain past 256 shader passes")
    }

    /// One custom shader larger than any shader this GPU links: no split helps; validate says so.
    func testShaderBeyondTheGPUsLimitsIsRefusedByValidateAndRun() throws {
        let source = "uniform vec4 big[70000];\\nvoid main() { gl_FragColor = texture2D(inputImageTexture, textureCoordinate) + 0.0 * big[int(textureCoordinate.x * 3.0)]; }"
        let p = try preset("big.json", filters: [#"{"filter": "shader", "source": "\#(source)"}"#])
        try assertRefusedAlike(p, saying: "no split of the chain can help")
    }

    /// `validate` and the run refuse `preset` alike: 67, with the same words, and nothing written.
    private func assertRefusedAlike(_ preset: URL, saying message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let validate = try gpuencode(["validate", preset.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary, file: file, line: line)
        XCTAssertTrue(validate.stdout.contains(message), validate.stdout, file: file, line: line)
        let input = try clip()
        let before = listing(workDirectory)
        assertCleanFailure(try gpuencode([input.path, scratch("out.mp4").path, "--preset", preset.path]),
                           exitCodes: [ExitCode.badPreset], mentioning: [preset.lastPathComponent, message],
                           outputDirectory: workDirectory, before: before, file: file, line: line)
    }

    /// libx264 and llvmpipe stop at 16384: refused before the encoder opens, as an input error.
    func testPictureWiderThanTheLimitIsRefusedUpfront() throws {
        let wide = try clip("wide.mkv", size: "16400x16", codec: ["-c:v", "ffv1"])
        assertCleanFailure(try gpuencode([wide.path, scratch("out.mp4").path, "--preset", "sepia"]),
                           exitCodes: [ExitCode.noInput], mentioning: ["wide.mkv", "16400x16", "16384"],
                           outputDirectory: workDirectory, before: listing(workDirectory))
        assertCleanFailure(try gpuencode(["preview", wide.path, "--preset", "sepia", "-o", scratch("p.png").path]),
                           exitCodes: [ExitCode.noInput], mentioning: ["wide.mkv", "16384"])
    }

    /// A preset that scales the picture past the limit is the preset's fault: 67, run and preview.
    func testPresetMakingThePictureTooLargeIsAPresetError() throws {
        let p = try preset("big.json", filters: [#"{"filter": "resize", "height": 16384}"#])
        let input = try clip()
        assertCleanFailure(try gpuencode([input.path, scratch("out.mp4").path, "--preset", p.path]),
                           exitCodes: [ExitCode.badPreset], mentioning: ["big.json", "21844x16384"])
        assertCleanFailure(try gpuencode(["preview", input.path, "--preset", p.path, "-o", scratch("p.png").path]),
                           exitCodes: [ExitCode.badPreset], mentioning: ["big.json", "21844x16384"])
    }

    func testOneByOneIsRefusedAndThreeByThreeWorks() throws {
        for size in ["1x1", "1x9"] {
            // (testsrc2 has no 1-pixel sizes; testsrc has.)
            let tiny = scratch("tiny-\(size).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=10",
                                             "-t", "0.2", "-c:v", "ffv1", tiny.path])
            assertCleanFailure(try gpuencode([tiny.path, scratch("out.mp4").path, "--preset", "sepia"]),
                               exitCodes: [ExitCode.noInput], mentioning: ["tiny-\(size).mkv", "at least 2x2"],
                               outputDirectory: workDirectory, before: listing(workDirectory))
            assertCleanFailure(try gpuencode(["preview", tiny.path, "--preset", "sepia", "-o", scratch("p.png").path]),
                               exitCodes: [ExitCode.noInput], mentioning: ["at least 2x2"])
        }
        let three = try clip("three.mkv", size: "3x3", codec: ["-c:v", "ffv1"])
        for preset in ["sepia", "identity"] {
            let out = scratch("three-\(preset).mp4")
            let run = try gpuencode([three.path, out.path, "--preset", preset])
            XCTAssertEqual(run.status, ExitCode.ok, run.summary)
            let video = try Oracle.streams(out).first { $0.codecType == "video" }
            XCTAssertEqual(video?.width, 2)
            XCTAssertEqual(video?.height, 2)
        }
        let png = scratch("three.png")
        let preview = try gpuencode(["preview", three.path, "--preset", "sepia", "-o", png.path])
        XCTAssertEqual(preview.status, ExitCode.ok, preview.summary)
        XCTAssertTrue(FileManager.default.fileExists(atPath: png.path))
    }

    /// A file whose container opens but whose every frame fails to decode: 65, as the transcode.
    func testPreviewOfAnUndecodableFileIs65() throws {
        let good = try clip()
        var bytes = [UInt8](try Data(contentsOf: good))
        let mdat = Array("mdat".utf8)
        guard let at = (4..<(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == mdat }) else { return XCTFail("no mdat") }
        let size = Int(bytes[at - 4]) << 24 | Int(bytes[at - 3]) << 16 | Int(bytes[at - 2]) << 8 | Int(bytes[at - 1])
        for i in (at + 4)..<min(bytes.count, at - 4 + size) { bytes[i] = 0xff }
        let bad = scratch("bad.mp4")
        try Data(bytes).write(to: bad)
        assertCleanFailure(try gpuencode(["preview", bad.path, "--preset", "sepia", "-o", scratch("p.png").path]),
                           exitCodes: [ExitCode.dataError], mentioning: ["bad.mp4", "no video frame could be decoded"],
                           outputDirectory: workDirectory, before: listing(workDirectory))
        assertCleanFailure(try gpuencode([bad.path, scratch("out.mp4").path, "--preset", "sepia"]),
                           exitCodes: [ExitCode.dataError], mentioning: ["bad.mp4"])
    }

    func testBogusProfileIsAUsageError() throws {
        let input = try clip()
        assertCleanFailure(try gpuencode([input.path, scratch("out.mp4").path, "--profile", "bogus"]),
                           exitCodes: [ExitCode.usage], mentioning: ["bogus", "high444"],
                           outputDirectory: workDirectory, before: listing(workDirectory))
        let batch = try gpuencode(["batch", input.path, "--out-dir", scratch("o").path, "--profile", "bogus"])
        XCTAssertEqual(batch.status, ExitCode.usage, batch.summary)
        XCTAssertTrue(batch.stderr.contains("bogus"), batch.stderr)
        let csv = scratch("jobs.csv")
        try "input,profile\nin.mp4,bogus\n".write(to: csv, atomically: true, encoding: .utf8)
        let manifest = try gpuencode(["batch", "--manifest", csv.path, "--out-dir", scratch("o").path])
        XCTAssertEqual(manifest.status, ExitCode.usage, manifest.summary)
        XCTAssertTrue(manifest.stderr.contains("jobs.csv:2") && manifest.stderr.contains("bogus"), manifest.stderr)
        // A real profile goes through.
        let main = scratch("main.mp4")
        XCTAssertEqual(try gpuencode([input.path, main.path, "--profile", "main"]).status, ExitCode.ok)
        XCTAssertEqual(try Oracle.ffprobeJSON(["-show_streams", main.path])["streams"].flatMap { ($0 as? [[String: Any]])?.first?["profile"] as? String }, "Main")
    }
}
