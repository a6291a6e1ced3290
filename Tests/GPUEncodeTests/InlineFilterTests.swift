import Foundation
import XCTest

/// `--filter` / `-vf`: a chain written on the command line must give the pixels of the same chain
/// written as a preset (ffmpeg's framemd5 of the decoded frames is the judge of equality), run after
/// `--preset`, point its errors at the column, and work in `preview` and `batch` (flag and manifest
/// column, CSV and JSON).
final class InlineFilterTests: GPUEncodeTestCase {
    /// The MD5 of every decoded frame, by ffmpeg (rgb24 for pictures, the stream's format for video).
    func frameMD5s(_ file: URL) throws -> [String] {
        let result = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0", "-f", "framemd5", "-"])
        return result.stdout.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }
            .map { String($0.split(separator: ",").last!.trimmingCharacters(in: .whitespaces)) }
    }

    func presetFile(_ name: String, _ filters: String) throws -> URL {
        let url = scratch(name + ".json")
        try Data(#"{"version": 2, "name": "\#(name)", "filters": [\#(filters)]}"#.utf8).write(to: url)
        return url
    }

    @discardableResult
    func transcode(_ clip: URL, _ name: String, _ extra: [String], environment: [String: String]? = nil) throws -> URL {
        let out = scratch(name)
        let result = try gpuencode([clip.path, out.path, "-y"] + extra, environment: environment)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        return out
    }

    func clip(_ name: String = "clip.mp4") throws -> URL {
        let url = scratch(name)
        try Oracle.makeClip(url, seconds: 0.4, audio: false)
        return url
    }

    /// The same chain, as --filter, as -vf with positional values, and as a preset file: equal frames,
    /// through both transfer paths and both containers; and not the identity's frames.
    func testFilterGivesThePixelsOfTheSameChainAsAPreset() throws {
        let input = try clip()
        let preset = try presetFile("p", #"{"filter": "sepia", "intensity": 0.5}, {"filter": "vignette", "end": 0.9}"#)
        let reference = try frameMD5s(try transcode(input, "preset.mp4", ["--preset", preset.path]))
        XCTAssertEqual(reference.count, 10, "frames of the preset run")
        for (name, args, transfer) in [("long.mp4", ["--filter", "sepia:intensity=0.5,vignette:end=0.9"], "pbo"),
                                       ("vf.mkv", ["-vf", "sepia=0.5,vignette=end=0.9"], "pbo"),
                                       ("client.mp4", ["--filter", "sepia:intensity=0.5,vignette:end=0.9"], "client")] {
            let out = try transcode(input, name, args, environment: ["GPUENCODE_TRANSFER": transfer])
            let frames = try frameMD5s(out)
            XCTAssertEqual(frames, reference, "\(args) (\(transfer)): \(zip(frames, reference).filter { $0 != $1 }.count) of \(reference.count) frames differ from the preset's")
            if name == "long.mp4" {
                let psnr = try Oracle.psnr(out, scratch("preset.mp4"))
                XCTAssertTrue(psnr.isInfinite || psnr > 99, "PSNR against the preset run: \(psnr) dB")
            }
        }
        let identity = try frameMD5s(try transcode(input, "identity.mp4", []))
        XCTAssertNotEqual(identity, reference, "the chain changed nothing: the comparison could not fail")

        // Quoted and bracketed values (commas and colons inside), vectors and curve points.
        let colours = try presetFile("c", ##"{"filter": "multiply", "with": "rgb(255,200,0)"}, {"filter": "vignette", "center": [0.4, 0.6], "color": "#203040"}, {"filter": "toneCurve", "rgb": [[0, 0.1], [0.5, 0.6], [1, 1]]}"##)
        let expected = try frameMD5s(try transcode(input, "colours.mp4", ["--preset", colours.path]))
        for spelling in ["multiply:with=rgb(255,200,0),vignette:center=0.4|0.6:color=#203040,toneCurve:rgb=0/0.1 0.5/0.6 1/1",
                         "multiply:with='rgb(255,200,0)',vignette:center=[0.4,0.6]:color=0x203040,toneCurve:rgb='[[0,0.1],[0.5,0.6],[1,1]]'",
                         #"multiply:with=rgb(255\,200\,0),vignette:center=0.4 0.6:color=rgb(32\,48\,64),toneCurve:rgb=0/0.1|0.5/0.6|1/1"#] {
            XCTAssertEqual(try frameMD5s(try transcode(input, "spelt.mp4", ["--filter", spelling])), expected, spelling)
        }
    }

    /// --filter runs after the preset: grayscale then sepia is toned (chroma away from neutral), sepia
    /// then grayscale is grey (chroma neutral, by ffmpeg's signalstats); and after a graph's output.
    func testFilterRunsAfterThePreset() throws {
        let input = try clip()
        let grayThenSepia = try presetFile("gs", #"{"filter": "grayscale"}, {"filter": "sepia"}"#)
        let sepiaThenGray = try presetFile("sg", #"{"filter": "sepia"}, {"filter": "grayscale"}"#)
        let combined = try transcode(input, "combined.mp4", ["--preset", "grayscale", "--filter", "sepia"])
        XCTAssertEqual(try frameMD5s(combined), try frameMD5s(try transcode(input, "gs.mp4", ["--preset", grayThenSepia.path])),
                       "--preset grayscale --filter sepia is not the chain grayscale, sepia")
        XCTAssertNotEqual(try frameMD5s(combined), try frameMD5s(try transcode(input, "sg.mp4", ["--preset", sepiaThenGray.path])))
        let toned = try Oracle.signalStats(combined)
        XCTAssertTrue(toned.allSatisfy { abs($0["VAVG"]! - 128) > 3 }, "sepia last should tint: VAVG \(toned.map { $0["VAVG"]! })")
        let grey = try Oracle.signalStats(try transcode(input, "grey.mp4", ["--preset", "sepia", "--filter", "grayscale"]))
        XCTAssertTrue(grey.allSatisfy { $0["SATMAX"]! <= 1 }, "grayscale last should leave no colour: SATMAX \(grey.map { $0["SATMAX"]! })")

        // A graph preset: the filter follows its output node.
        let graph = scratch("graph.json")
        try Data(#"""
        {"version": 2, "name": "g", "graph": {"nodes": {
          "b": {"filter": "gaussianBlur", "sigma": 2, "inputs": ["source"]},
          "t": {"filter": "sepia", "inputs": ["source"]},
          "m": {"filter": "screen", "opacity": 0.5, "inputs": ["t", "b"]}}, "output": "m"}}
        """#.utf8).write(to: graph)
        let afterGraph = try Oracle.signalStats(try transcode(input, "graph.mp4", ["--preset", graph.path, "--filter", "grayscale"]))
        XCTAssertTrue(afterGraph.allSatisfy { $0["SATMAX"]! <= 1 }, "grayscale after the graph's output: SATMAX \(afterGraph.map { $0["SATMAX"]! })")
        let graphOnly = try Oracle.signalStats(try transcode(input, "graph-only.mp4", ["--preset", graph.path]))
        XCTAssertTrue(graphOnly.allSatisfy { $0["SATMAX"]! > 10 }, "the graph alone is coloured: SATMAX \(graphOnly.map { $0["SATMAX"]! })")
    }

    /// Every mistake is one line, exit 67 (as for a preset), no output, pointing at the column.
    func testErrorsPointAtTheColumn() throws {
        let input = try clip()
        let cases: [(String, [String])] = [
            ("sepia:intesity=0.5", ["--filter: 1:7: ", "unknown parameter for sepia", #"did you mean "intensity""#]),
            ("sepia:intensity=0.5,vignette:end=2.5", ["--filter: 1:34: ", "vignette.end", "out of range"]),
            ("sepai:intensity=0.5", ["--filter: 1:1: ", #"unknown filter "sepai""#, #"did you mean "sepia""#]),
            ("sepia=0.5:0.2", ["--filter: 1:11: ", "sepia has no parameter 2"]),
            ("sepia:intensity='0.5", ["--filter: 1:17: ", "unclosed quote"]),
            ("multiply:with=rgb(255,0,0", ["--filter: 1:18: ", "unclosed ("]),
            ("sepia,,grayscale", ["--filter: 1:7: ", "expected a filter name"]),
            ("sepia:intensity=much", ["--filter: 1:17: ", "sepia.intensity", "expected a number"]),
            ("sepia:intensity={\"keyframes\": [[0, 0], [1, 2]]}", ["--filter: 1:44: ", "out of range"]),
            ("sepia:intensity=0.5:intensity=0.6", ["--filter: 1:21: ", "given twice"]),
            ("lut3d:file=/etc/passwd.cube", ["--filter: 1:1: ", "outside the working directory"]),
        ]
        for (text, expected) in cases {
            let before = listing(workDirectory)
            for flag in ["--filter", "-vf"] {
                let result = try gpuencode([input.path, scratch("out.mp4").path, flag, text, "-y"])
                assertCleanFailure(result, exitCodes: [ExitCode.badPreset], mentioning: expected, outputDirectory: workDirectory, before: before)
            }
        }
    }

    /// `batch`: the manifest's `filter` column (CSV and JSON) and the --filter flag, each job equal
    /// to the single transcode of the same chain as a preset.
    func testBatchFlagAndManifestColumn() throws {
        let a = try clip("a.mp4"), b = try clip("b.mp4")
        let toned = try presetFile("toned", #"{"filter": "sepia", "intensity": 0.5}, {"filter": "vignette", "end": 0.9}"#)
        let graySepia = try presetFile("gs", #"{"filter": "grayscale"}, {"filter": "sepia"}"#)
        let sepiaOnly = try presetFile("s", #"{"filter": "sepia"}"#)
        // Lossless, so the decoded frames are the filtered frames whatever threads batch gives x264.
        let lossless = ["--crf", "0", "--speed", "ultrafast"]
        let want = (toned: try frameMD5s(try transcode(a, "want-toned.mp4", ["--preset", toned.path] + lossless)),
                    graySepia: try frameMD5s(try transcode(b, "want-gs.mp4", ["--preset", graySepia.path] + lossless)),
                    sepia: try frameMD5s(try transcode(b, "want-s.mp4", ["--preset", sepiaOnly.path] + lossless)))

        let csv = scratch("jobs.csv")
        try Data("""
        input,output,preset,filter
        a.mp4,csv-a.mp4,,"sepia:intensity=0.5,vignette:end=0.9"
        b.mp4,csv-b.mp4,grayscale,sepia
        b.mp4,csv-c.mkv,,

        """.utf8).write(to: csv)
        let json = scratch("jobs.json")
        try Data("""
        [{"input": "a.mp4", "output": "json-a.mp4", "filter": "sepia:intensity=0.5,vignette:end=0.9"},
         {"input": "b.mp4", "output": "json-b.mkv", "preset": "grayscale", "filter": "sepia"},
         {"input": "b.mp4", "output": "json-c.mp4"}]
        """.utf8).write(to: json)
        for manifest in [csv, json] {
            // --filter applies to the rows without a filter of their own.
            let result = try gpuencode(["batch", "--manifest", manifest.path, "--filter", "sepia", "--progress", "none"] + lossless + [
                                        "--state", scratch(manifest.lastPathComponent + ".state").path])
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            let prefix = manifest.pathExtension
            let outputs = prefix == "csv" ? ["csv-a.mp4", "csv-b.mp4", "csv-c.mkv"] : ["json-a.mp4", "json-b.mkv", "json-c.mp4"]
            XCTAssertEqual(try frameMD5s(scratch(outputs[0])), want.toned, "\(outputs[0]): the filter column")
            XCTAssertEqual(try frameMD5s(scratch(outputs[1])), want.graySepia, "\(outputs[1]): preset column, then the filter column")
            XCTAssertEqual(try frameMD5s(scratch(outputs[2])), want.sepia, "\(outputs[2]): the --filter flag")
        }

        // A bad filter in a row stops the batch before any job (67), naming the row and the column.
        try Data("input,output,filter\na.mp4,bad.mp4,sepia:intesity=1\n".utf8).write(to: csv)
        let bad = try gpuencode(["batch", "--manifest", csv.path, "--progress", "none"])
        assertCleanFailure(bad, exitCodes: [ExitCode.badPreset], mentioning: ["jobs.csv:2: filter: 1:7: ", #"did you mean "intensity""#])
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("bad.mp4").path))
    }

    /// `preview` takes the filter: the picture equals the preset's picture, not the identity's.
    func testPreviewTakesTheFilter() throws {
        let input = try clip()
        let preset = try presetFile("p", #"{"filter": "sepia", "intensity": 0.5}, {"filter": "vignette", "end": 0.9}"#)
        func preview(_ name: String, _ extra: [String]) throws -> [String] {
            let out = scratch(name)
            let result = try gpuencode(["preview", input.path, "-o", out.path] + extra)
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            return try frameMD5s(out)
        }
        let reference = try preview("preset.png", ["--preset", preset.path])
        XCTAssertEqual(try preview("filter.png", ["--filter", "sepia:intensity=0.5,vignette:end=0.9"]), reference)
        XCTAssertEqual(try preview("vf.png", ["-vf", "sepia=0.5,vignette=end=0.9"]), reference)
        XCTAssertNotEqual(try preview("identity.png", []), reference)
        let bad = try gpuencode(["preview", input.path, "-o", scratch("bad.png").path, "--filter", "vignette:end=2"])
        assertCleanFailure(bad, exitCodes: [ExitCode.badPreset], mentioning: ["--filter: 1:14: ", "out of range"])
    }

    /// A file parameter resolves from the working directory and obeys --allow-path as a preset's files do.
    func testFilesResolveFromTheWorkingDirectoryAndObeyAllowPath() throws {
        let input = try clip()
        let looks = scratch("looks")
        try FileManager.default.createDirectory(at: looks, withIntermediateDirectories: true)
        // A 2x2x2 inverting LUT (red fastest, as .cube orders it).
        var cube = "LUT_3D_SIZE 2\n"
        for b in 0...1 { for g in 0...1 { for r in 0...1 { cube += "\(1 - r) \(1 - g) \(1 - b)\n" } } }
        try Data(cube.utf8).write(to: looks.appendingPathComponent("invert.cube"))
        let preset = try presetFile("inv", #"{"filter": "lut3d", "file": "looks/invert.cube"}"#)
        let reference = try frameMD5s(try transcode(input, "preset.mp4", ["--preset", preset.path]))
        XCTAssertNotEqual(reference, try frameMD5s(try transcode(input, "identity.mp4", [])))

        let bin = try Paths.gpuencode()
        func inFolder(_ folder: URL, _ arguments: [String]) throws -> ProcessResult {
            let quoted = ([bin] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ")
            return try Oracle.run("/bin/sh", ["-c", "cd '\(folder.path)' && exec \(quoted)"])
        }
        let relative = try inFolder(workDirectory, [input.path, scratch("rel.mp4").path, "--filter", "lut3d:file=looks/invert.cube"])
        XCTAssertEqual(relative.status, ExitCode.ok, relative.summary)
        XCTAssertEqual(try frameMD5s(scratch("rel.mp4")), reference, "a relative file from the working directory")

        // From another folder the same absolute path is outside the working directory: refused,
        // then allowed with --allow-path.
        let elsewhere = scratch("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let absolute = "lut3d:file=\(looks.path)/invert.cube"
        let refused = try inFolder(elsewhere, [input.path, scratch("abs.mp4").path, "--filter", absolute])
        assertCleanFailure(refused, exitCodes: [ExitCode.badPreset], mentioning: ["--filter: ", "outside the working directory", "--allow-path"])
        let allowed = try inFolder(elsewhere, [input.path, scratch("abs.mp4").path, "--filter", absolute, "--allow-path", looks.path])
        XCTAssertEqual(allowed.status, ExitCode.ok, allowed.summary)
        XCTAssertEqual(try frameMD5s(scratch("abs.mp4")), reference)
    }
}
