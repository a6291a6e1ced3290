import Foundation
import XCTest

/// Comparisons (`--compare` on previews and transcodes, `--split-animate`), contact sheets and
/// `preview --watch`, judged from the pictures ffmpeg decodes.
final class CompareTests: GPUEncodeTestCase {
    /// A picture or a movie's frame `n` as packed RGB24, with its size.
    private func rgb(_ file: URL, frame: Int? = nil) throws -> (pixels: [UInt8], width: Int, height: Int) {
        let probe = try Oracle.runChecked("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                                      "-of", "csv=p=0", file.path])
        let size = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        var vf = "format=rgb24"
        if let frame { vf = "select=eq(n\\,\(frame)),scale=in_color_matrix=bt709:in_range=tv:out_range=pc," + vf }
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-vf", vf, "-frames:v", "1",
                                                        "-f", "rawvideo", "-"])
        return ([UInt8](data), size[0], size[1])
    }

    /// Mean absolute difference over the pixels of columns `xs` and rows `ys`.
    private func difference(_ a: (pixels: [UInt8], width: Int, height: Int), _ b: (pixels: [UInt8], width: Int, height: Int),
                            xs: Range<Int>, ys: Range<Int>) -> Double {
        var sum = 0, count = 0
        for y in ys {
            for x in xs {
                let i = (y * a.width + x) * 3, j = (y * b.width + x) * 3
                for k in 0..<3 { sum += abs(Int(a.pixels[i + k]) - Int(b.pixels[j + k])) }
                count += 3
            }
        }
        return Double(sum) / Double(max(count, 1))
    }

    private func makeClip(_ name: String) throws -> URL {
        let clip = scratch(name)
        try Oracle.makeClip(clip, seconds: 1, size: "320x240", rate: 10, audio: false,
                            videoArguments: ["-c:v", "libx264", "-crf", "0", "-pix_fmt", "yuv420p", "-colorspace", "bt709"])
        return clip
    }

    func testPreviewCompareIsTheOriginalBesideThePreset() throws {
        let clip = try makeClip("clip.mp4")
        func preview(_ name: String, _ extra: [String]) throws -> (pixels: [UInt8], width: Int, height: Int) {
            let png = scratch(name)
            let result = try gpuencode(["preview", clip.path, "--at", "0.3", "-o", png.path] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            return try rgb(png)
        }
        let original = try preview("original.png", [])
        let sepia = try preview("sepia.png", ["--preset", "sepia"])
        let compared = try preview("compare.png", ["--preset", "sepia", "--compare"])
        XCTAssertEqual(compared.width, 320)
        XCTAssertEqual(compared.height, 240)
        // Below the labels (13 rows at 240 lines) and clear of the divider at x = 160.
        let rows = 16..<240
        XCTAssertLessThan(difference(compared, original, xs: 0..<158, ys: rows), 0.5, "left half: the original")
        XCTAssertLessThan(difference(compared, sepia, xs: 162..<320, ys: rows), 0.5, "right half: the preset")
        XCTAssertGreaterThan(difference(compared, sepia, xs: 0..<158, ys: rows), 5, "the left half is not the preset")
        // The labels: the top-left corner is darkened by its box, unlike the original there.
        XCTAssertGreaterThan(difference(compared, original, xs: 0..<40, ys: 0..<12), 5, "a label at the top left")
        XCTAssertGreaterThan(difference(compared, sepia, xs: 280..<320, ys: 0..<12), 5, "a label at the top right")

        // --compare-with and a horizontal split at 0.25: preset B on the top quarter.
        let grey = try preview("grey.png", ["--preset", "grayscale"])
        let vs = try preview("vs.png", ["--preset", "sepia", "--compare-with", "grayscale", "--split-angle", "90", "--split", "0.25"])
        XCTAssertLessThan(difference(vs, grey, xs: 100..<320, ys: 16..<58), 0.5, "the top quarter: preset B")
        XCTAssertLessThan(difference(vs, sepia, xs: 100..<320, ys: 62..<220), 0.5, "below: preset A")
    }

    func testTranscodeCompareAndSplitAnimate() throws {
        let clip = try makeClip("clip.mp4")
        func transcode(_ name: String, _ extra: [String]) throws -> URL {
            let out = scratch(name)
            let result = try gpuencode([clip.path, out.path, "--crf", "0", "--x264-preset", "ultrafast"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            return out
        }
        let original = try transcode("original.mkv", [])
        let grey = try transcode("grey.mkv", ["--preset", "grayscale"])
        let compared = try transcode("compare.mkv", ["--preset", "grayscale", "--compare"])
        let frames = try Oracle.frameTimes(clip).count
        XCTAssertEqual(frames, 10)
        XCTAssertEqual(try Oracle.frameTimes(compared).count, frames, "every frame kept")
        let frame = try rgb(compared, frame: 5)
        XCTAssertLessThan(difference(frame, try rgb(original, frame: 5), xs: 0..<156, ys: 16..<240), 1.5, "left: the original")
        XCTAssertLessThan(difference(frame, try rgb(grey, frame: 5), xs: 164..<320, ys: 16..<240), 1.5, "right: the preset")

        // The divider sweeps from the right edge to the left over the clip: all original, then all preset.
        let sweep = try transcode("sweep.mkv", ["--preset", "grayscale", "--compare", "--split-animate"])
        XCTAssertEqual(try Oracle.frameTimes(sweep).count, frames, "every frame kept")
        var originalShare: [Double] = []
        for n in [0, 5, 9] {
            let f = try rgb(sweep, frame: n)
            let toOriginal = difference(f, try rgb(original, frame: n), xs: 0..<320, ys: 16..<240)
            let toGrey = difference(f, try rgb(grey, frame: n), xs: 0..<320, ys: 16..<240)
            originalShare.append(toGrey / max(toOriginal + toGrey, 1e-9))
        }
        XCTAssertGreaterThan(originalShare[0], 0.9, "frame 0 is mostly the original")
        XCTAssertLessThan(originalShare[2], 0.2, "the last frame is mostly the preset")
        XCTAssertGreaterThan(originalShare[1], originalShare[2])
        XCTAssertLessThan(originalShare[1], originalShare[0])

        let bad = try gpuencode([clip.path, scratch("x.mkv").path, "--split-animate"])
        assertCleanFailure(bad, exitCodes: [ExitCode.usage], mentioning: ["--split-animate", "--compare"])
    }

    /// A preset with `split` over a colour and a `label` (no node input) takes the fused direct path.
    func testSplitAndLabelInAPresetOnTheDirectPath() throws {
        let clip = try makeClip("clip.mp4")
        let preset = scratch("red.json")
        try Data(##"{"version": 1, "name": "red", "filters": [{"filter": "split", "with": "#ff0000", "angle": 90, "position": 0.25, "lineWidth": 0}, {"filter": "label", "text": "TL", "corner": "bottomRight", "scale": 4, "background": "#0000ff"}]}"##.utf8).write(to: preset)
        let out = scratch("red.mkv")
        let result = try gpuencode([clip.path, out.path, "--preset", preset.path, "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let frame = try rgb(out, frame: 3)
        func flat(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (pixels: [UInt8], width: Int, height: Int) {
            ([UInt8]((0..<(320 * 240)).flatMap { _ in [r, g, b] }), 320, 240)
        }
        let red = flat(255, 0, 0)
        XCTAssertLessThan(difference(frame, red, xs: 0..<320, ys: 0..<58), 2, "the top quarter is the overlay")
        XCTAssertGreaterThan(difference(frame, red, xs: 0..<320, ys: 62..<200), 50, "below it the picture")
        // The label's box: 15 x 11 font pixels of 4 x 4, 2 font pixels from the corner, so x 252...311
        // and y 188...231; its left padding (2 font pixels) is plain blue.
        let blue = flat(0, 0, 255)
        XCTAssertLessThan(difference(frame, blue, xs: 254..<258, ys: 192..<228), 4, "the label's box at the bottom right")
    }

    func testContactSheetIsAGridOfLabelledTiles() throws {
        let clip = try makeClip("clip.mp4")
        let invert = scratch("invert.json")
        try Data(#"{"version": 1, "name": "inverted", "filters": [{"filter": "colorInvert"}]}"#.utf8).write(to: invert)
        let sheet = scratch("sheet.png")
        let result = try gpuencode(["contact-sheet", clip.path, "--at", "0.5", "-o", sheet.path, "--presets", "identity,sepia,grayscale,\(invert.path)",
                                    "--columns", "3", "--tile-width", "100", "--gap", "4"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let picture = try rgb(sheet)
        // 3 columns of 100 and 2 rows of 76 (100 x 240 / 320 = 75, made even), 4 pixels around and between.
        XCTAssertEqual(picture.width, 3 * 100 + 4 * 4)
        XCTAssertEqual(picture.height, 2 * 76 + 3 * 4)
        func tile(_ n: Int) -> (pixels: [UInt8], width: Int, height: Int) {
            let x0 = 4 + (n % 3) * 104, y0 = 4 + (n / 3) * 80
            var p: [UInt8] = []
            for y in y0..<(y0 + 76) { p += picture.pixels[((y * picture.width + x0) * 3)..<((y * picture.width + x0 + 100) * 3)] }
            return (p, 100, 76)
        }
        let tiles = (0..<4).map(tile)
        for i in 0..<4 {
            for j in (i + 1)..<4 {
                XCTAssertGreaterThan(difference(tiles[i], tiles[j], xs: 0..<100, ys: 20..<76), 5, "tiles \(i) and \(j) should differ")
            }
        }
        // The grey tile is grey; the inverted one is the identity tile inverted (both shrunk alike).
        let greyTile = tiles[2]
        var chroma = 0
        for i in stride(from: 20 * 300, to: greyTile.pixels.count, by: 3) {
            chroma = max(chroma, abs(Int(greyTile.pixels[i]) - Int(greyTile.pixels[i + 1])), abs(Int(greyTile.pixels[i + 1]) - Int(greyTile.pixels[i + 2])))
        }
        XCTAssertLessThanOrEqual(chroma, 2, "grayscale tile")
        var worst = 0
        for i in (20 * 300)..<tiles[0].pixels.count { worst = max(worst, abs(255 - Int(tiles[0].pixels[i]) - Int(tiles[3].pixels[i]))) }
        XCTAssertLessThanOrEqual(worst, 3, "the inverted tile")
        // The gap and the unused cell are the sheet's background.
        let corner = Array(picture.pixels[0..<3])
        XCTAssertEqual(corner, [24, 24, 24])
        XCTAssertEqual(difference(tile(5), (Array(repeating: 24, count: 100 * 76 * 3), 100, 76), xs: 0..<100, ys: 0..<76), 0, "the empty cell")

        // Every built-in preset by default; a broken preset fails before anything is written.
        let broken = scratch("broken.json")
        try Data(#"{"version": 1, "name": "b", "filters": [{"filter": "sepia", "intensity": 9}]}"#.utf8).write(to: broken)
        let before = listing(workDirectory)
        let failed = try gpuencode(["contact-sheet", clip.path, "-o", scratch("bad.png").path, "--presets", "sepia,\(broken.path)"])
        assertCleanFailure(failed, exitCodes: [ExitCode.badPreset], mentioning: [broken.path, "intensity"], outputDirectory: workDirectory, before: before)
    }

    func testWatchRendersAgainOnEveryChangeUntilCtrlC() throws {
        let clip = try makeClip("clip.mp4")
        let preset = scratch("look.json")
        try Data(#"{"version": 1, "name": "first", "filters": [{"filter": "sepia"}]}"#.utf8).write(to: preset, options: .atomic)
        let png = scratch("look.png")
        let stdout = scratch("stdout.txt"), stderr = scratch("stderr.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: stdout.path, contents: nil))
        XCTAssertTrue(FileManager.default.createFile(atPath: stderr.path, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Paths.gpuencode())
        process.arguments = ["preview", clip.path, "--preset", preset.path, "--watch", "-o", png.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func lines(_ file: URL) -> [String] {
            String(decoding: FileManager.default.contents(atPath: file.path) ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        func waitFor(_ what: String, _ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(30)
            while !condition() && Date() < deadline && process.isRunning { usleep(50_000) }
            XCTAssertTrue(condition(), "\(what); stdout: \(lines(stdout)), stderr: \(lines(stderr))")
        }
        waitFor("the first render") { lines(stdout).count == 1 }
        XCTAssertTrue(lines(stdout).first?.contains("first") == true, "\(lines(stdout))")
        let sepia = try rgb(png)
        // A broken preset: one error line, and the watch goes on.
        try Data(#"{"version": 1, "name": "broken", "filters": [{"filter": "sepia", "intensity": 9}]}"#.utf8).write(to: preset, options: .atomic)
        waitFor("the error") { lines(stderr).count == 1 }
        XCTAssertTrue(lines(stderr).first?.contains(preset.path) == true && lines(stderr).first?.contains("intensity") == true, "\(lines(stderr))")
        XCTAssertTrue(process.isRunning, "an invalid preset must not end the watch")
        try Data(#"{"version": 1, "name": "second", "filters": [{"filter": "grayscale"}]}"#.utf8).write(to: preset, options: .atomic)
        waitFor("a second render") { lines(stdout).count == 2 }
        XCTAssertTrue(lines(stdout).last?.contains("second") == true, "\(lines(stdout))")
        XCTAssertGreaterThan(difference(try rgb(png), sepia, xs: 0..<320, ys: 0..<240), 5, "the picture was rendered again")
        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(process.isRunning, "Ctrl-C ends the watch")
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0, "exit 0 on Ctrl-C")
    }

    func testUsageErrors() throws {
        let clip = try makeClip("clip.mp4")
        let png = scratch("x.png")
        assertCleanFailure(try gpuencode(["preview", clip.path, "-o", png.path, "--split", "0.3"]), exitCodes: [ExitCode.usage], mentioning: ["--split", "--compare"])
        assertCleanFailure(try gpuencode(["preview", clip.path, "-o", png.path, "--compare", "--split", "2"]), exitCodes: [ExitCode.usage], mentioning: ["--split"])
        assertCleanFailure(try gpuencode(["preview", clip.path, "-o", png.path, "--compare-with", "nosuch"]), exitCodes: [ExitCode.badPreset], mentioning: ["nosuch"])
        assertCleanFailure(try gpuencode(["contact-sheet", clip.path, "-o", png.path, "--columns", "0"]), exitCodes: [ExitCode.usage], mentioning: ["--columns"])
    }
}
