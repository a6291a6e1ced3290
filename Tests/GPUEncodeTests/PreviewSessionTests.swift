import Foundation
import GPUEncodeKit
import XCTest

/// `Preview.Session.show(at:)`, the studio's scrubber: every time shows a frame (past the last one,
/// the last one), and no request leaves the session unable to show the next. The frames shown are
/// identified against ffmpeg's own decode of the clip, their times against ffprobe's.
final class PreviewSessionTests: GPUEncodeTestCase {
    /// Every frame of `clip` as packed RGB24, decoded by ffmpeg (BT.709, limited range, as tagged).
    private func oracleFrames(_ clip: URL, width: Int, height: Int) throws -> [[UInt8]] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", clip.path, "-vf",
                                                        "scale=in_color_matrix=bt709:in_range=tv:out_range=pc,format=rgb24",
                                                        "-f", "rawvideo", "-"])
        let size = width * height * 3
        let bytes = [UInt8](data)
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
    }

    /// Which of `frames` the session's unfiltered picture is: the nearest by mean absolute
    /// difference, which must also be close and clearly closer than any other frame.
    private func shownFrame(_ session: Preview.Session, _ frames: [[UInt8]], file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let image = try session.render([])
        var rgb: [UInt8] = []
        rgb.reserveCapacity(image.width * image.height * 3)
        for i in stride(from: 0, to: image.pixels.count, by: 4) { rgb += image.pixels[i..<(i + 3)] }
        let distances = frames.map { f -> Double in
            guard f.count == rgb.count else { return .infinity }
            var sum = 0
            for i in 0..<f.count { sum += abs(Int(f[i]) - Int(rgb[i])) }
            return Double(sum) / Double(f.count)
        }
        let best = distances.indices.min { distances[$0] < distances[$1] }!
        let runnerUp = distances.indices.filter { $0 != best }.map { distances[$0] }.min() ?? .infinity
        // Chroma upsampling differs from swscale's at testsrc2's sharp colour edges (about 5 here);
        // the next frame (testsrc2 moves) is much further off.
        XCTAssertLessThan(distances[best], 8, "the picture is not any frame of the clip", file: file, line: line)
        XCTAssertLessThan(distances[best] * 2, runnerUp, "the picture is not clearly one frame", file: file, line: line)
        return best
    }

    func testPastTheLastFrameShowsItAndTheSessionGoesOn() throws {
        let clip = scratch("clip.mp4")
        // Keyframes every 4 frames, so moving back and forth seeks through several.
        try Oracle.makeClip(clip, seconds: 1, size: "160x120", rate: 10, audio: false,
                            videoArguments: ["-c:v", "libx264", "-crf", "0", "-g", "4", "-pix_fmt", "yuv420p", "-colorspace", "bt709"])
        let times = try Oracle.frameTimes(clip)
        let frames = try oracleFrames(clip, width: 160, height: 120)
        XCTAssertEqual(frames.count, times.count)
        let lastIndex = times.count - 1
        let last = times[lastIndex]
        let step = times[1] - times[0]

        let session = try Preview.Session(input: clip.path, at: 0.2)
        let duration = try XCTUnwrap(session.duration)
        XCTAssertGreaterThan(duration, last + step / 2, "the container's duration ends after the last frame starts")

        // The scrubber's end is the duration: past the last frame's time.
        func check(_ asked: Double, shows index: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let time = try session.show(at: asked)
            XCTAssertEqual(try XCTUnwrap(time, file: file, line: line), times[index], accuracy: 1e-3, "\(what): the time shown", file: file, line: line)
            XCTAssertEqual(try shownFrame(session, frames, file: file, line: line), index, "\(what): the picture shown", file: file, line: line)
        }
        try check(duration, shows: lastIndex, "at the duration")
        // Times that worked before still work after it.
        try check(0.5, shows: 5, "back to 0.5 s after the end")
        // Decoding on from 0.5 s to the last frame, then a little past it: the decoder is at the end.
        try check(last, shows: lastIndex, "at the last frame's time")
        try check(last + 0.6 * step, shows: lastIndex, "just after the last frame")
        try check(duration + 30, shows: lastIndex, "30 s past the end")
        try check(0.3, shows: 3, "back to 0.3 s")
        try check(1e6, shows: lastIndex, "far past the end")
        try check(0, shows: 0, "back to the start")
        try check(0.8, shows: 8, "forward to 0.8 s")

        // A refused time is one error and changes nothing.
        XCTAssertThrowsError(try session.show(at: -1))
        XCTAssertEqual(try shownFrame(session, frames), 8)
        try check(0.9, shows: 9, "after a refused time")
    }
}
