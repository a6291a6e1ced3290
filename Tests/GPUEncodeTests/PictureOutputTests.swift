import Foundation
import XCTest

/// A picture output (`gpuencode in.mp4 out.png`) takes every option that applies to one frame, as
/// ffmpeg's `-frames:v 1 out.png` takes -s and -vf scale: the size options with a video output's
/// aspect rules and Lanczos-3 scaler; and refuses (64, one line, nothing written) those that have
/// nothing to act on in a picture, where they were silently ignored.
final class PictureOutputOptionTests: GPUEncodeTestCase {
    private func clip() throws -> URL {
        let file = scratch("in.mp4")
        try Oracle.makeClip(file, seconds: 0.2, size: "320x240", rate: 10, audio: false)
        return file
    }

    private func size(_ picture: URL) throws -> [Int] {
        let s = try XCTUnwrap(Oracle.streams(picture).first)
        return [try XCTUnwrap(s.width), try XCTUnwrap(s.height)]
    }

    /// PSNR (RGB, dB) of `a` against `b`, two pictures of one size, by ffmpeg's psnr filter.
    private func psnr(_ a: URL, _ b: URL) throws -> Double {
        let r = try Oracle.run("ffmpeg", ["-nostdin", "-i", a.path, "-i", b.path, "-lavfi", "[0]format=rgb24[x];[1]format=rgb24[y];[x][y]psnr", "-f", "null", "-"])
        guard let range = r.stderr.range(of: "average:") else { throw OracleError("no PSNR in \(r.stderr)") }
        let text = r.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return text == "inf" ? .infinity : try XCTUnwrap(Double(text))
    }

    /// --width, --height, --size, --max-width and --max-height give a movie's frame and a still the
    /// size a video output would get (ffprobe), and the pixels are the unscaled picture scaled by
    /// ffmpeg's Lanczos (an independent scaler) to at least 50 dB (an RMS error under 0.8 code values).
    func testSizeOptionsApplyToPictureOutputs() throws {
        let input = try clip()
        let full = scratch("full.png")
        XCTAssertEqual(try gpuencode([input.path, full.path, "--preset", "sepia"]).status, ExitCode.ok)
        XCTAssertEqual(try size(full), [320, 240])
        let still = scratch("still.png")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-frames:v", "1", still.path])
        let stillSepia = scratch("still-full.png")
        XCTAssertEqual(try gpuencode([still.path, stillSepia.path, "--preset", "sepia"]).status, ExitCode.ok)
        for (source, unscaled) in [(input, full), (still, stillSepia)] {
            for (arguments, expected) in [(["--width", "200"], [200, 150]), (["--height", "120"], [160, 120]),
                                          (["--size", "100x100"], [100, 76]), (["--max-width", "160"], [160, 120]),
                                          (["--max-height", "480"], [320, 240]), (["--width", "640"], [640, 480])] {
                let name = "\(source.deletingPathExtension().lastPathComponent)-\(arguments.joined())"
                let out = scratch("\(name).png")
                let r = try gpuencode([source.path, out.path, "--preset", "sepia"] + arguments)
                XCTAssertEqual(r.status, ExitCode.ok, "\(name): \(r.summary)")
                XCTAssertEqual(try size(out), expected, name)
                let reference = scratch("\(name)-ref.png")
                try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", unscaled.path,
                                                 "-vf", "scale=\(expected[0]):\(expected[1]):flags=lanczos", reference.path])
                let db = try psnr(out, reference)
                print("\(name): \(String(format: "%.1f", db)) dB against ffmpeg's Lanczos")
                XCTAssertGreaterThanOrEqual(db, 50, name)
            }
        }
    }

    /// A size from the preset's "encode" applies too, as it does to a video output.
    func testPresetEncodeSizeAppliesToPictures() throws {
        let input = try clip()
        let preset = scratch("small.json")
        try Data(#"{"version": 2, "name": "small", "encode": {"width": 160, "crf": 30}, "filters": [{"filter": "sepia"}]}"#.utf8).write(to: preset)
        let out = scratch("o.png")
        let r = try gpuencode([input.path, out.path, "--preset", preset.path])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        XCTAssertEqual(try size(out), [160, 120])
    }

    /// Options about encoding video, audio, time or streams: 64, one line naming the option, nothing written.
    func testOptionsThatCannotApplyToAPictureAreRefused() throws {
        let input = try clip()
        for (arguments, flag) in [(["--crf", "20"], "--crf"), (["--fps", "30"], "--fps"), (["--codec", "hevc"], "--codec"),
                                  (["--bitrate", "1M"], "--bitrate"), (["--keyint", "10"], "--keyint"), (["--audio", "aac"], "--audio"),
                                  (["--speed", "fast"], "--speed"), (["--hdr", "keep"], "--hdr keep"), (["--deinterlace", "frame"], "--deinterlace"),
                                  (["--metadata", "title=x"], "--metadata"), (["--render-path", "rgba"], "--render-path"),
                                  (["--stats"], "--stats"), (["-progress", scratch("p.txt").path], "--progress-url"),
                                  (["--crf", "20", "--fps", "30"], "--crf and --fps")] {
            let dir = scratch("o-\(flag.replacingOccurrences(of: " ", with: "-"))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            assertCleanFailure(try gpuencode([input.path, dir.appendingPathComponent("o.png").path] + arguments),
                               exitCodes: [ExitCode.usage], mentioning: ["o.png", flag], outputDirectory: dir, before: [])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("p.txt").path))
    }
}
