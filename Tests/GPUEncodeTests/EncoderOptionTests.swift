import Foundation
import XCTest

/// The x264 options keep ffmpeg's meaning; ffprobe checks that they reached the stream.
final class EncoderOptionTests: GPUEncodeTestCase {
    private func keyframeIndices(_ file: URL) throws -> [Int] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "frame=key_frame", file.path])
        let frames = json["frames"] as? [[String: Any]] ?? []
        return frames.enumerated().compactMap { ($0.element["key_frame"] as? Int) == 1 ? $0.offset : nil }
    }

    private func videoField(_ file: URL, _ key: String) throws -> String? {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "stream=\(key)", file.path])
        return (json["streams"] as? [[String: Any]])?.first?[key] as? String
    }

    func testKeyintProfileAndBitrate() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 4, size: "640x360")

        let gop = scratch("gop.mp4")
        XCTAssertEqual(try gpuencode([input.path, gop.path, "--keyint", "25", "--x264-preset", "veryfast"]).status, 0)
        let keys = try keyframeIndices(gop)
        XCTAssertEqual(keys.first, 0)
        XCTAssertGreaterThanOrEqual(keys.count, 4, "100 frames with --keyint 25: \(keys)")
        XCTAssertTrue(zip(keys, keys.dropFirst()).allSatisfy { $1 - $0 <= 25 }, "\(keys)")
        XCTAssertEqual(try videoField(gop, "profile"), "High")

        // Bitrate mode instead of crf: x264's average lands near the target on a 4 s clip.
        let low = scratch("low.mp4")
        let high = scratch("high.mp4")
        XCTAssertEqual(try gpuencode([input.path, low.path, "--bitrate", "150k", "--x264-preset", "veryfast"]).status, 0)
        XCTAssertEqual(try gpuencode([input.path, high.path, "-b:v", "1.5M", "--x264-preset", "veryfast"]).status, 0)
        func rate(_ file: URL) throws -> Double { Double(try videoField(file, "bit_rate") ?? "0") ?? 0 }
        let (lowRate, highRate) = (try rate(low), try rate(high))
        XCTAssertEqual(lowRate, 150_000, accuracy: 75_000)
        XCTAssertEqual(highRate, 1_500_000, accuracy: 750_000)

        // Lossless crf 0 needs x264's High 4:4:4 Predictive profile, chosen automatically.
        let lossless = scratch("lossless.mkv")
        XCTAssertEqual(try gpuencode([input.path, lossless.path, "--crf", "0", "--x264-preset", "ultrafast"]).status, 0)
        XCTAssertEqual(try videoField(lossless, "profile"), "High 4:4:4 Predictive")
    }

    func testBadEncoderOptionsAreUsageErrors() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        for bad in [["--crf", "60"], ["--x264-preset", "warp"], ["--bitrate", "fast"], ["--tune", "x"], ["--keyint", "0"]] {
            let outDir = scratch("out-\(bad[0])")
            try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
            let result = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path] + bad)
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [bad[0]], outputDirectory: outDir)
        }
    }

    /// The audio and metadata options are checked like every other (their effect is the audio
    /// stage's): a bad value is one line, exit 64, naming the flag; good ones run.
    func testAudioAndMetadataOptionsAreChecked() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        let outDir = scratch("out")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        let o = outDir.appendingPathComponent("o.mkv").path
        for (bad, culprit) in [(["--audio", "mp3"], "--audio"), (["--audio-tracks", "0"], "--audio-tracks"), (["--audio-tracks", "1,,2"], "--audio-tracks"),
                               (["--audio-tracks", "2,2"], "--audio-tracks"), (["--audio-tracks", "x"], "--audio-tracks"),
                               (["--audio-bitrate", "4k"], "--audio-bitrate"), (["--audio-bitrate", "3M"], "--audio-bitrate"), (["-b:a", "fast"], "--audio-bitrate"),
                               (["--metadata", "title"], "--metadata"), (["--metadata", "=x"], "--metadata"), (["--metadata", "a b=c"], "--metadata"),
                               (["--metadata", "title=a\nb"], "--metadata"), (["-an", "--audio", "aac"], "-an"),
                               (["-an", "--audio-tracks", "1"], "--audio-tracks")] {
            let result = try gpuencode([input.path, o] + bad)
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [culprit], outputDirectory: outDir)
        }
        let ok = try gpuencode([input.path, o, "--speed", "ultrafast", "--audio-tracks", "1", "--audio-bitrate", "128k", "--strip-metadata",
                                "--no-location", "--metadata", "title=Test = 1", "--metadata", "comment="])
        XCTAssertEqual(ok.status, 0, ok.summary)
    }
}
