import Foundation
import XCTest

/// Transcodes every real clip in ../shared/media and checks the result against ffprobe's view of the input.
final class MediaClipTests: GPUEncodeTestCase {
    // XCTest on Linux finds test methods at compile time, so the per-clip methods below are written out
    // (one per clip, so a failure names its clip). `testEveryVideoClipHasItsOwnTest` asks ffprobe which
    // clips have video and fails when this list and the media folder drift apart.
    static let clipsWithTests: Set<String> = [
        "h264_aac_1080p_deer_1s.mp4",
        "h264_aac51_1080p_bbb_rot90_2s.mp4",
        "h264_aac_360p_rooftop_17s.mp4",
        "h264_aac_480p_cup_8s.mp4",
        "h264_aac51_720p_bbb_5s.mp4",
        "h264_aac_720p_bframes_editlist_1s.mp4",
        "iphone4s_h264_aac_rot90_2s.mov",
        "iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov",
        "phone_h264_aac_vfr_rot180_2s.mp4",
        "phone_4k60_h264_aac_rot90_0.3s.mp4",
        "hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4",
        "h264_ac3_srt.mkv",
        "h264_vorbis.mkv",
        "vp8_vorbis_720p_bbb_30s.webm",
        "vp9_opus_180p_bbb_5s.webm",
        "vp9_opus_720p_no_duration.webm",
        "vp9_10bit_240p_video_only.webm",
        "vp9_odd_161x121_video_only.webm",
        "h264_bframes_empty_edit_10s_video_only.mp4",
        "h264_mp3_480p_box_damaged_idr.mp4",
    ]

    func test_h264_aac_1080p_deer_1s_mp4() throws { try checkTranscode("h264_aac_1080p_deer_1s.mp4") }
    func test_h264_aac51_1080p_bbb_rot90_2s_mp4() throws { try checkTranscode("h264_aac51_1080p_bbb_rot90_2s.mp4") }
    func test_h264_aac_360p_rooftop_17s_mp4() throws { try checkTranscode("h264_aac_360p_rooftop_17s.mp4") }
    func test_h264_aac_480p_cup_8s_mp4() throws { try checkTranscode("h264_aac_480p_cup_8s.mp4") }
    func test_h264_aac51_720p_bbb_5s_mp4() throws { try checkTranscode("h264_aac51_720p_bbb_5s.mp4") }
    func test_h264_aac_720p_bframes_editlist_1s_mp4() throws { try checkTranscode("h264_aac_720p_bframes_editlist_1s.mp4") }
    func test_iphone4s_h264_aac_rot90_2s_mov() throws { try checkTranscode("iphone4s_h264_aac_rot90_2s.mov") }
    func test_iphone_hevc10_hlg_dolbyvision_rot90_0_1s_mov() throws { try checkTranscode("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov") }
    func test_phone_h264_aac_vfr_rot180_2s_mp4() throws { try checkTranscode("phone_h264_aac_vfr_rot180_2s.mp4") }
    func test_phone_4k60_h264_aac_rot90_0_3s_mp4() throws { try checkTranscode("phone_4k60_h264_aac_rot90_0.3s.mp4") }
    func test_hevc10_hlg_aac_1080p_editlist_bframes_rot90_mp4() throws { try checkTranscode("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4") }
    func test_h264_ac3_srt_mkv() throws { try checkTranscode("h264_ac3_srt.mkv") }
    func test_h264_vorbis_mkv() throws { try checkTranscode("h264_vorbis.mkv") }
    func test_vp8_vorbis_720p_bbb_30s_webm() throws { try checkTranscode("vp8_vorbis_720p_bbb_30s.webm") }
    func test_vp9_opus_180p_bbb_5s_webm() throws { try checkTranscode("vp9_opus_180p_bbb_5s.webm") }
    func test_vp9_opus_720p_no_duration_webm() throws { try checkTranscode("vp9_opus_720p_no_duration.webm") }
    func test_vp9_10bit_240p_video_only_webm() throws { try checkTranscode("vp9_10bit_240p_video_only.webm") }
    func test_vp9_odd_161x121_video_only_webm() throws { try checkTranscode("vp9_odd_161x121_video_only.webm") }
    func test_h264_bframes_empty_edit_10s_video_only_mp4() throws { try checkTranscode("h264_bframes_empty_edit_10s_video_only.mp4") }
    /// The same clip with --copyts: its first frame stays at 10 s (an empty edit of 10 s).
    func test_h264_bframes_empty_edit_10s_video_only_mp4_copyts() throws {
        try checkTranscode("h264_bframes_empty_edit_10s_video_only.mp4", copyts: true)
    }
    /// An edit list's audio delay (44 ms) kept under --copyts as by default.
    func test_h264_aac_720p_bframes_editlist_1s_mp4_copyts() throws { try checkTranscode("h264_aac_720p_bframes_editlist_1s.mp4", copyts: true) }
    // The H.264 stream is damaged: refusing it is as acceptable as decoding through the damage.
    func test_h264_mp3_480p_box_damaged_idr_mp4() throws { try checkTranscode("h264_mp3_480p_box_damaged_idr.mp4", mayFailCleanly: true) }

    func testEveryVideoClipHasItsOwnTest() throws {
        let media = try Paths.requireMedia()
        let clips = try FileManager.default.contentsOfDirectory(at: media, includingPropertiesForKeys: nil)
            .filter { ["mp4", "m4v", "mov", "mkv", "webm"].contains($0.pathExtension.lowercased()) }
        let withVideo = Set(try clips.filter { clip in
            try Self.inputStreams(clip).contains { $0.codecType == "video" }
        }.map(\.lastPathComponent))
        XCTAssertEqual(withVideo.subtracting(Self.clipsWithTests).sorted(), [],
                       "clips with video but no test method: add one per clip")
        XCTAssertEqual(Self.clipsWithTests.subtracting(withVideo).sorted(), [],
                       "test methods for clips that are missing or have no video")
    }

    func testInputFileIsNotWritten() throws {
        let input = try Paths.media("h264_aac_720p_bframes_editlist_1s.mp4")
        let hashBefore = try Oracle.sha256(input)
        let modifiedBefore = try FileManager.default.attributesOfItem(atPath: input.path)[.modificationDate] as? Date
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertEqual(try Oracle.sha256(input), hashBefore, "the input's bytes changed")
        let modifiedAfter = try FileManager.default.attributesOfItem(atPath: input.path)[.modificationDate] as? Date
        XCTAssertEqual(modifiedAfter, modifiedBefore, "the input was opened for writing")
    }

    // MARK: - The checks

    private static let streamsMemo = Memo<[StreamInfo]>()
    private static let frameTimesMemo = Memo<[Double]>()
    private static let audioMD5Memo = Memo<String>()

    private static func inputStreams(_ file: URL) throws -> [StreamInfo] {
        try streamsMemo.value(for: file.path) { try Oracle.streams(file) }
    }

    private static func inputFrameTimes(_ file: URL) throws -> [Double] {
        try frameTimesMemo.value(for: file.path) { try Oracle.frameTimes(file) }
    }

    private static func inputAudioMD5(_ file: URL, index: Int) throws -> String {
        try audioMD5Memo.value(for: "\(file.path)#\(index)") { try Oracle.audioMD5(file, index: index) }
    }

    /// The times in `expected` with no partner in `actual` within `tolerance`; both sorted, each partner used once.
    private static func unmatchedTimes(_ expected: [Double], in actual: [Double], tolerance: Double) -> [Double] {
        var unmatched: [Double] = []
        var candidates = actual[...]
        for time in expected {
            while let next = candidates.first, next < time - tolerance { candidates.removeFirst() }
            if let next = candidates.first, abs(next - time) <= tolerance {
                candidates.removeFirst()
            } else {
                unmatched.append(time)
            }
        }
        return unmatched
    }

    /// Frames the decoder returns at or before a time already shown (the damaged clip has one). No output with
    /// increasing timestamps can keep such a time, so these frames must be there but may be re-timed.
    private static func framesBehindTheirPredecessors(_ decodeOrder: [Double]) -> Int {
        var latest = -Double.infinity
        var behind = 0
        for time in decodeOrder {
            if time <= latest { behind += 1 } else { latest = time }
        }
        return behind
    }

    /// Transcodes `clip` and compares with the input: every frame time and stream start, moved by the
    /// input's start (ffprobe's format start_time) as ffmpeg's default does, or kept with `copyts`.
    private func checkTranscode(_ clip: String, mayFailCleanly: Bool = false, copyts: Bool = false,
                                file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(Self.clipsWithTests.contains(clip), "\(clip) is missing from clipsWithTests", file: file, line: line)
        let input = try Paths.media(clip)
        let inStreams = try Self.inputStreams(input)
        let inVideo = try XCTUnwrap(inStreams.first { $0.codecType == "video" }, "\(clip) has no video stream",
                                    file: file, line: line)
        let inAudio = inStreams.filter { $0.codecType == "audio" }
        // The output's timeline starts at 0 (ffmpeg's default): the input's start is subtracted from every time.
        let origin = copyts ? 0 : try Oracle.formatStartTime(input)
        let inDecodeOrder = try Self.inputFrameTimes(input).map { $0 - origin }
        let inTimes = inDecodeOrder.sorted()

        // Matroska inputs may carry streams (e.g. subrip) that MP4 cannot hold, so they stay in Matroska.
        let outputExtension = ["mkv", "webm"].contains(input.pathExtension.lowercased()) ? "mkv" : "mp4"
        let output = scratch("out.\(outputExtension)")
        let before = listing(workDirectory)

        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"] + (copyts ? ["--copyts"] : []))
        if mayFailCleanly && result.status != ExitCode.ok {
            assertCleanFailure(result, exitCodes: ExitCode.documentedFailures, mentioning: [input.path],
                               outputDirectory: workDirectory, before: before, file: file, line: line)
            return
        }
        XCTAssertFalse(result.signalled, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else {
            return XCTFail("transcode failed: \(result.summary)", file: file, line: line)
        }

        let outStreams = try Oracle.streams(output)
        let outVideo = try XCTUnwrap(outStreams.first { $0.codecType == "video" }, "output has no video stream",
                                     file: file, line: line)
        let outAudio = outStreams.filter { $0.codecType == "audio" }
        let outTimes = try Oracle.frameTimes(output).sorted()

        // ffprobe's avg_frame_rate is meaningless for some Matroska files (1000/1), so the duration of a
        // frame is taken from the decoded timestamps themselves.
        let frameDuration = inTimes.count >= 2 ? (inTimes.last! - inTimes.first!) / Double(inTimes.count - 1) : 0.1

        // Frames and their timing.
        XCTAssertEqual(outTimes.count, inTimes.count, "decoded frame count", file: file, line: line)
        let tolerance = (outVideo.tick ?? 0) + 1e-6
        let unmatched = Self.unmatchedTimes(inTimes, in: outTimes, tolerance: tolerance)
        let unkeepable = Self.framesBehindTheirPredecessors(inDecodeOrder)
        XCTAssertLessThanOrEqual(unmatched.count, unkeepable,
                                 "\(unmatched.count) input frame times have no output frame within \(tolerance) s "
                                     + "(\(unkeepable) input frames are out of order); first ones: \(unmatched.prefix(5))",
                                 file: file, line: line)
        if let inStart = inVideo.startTime.map({ $0 - origin }) {
            let outStart = try XCTUnwrap(outVideo.startTime, "output video has no start_time", file: file, line: line)
            XCTAssertEqual(outStart, inStart, accuracy: frameDuration, "video start_time", file: file, line: line)
        }
        if let inFirst = inTimes.first, let inLast = inTimes.last, let outFirst = outTimes.first, let outLast = outTimes.last {
            XCTAssertEqual(outLast + frameDuration - outFirst, inLast + frameDuration - inFirst, accuracy: frameDuration,
                           "video duration", file: file, line: line)
        }

        // Audio: copied, not re-encoded, and still where it was on the timeline.
        XCTAssertEqual(outAudio.count, inAudio.count, "audio stream count", file: file, line: line)
        for (n, (inStream, outStream)) in zip(inAudio, outAudio).enumerated() {
            XCTAssertEqual(try Oracle.audioMD5(output, index: n), try Self.inputAudioMD5(input, index: n),
                           "audio stream a:\(n) packets differ", file: file, line: line)
            if let inStart = inStream.startTime.map({ $0 - origin }) {
                let outStart = try XCTUnwrap(outStream.startTime, "output audio a:\(n) has no start_time", file: file, line: line)
                XCTAssertEqual(outStart, inStart, accuracy: frameDuration, "audio a:\(n) start_time", file: file, line: line)
            }
        }

        if outputExtension == "mkv" {
            XCTAssertEqual(outStreams.filter { $0.codecType == "subtitle" }.count,
                           inStreams.filter { $0.codecType == "subtitle" }.count,
                           "subtitle stream count", file: file, line: line)
        }

        // Video format and geometry.
        XCTAssertEqual(outVideo.codecName, "h264", file: file, line: line)
        XCTAssertEqual(outVideo.pixelFormat, "yuv420p", file: file, line: line)
        XCTAssertEqual(outVideo.colorSpace, "bt709", file: file, line: line)
        XCTAssertEqual(outVideo.colorTransfer, "bt709", file: file, line: line)
        XCTAssertEqual(outVideo.colorPrimaries, "bt709", file: file, line: line)
        XCTAssertEqual(outVideo.colorRange, "tv", file: file, line: line)
        XCTAssertFalse(outVideo.sideDataTypes.contains("Display Matrix"),
                       "rotation must be applied to the pixels, not signalled", file: file, line: line)
        let inWidth = try XCTUnwrap(inVideo.width, file: file, line: line)
        let inHeight = try XCTUnwrap(inVideo.height, file: file, line: line)
        let quarterTurn = abs(inVideo.rotation ?? 0).truncatingRemainder(dividingBy: 180) == 90
        let (expectedWidth, expectedHeight) = quarterTurn ? (inHeight, inWidth) : (inWidth, inHeight)
        let outWidth = try XCTUnwrap(outVideo.width, file: file, line: line)
        let outHeight = try XCTUnwrap(outVideo.height, file: file, line: line)
        XCTAssertEqual(outWidth % 2, 0, "width must be even for 4:2:0", file: file, line: line)
        XCTAssertEqual(outHeight % 2, 0, "height must be even for 4:2:0", file: file, line: line)
        XCTAssertEqual(outWidth, expectedWidth / 2 * 2, "width (input rotation \(inVideo.rotation ?? 0))", file: file, line: line)
        XCTAssertEqual(outHeight, expectedHeight / 2 * 2, "height (input rotation \(inVideo.rotation ?? 0))", file: file, line: line)
    }
}
