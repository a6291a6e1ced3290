import Foundation
import XCTest

/// A second video blended over a transcode (the `video` generator), judged with ffmpeg/ffprobe.
final class VideoOverlayTests: GPUEncodeTestCase {
    /// Red for 0.5 s, then blue for 0.5 s, at 10 fps: a different overlay rate from the 25 fps input.
    private func overlay(_ name: String = "leaks.mkv") throws -> URL {
        let file = scratch(name)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-filter_complex",
                                         "color=c=red:s=160x120:r=10:d=0.5[a];color=c=blue:s=160x120:r=10:d=0.5[b];[a][b]concat=n=2:v=1:a=0,format=bgr0",
                                         "-c:v", "ffv1", file.path])
        return file
    }

    private func preset(_ filters: String) throws -> URL {
        let file = scratch("p.json")
        try "{\"version\": 1, \"name\": \"p\", \"filters\": [\n\(filters)\n]}\n".write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The mean RGB of output frame `index` (the whole picture scaled to one pixel by ffmpeg; outputs are BT.709).
    private func meanColor(_ file: URL, frame index: Int) throws -> [Int] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path,
                                                        "-vf", "select=eq(n\\,\(index)),scale=in_color_matrix=bt709:in_range=tv:flags=accurate_rnd+full_chroma_int,format=rgb24,scale=1:1:flags=area", "-frames:v", "1",
                                                        "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        return data.prefix(3).map(Int.init)
    }

    private func assertClose(_ got: [Int], _ expected: [Int], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(got.count, 3, what, file: file, line: line)
        for (g, e) in zip(got, expected) {
            XCTAssertLessThanOrEqual(abs(g - e), 12, "\(what): got \(got), expected about \(expected)", file: file, line: line)
        }
    }

    func testTranscodeWithMovieOverlayKeepsFramesAndFollowsTheOverlay() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 1)
        _ = try overlay()
        // A fused chain (the single-pass path) and one that samples (the chain path).
        for (name, filters) in [
            ("direct", #"{"filter": "normal", "with": "leaks.mkv"}"#),
            ("chain", #"{"filter": "gaussianBlur", "sigma": 1}, {"filter": "normal", "with": {"filter": "video", "file": "leaks.mkv", "fill": "stretch"}}"#),
        ] {
            let output = scratch("out-\(name).mp4")
            let result = try gpuencode([input.path, output.path, "--preset", try preset(filters).path])
            XCTAssertEqual(result.status, 0, "\(name): \(result.summary)")
            XCTAssertEqual(try Oracle.frameTimes(output).count, try Oracle.frameTimes(input).count, name)
            assertClose(try meanColor(output, frame: 2), [255, 0, 0], "\(name) frame 2 (0.08 s)")
            assertClose(try meanColor(output, frame: 11), [255, 0, 0], "\(name) frame 11 (0.44 s)")
            assertClose(try meanColor(output, frame: 13), [0, 0, 255], "\(name) frame 13 (0.52 s)")
            assertClose(try meanColor(output, frame: 24), [0, 0, 255], "\(name) frame 24 (0.96 s)")
        }
    }

    /// Offset 0.5 s without looping: the input shows through first, then the overlay's first frame.
    func testOffsetOverlayInTranscode() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 1)
        _ = try overlay()
        let output = scratch("out.mp4")
        let filters = #"{"filter": "normal", "with": {"filter": "video", "file": "leaks.mkv", "offset": 0.5, "loop": false}}"#
        let result = try gpuencode([input.path, output.path, "--preset", try preset(filters).path])
        XCTAssertEqual(result.status, 0, result.summary)
        let plain = scratch("plain.mp4")
        XCTAssertEqual(try gpuencode([input.path, plain.path, "--preset", "none"]).status, 0)
        assertClose(try meanColor(output, frame: 5), try meanColor(plain, frame: 5), "before the offset")
        assertClose(try meanColor(output, frame: 15), [255, 0, 0], "0.6 s: the overlay's first half second")
    }

    func testMissingOverlayIsAPresetErrorWithItsLine() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, audio: false)
        let output = scratch("out.mp4")
        let p = try preset(#"{"filter": "screen", "with": "gone.mp4"}"#)
        let before = listing(workDirectory)
        let result = try gpuencode([input.path, output.path, "--preset", p.path])
        assertCleanFailure(result, exitCodes: [ExitCode.badPreset], mentioning: ["p.json", "2:", "gone.mp4"],
                           outputDirectory: workDirectory, before: before)
    }

    func testAudioOnlyOverlayIsAPresetError() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, audio: false)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "aac", scratch("tone.m4v").path])
        let p = try preset(#"{"filter": "screen", "with": {"filter": "video", "file": "tone.m4v"}}"#)
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--preset", p.path])
        assertCleanFailure(result, exitCodes: [ExitCode.badPreset], mentioning: ["p.json", "tone.m4v", "no video stream"])
    }
}
