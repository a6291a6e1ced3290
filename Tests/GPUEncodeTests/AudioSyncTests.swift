import Foundation
import XCTest

/// Re-encoded audio stays where the input had it on the timeline. Judged only by ffprobe (when the first
/// decoded sample plays) and by ffmpeg's decoding of both files: the content is cross-correlated at the
/// same absolute time in input and output, so a shifted or drifting stream shows up however its
/// timestamps look.
///
/// Where the first sample is: at the input's first sample's time, in every container. Matroska (Opus)
/// stores the encoder's priming as CodecDelay; MP4 skips it through the edit list's media time, and a
/// track that starts after 0 also has an empty edit before it (FFmpeg 5.1's muxer writes one or the
/// other; gpuencode patches in the skip, see EditListPatch), so the 1024 priming samples never play.
/// The content is within 1 ms in every case.
final class AudioSyncTests: GPUEncodeTestCase {
    private static let tolerance = 0.001

    func testVorbisInMatroskaToMP4WithAFilter() throws {
        try checkReencode("h264_vorbis.mkv", to: "mp4", arguments: ["--preset", "sepia"], codec: "aac")
    }

    func testOpusInWebMToMP4() throws {
        try checkReencode("vp9_opus_180p_bbb_5s.webm", to: "mp4", arguments: ["--preset", "none"], codec: "aac")
    }

    func testAC3StartingAt62msToAAC() throws {
        try checkReencode("h264_ac3_srt.mkv", to: "mp4", arguments: ["--preset", "none", "--audio", "aac"], codec: "aac")
    }

    func testEditListAACToAAC() throws {
        // The input's audio edit list starts it at 44 ms and skips its first frame: 67.2 ms.
        try checkReencode("h264_aac_720p_bframes_editlist_1s.mp4", to: "mp4", arguments: ["--preset", "none", "--audio", "aac"], codec: "aac")
    }

    func testQuickTimeAACToMOV() throws {
        // Audio at 0: the muxer's own edit list ([media time 1024]) already skips the priming.
        let output = try checkReencode("iphone4s_h264_aac_rot90_2s.mov", to: "mov", arguments: ["--preset", "none", "--audio", "aac"], codec: "aac")
        XCTAssertEqual(try AudioOracle.firstSampleTime(output), 0, accuracy: Self.tolerance)
    }

    func testAACStartingAt3msToAAC() throws {
        // Less than the 1024 priming samples after 0 (the muxer alone would start it at 0).
        try checkReencode("h264_aac_360p_rooftop_17s.mp4", to: "mp4", arguments: ["--preset", "none", "--audio", "aac"], codec: "aac")
    }

    /// Audio half a second after the video, into .mp4, .mov and .m4v: its first sample at 0.5 s, not
    /// the priming 21 ms before.
    func testAudioStartingAtHalfASecond() throws {
        let input = scratch("late.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=25",
                                         "-itsoffset", "0.5", "-f", "lavfi",
                                         "-i", "aevalsrc=0.2*sin(2*PI*1000*t)+0.5*(2*random(0)-1)*lt(mod(t\\,0.25)\\,0.02):s=48000:d=2",
                                         "-map", "0:v", "-map", "1:a", "-t", "2.5", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "flac", input.path])
        XCTAssertEqual(try AudioOracle.firstSampleTime(input), 0.5, accuracy: Self.tolerance)
        for ext in ["mp4", "mov", "m4v"] {
            try checkReencode(input, to: ext, arguments: ["--preset", "none"], codec: "aac")
        }
    }

    func testVorbis44kToOpus48kInMatroska() throws {
        // Resampled 44.1 → 48 kHz, starting at 62 ms: Opus in Matroska starts exactly there.
        try checkReencode("h264_vorbis.mkv", to: "mkv", arguments: ["--preset", "none", "--audio", "opus"], codec: "opus")
    }

    func testSurroundToOpusKeepsSixChannels() throws {
        let output = try checkReencode("h264_aac51_720p_bbb_5s.mp4", to: "mkv", arguments: ["--preset", "none", "--audio", "opus"],
                                       codec: "opus")
        let stream = try XCTUnwrap(try AudioOracle.streams(output).first)
        XCTAssertEqual(stream.channels, 6)
        XCTAssertEqual(stream.layout, "5.1")
        XCTAssertEqual(stream.sampleRate, 48000)
    }

    func testSurroundToAACKeepsSixChannels() throws {
        let output = try checkReencode("h264_aac51_1080p_bbb_rot90_2s.mp4", to: "mp4", arguments: ["--preset", "none", "--audio", "aac"], codec: "aac")
        let stream = try XCTUnwrap(try AudioOracle.streams(output).first)
        XCTAssertEqual(stream.channels, 6)
        XCTAssertEqual(stream.layout, "5.1")
    }

    /// Two minutes of Vorbis (a 1 kHz tone with a 20 ms noise burst every second) to AAC: the content at
    /// the start, the middle and the end is where the input had it, and the audio ends where it did.
    /// (The same check over 10 minutes measured 0.000 ms at 0.5, 300.5 and 595.5 s.)
    func testTwoMinutesDoNotDrift() throws {
        let input = scratch("long.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5",
                                         "-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*1000*t)+0.5*(2*random(0)-1)*lt(mod(t\\,1)\\,0.02):s=44100:d=120",
                                         "-t", "120", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libvorbis", input.path])
        let output = scratch("long.mp4")
        let result = try gpuencode([input.path, output.path, "--preset", "none", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }
        XCTAssertEqual(try AudioOracle.decodeErrors(output), "")
        let inTimeline = try AudioOracle.Timeline(input)
        let outTimeline = try AudioOracle.Timeline(output)
        for at in [0.9, 60.9, 118.9] {
            let (offset, correlation) = try AudioOracle.contentOffset(inTimeline, outTimeline, at: at)
            XCTAssertEqual(offset, 0, accuracy: Self.tolerance, "content offset at \(at) s")
            XCTAssertGreaterThan(correlation, 0.5, "no match at \(at) s")
        }
        let stream = try XCTUnwrap(try AudioOracle.streams(output).first)
        let outEnd = try XCTUnwrap(stream.startTime) + (try XCTUnwrap(stream.duration))
        XCTAssertEqual(outEnd, inTimeline.end, accuracy: 1024.0 / 44100, "the audio's end (container duration)")
    }

    /// A half-second gap in the input's audio timestamps is kept (filled with silence), so what follows
    /// it plays at its own time rather than 0.5 s early.
    func testGapInTheInputIsKept() throws {
        let input = scratch("gap.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5",
                                         "-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*1000*t)+0.5*(2*random(0)-1)*lt(mod(t\\,0.5)\\,0.02):s=44100:d=2",
                                         "-af", "asetpts='if(gte(T\\,1)\\,PTS+0.5/TB\\,PTS)'",
                                         "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libvorbis", input.path])
        let output = scratch("gap.mp4")
        let result = try gpuencode([input.path, output.path, "--preset", "none", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }
        XCTAssertTrue(result.stderr.contains("gap of 0.5"), result.stderr)
        let decoded = try AudioOracle.Timeline(input)
        let outTimeline = try AudioOracle.Timeline(output)
        // Before the gap the decoded input lies on the timeline as it is; after it, 0.5 s later.
        let before = try AudioOracle.contentOffset(decoded, outTimeline, at: 0.45)
        XCTAssertEqual(before.seconds, 0, accuracy: Self.tolerance, "before the gap")
        let shifted = AudioOracle.Timeline(start: decoded.start + 0.5, samples: decoded.samples)
        let after = try AudioOracle.contentOffset(shifted, outTimeline, at: 1.95)
        XCTAssertEqual(after.seconds, 0, accuracy: Self.tolerance, "after the gap")
        XCTAssertGreaterThan(after.correlation, 0.5)
    }

    // MARK: - The check

    /// Transcodes a shared clip and checks its first audio stream's re-encode: the codec, a clean decode,
    /// the first sample's time, the content within 1 ms of the input's, the end within one frame.
    @discardableResult
    private func checkReencode(_ clip: String, to ext: String, arguments: [String], codec: String,
                               file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        try checkReencode(try Paths.media(clip), to: ext, arguments: arguments, codec: codec, file: file, line: line)
    }

    @discardableResult
    private func checkReencode(_ input: URL, to ext: String, arguments: [String], codec: String,
                               file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        let output = scratch("out.\(ext)")
        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"] + arguments)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return output }
        let stream = try XCTUnwrap(try AudioOracle.streams(output).first, "no audio stream", file: file, line: line)
        XCTAssertEqual(stream.codec, codec, file: file, line: line)
        XCTAssertEqual(try AudioOracle.decodeErrors(output), "", "decoding \(output.lastPathComponent)", file: file, line: line)

        let inTimeline = try AudioOracle.Timeline(input)
        let outTimeline = try AudioOracle.Timeline(output)
        let frame = codec == "opus" ? 960.0 / 48000 : 1024.0 / Double(stream.sampleRate)
        XCTAssertEqual(outTimeline.start, inTimeline.start, accuracy: Self.tolerance,
                       "first decoded sample (input's at \(inTimeline.start) s)", file: file, line: line)

        let at = max(inTimeline.start, 0) + 0.3
        let (offset, correlation) = try AudioOracle.contentOffset(inTimeline, outTimeline, at: at)
        XCTAssertEqual(offset, 0, accuracy: Self.tolerance, "content offset at \(at) s", file: file, line: line)
        XCTAssertGreaterThan(correlation, 0.5, "the output's content does not match the input's at \(at) s", file: file, line: line)

        // The decoded end: Opus in Matroska is trimmed exactly; FFmpeg decodes MP4's last AAC frame whole
        // (the edit list ends at the input's end, which ffprobe does not apply), so up to one frame more.
        let trimmed = codec == "opus"
        XCTAssertEqual(outTimeline.end, inTimeline.end + (trimmed ? 0 : frame / 2), accuracy: trimmed ? Self.tolerance : frame / 2 + Self.tolerance,
                       "decoded end", file: file, line: line)
        if !trimmed {
            // Where the MP4 edit list ends the track (what players stop at). ffprobe's stream duration
            // is no oracle here: FFmpeg 5.1's demuxer reports a track with an empty edit as long as its
            // media, priming included.
            let end = try XCTUnwrap(try AudioOracle.editListEnd(output, track: 1), "no edit list", file: file, line: line)
            XCTAssertEqual(end, inTimeline.end, accuracy: Self.tolerance + 1.0 / Double(stream.sampleRate),
                           "the container's end of the audio (its edit list's)", file: file, line: line)
        }
        return output
    }
}
