import Foundation
import GPUEncodeKit
import XCTest

/// `--audio auto|copy|aac|opus|none`, `-an`, `--audio-tracks`, `--audio-bitrate`: which codec each output
/// stream has (ffprobe), copies bit-identical to the input's packets, the warnings and the usage errors.
final class AudioPolicyTests: GPUEncodeTestCase {
    // MARK: - The decision table (AudioPlan.decide, pure)

    private func decide(_ codecs: [String], _ container: AudioContainer, _ policy: AudioPolicy, tracks: [Int]? = nil,
                        muxerHolds: Set<String>? = nil) throws -> [AudioAction] {
        let facts = codecs.enumerated().map { i, codec in
            AudioStreamFacts(inputIndex: i + 1, codec: codec, muxerHolds: muxerHolds?.contains(codec) ?? true)
        }
        return try AudioPlan.decide(streams: facts, container: container, policy: policy, tracks: tracks,
                                    input: "in", output: "out").map(\.action)
    }

    func testAutoTable() throws {
        let codecs = ["aac", "mp3", "ac3", "eac3", "alac", "vorbis", "opus", "flac", "pcm_s16le"]
        let mp4 = codecs.map { ["aac", "mp3", "ac3", "eac3", "alac"].contains($0) ? AudioAction.copy : .encode(.aac) }
        XCTAssertEqual(try decide(codecs, .mp4, .auto, muxerHolds: Set(codecs).subtracting(["pcm_s16le"])), mp4)
        var mov = mp4
        mov[8] = .copy
        XCTAssertEqual(try decide(codecs, .mov, .auto), mov)
        XCTAssertEqual(try decide(codecs, .matroska, .auto), codecs.map { _ in .copy })
        XCTAssertEqual(try decide(codecs, .webm, .auto), codecs.map { ["opus", "vorbis"].contains($0) ? .copy : .encode(.opus) })
        // Matroska re-encodes only what its muxer cannot write, to Opus.
        XCTAssertEqual(try decide(["aac", "pcm_s8"], .matroska, .auto, muxerHolds: ["aac"]), [.copy, .encode(.opus)])
        XCTAssertEqual(try decide(["vorbis"], .other("avi"), .auto, muxerHolds: []), [.encode(.aac)])
    }

    func testForcedCodecsAndCopy() throws {
        XCTAssertEqual(try decide(["aac", "vorbis"], .mp4, .aac), [.encode(.aac), .encode(.aac)])
        XCTAssertEqual(try decide(["aac", "vorbis"], .matroska, .opus), [.encode(.opus), .encode(.opus)])
        XCTAssertEqual(try decide(["aac", "vorbis"], .matroska, .aac), [.encode(.aac), .encode(.aac)])
        XCTAssertEqual(try decide(["aac", "pcm_s16le"], .mov, .copy), [.copy, .copy])
        XCTAssertEqual(try decide(["aac", "vorbis"], .mp4, .none), [])
        XCTAssertThrowsError(try decide(["aac"], .mp4, .opus)) { XCTAssertEqual(($0 as? GPUEncodeError)?.exitCode, 64) }
        XCTAssertThrowsError(try decide(["aac"], .mov, .opus))
        XCTAssertThrowsError(try decide(["opus"], .webm, .aac)) { error in
            XCTAssertTrue("\(error)".contains("WebM"), "\(error)")
        }
        XCTAssertThrowsError(try decide(["aac", "vorbis"], .mp4, .copy)) { error in
            XCTAssertTrue("\(error)".contains("#2 (vorbis)"), "\(error)")
            XCTAssertTrue("\(error)".contains("--audio aac"), "\(error)")
        }
    }

    func testTrackSelection() throws {
        let facts = ["aac", "ac3", "mp3"].enumerated().map { AudioStreamFacts(inputIndex: $0.offset + 1, codec: $0.element, muxerHolds: true) }
        let plan = try AudioPlan.decide(streams: facts, container: .mp4, policy: .auto, tracks: [3, 1], input: "in", output: "out")
        XCTAssertEqual(plan.map(\.codec), ["mp3", "aac"])
        XCTAssertEqual(plan.map(\.position), [3, 1])
        XCTAssertThrowsError(try AudioPlan.decide(streams: facts, container: .mp4, policy: .auto, tracks: [4], input: "in", output: "out")) { error in
            XCTAssertTrue("\(error)".contains("3 audio streams"), "\(error)")
        }
    }

    // MARK: - Through the command line, judged by ffprobe

    /// A 1 s clip (testsrc2 at 160x120) with the given audio tracks, each `(lavfi source, codec arguments)`.
    private func makeClip(_ name: String, tracks: [(source: String, codec: [String])], video: [String] = Oracle.defaultVideoArguments) throws -> URL {
        let file = scratch(name)
        var arguments = ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10"]
        for track in tracks { arguments += ["-f", "lavfi", "-i", track.source] }
        arguments += ["-map", "0:v"]
        for n in tracks.indices { arguments += ["-map", "\(n + 1):a"] }
        arguments += video
        for (n, track) in tracks.enumerated() {
            arguments += track.codec.map { $0.hasPrefix("-c:a") || $0.hasPrefix("-b:a") ? "\($0):\(n)" : $0 }
        }
        arguments += ["-t", "1", file.path]
        try Oracle.runChecked("ffmpeg", arguments)
        return file
    }

    private static let tone = "sine=frequency=440:sample_rate=48000"
    private static let noise = "anoisesrc=sample_rate=44100:amplitude=0.2"

    @discardableResult
    private func transcode(_ input: URL, _ output: URL, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"] + extra)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        return result
    }

    private func audioCodecs(_ file: URL) throws -> [String] {
        try AudioOracle.streams(file).map(\.codec)
    }

    func testAutoCopiesAC3IntoMP4BitForBit() throws {
        let input = try Paths.media("h264_ac3_srt.mkv")
        let output = scratch("ac3.mp4")
        let result = try transcode(input, output, ["--preset", "sepia"])
        XCTAssertEqual(try audioCodecs(output), ["ac3"])
        XCTAssertEqual(try Oracle.audioMD5(output, index: 0), try Oracle.audioMD5(input, index: 0))
        XCTAssertFalse(result.stderr.contains("audio"), result.stderr)
    }

    func testAutoCopiesMP3AndAACIntoMP4BitForBit() throws {
        let input = try makeClip("mp3aac.mp4", tracks: [(Self.noise, ["-c:a", "libmp3lame"]), (Self.tone, ["-c:a", "aac"])])
        let output = scratch("mp3aac-out.mp4")
        let result = try transcode(input, output, ["--preset", "none"])
        XCTAssertEqual(try audioCodecs(output), ["mp3", "aac"])
        for n in 0..<2 { XCTAssertEqual(try Oracle.audioMD5(output, index: n), try Oracle.audioMD5(input, index: n), "a:\(n)") }
        XCTAssertFalse(result.stderr.contains("audio"), result.stderr)
    }

    func testVorbisInWebMToMP4() throws {
        let input = try makeClip("vorbis.webm", tracks: [(Self.noise, ["-c:a", "libvorbis"])],
                                 video: ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k"])
        let output = scratch("vorbis.mp4")
        let result = try transcode(input, output, ["--preset", "sepia"])
        XCTAssertEqual(try audioCodecs(output), ["aac"])
        XCTAssertEqual(result.stderrLines.filter { $0.contains("audio stream #1 (vorbis) is re-encoded to AAC") }.count, 1, result.stderr)
        XCTAssertEqual(try AudioOracle.decodeErrors(output), "")
        // Into Matroska it is copied.
        let mkv = scratch("vorbis.mkv")
        try transcode(input, mkv, ["--preset", "none"])
        XCTAssertEqual(try Oracle.audioMD5(mkv, index: 0), try Oracle.audioMD5(input, index: 0))
    }

    func testAutoReencodesVorbisAndOpusWithOneWarningEach() throws {
        let input = try makeClip("two.mkv", tracks: [(Self.tone, ["-c:a", "libvorbis"]), (Self.noise, ["-c:a", "libopus"])])
        let output = scratch("two.mp4")
        let result = try transcode(input, output, ["--preset", "sepia"])
        XCTAssertEqual(try audioCodecs(output), ["aac", "aac"])
        let warnings = result.stderrLines.filter { $0.contains("re-encoded") }
        XCTAssertEqual(warnings.count, 2, result.stderr)
        XCTAssertTrue(warnings.first?.contains("audio stream #1 (vorbis) is re-encoded to AAC") ?? false, result.stderr)
        XCTAssertTrue(warnings.last?.contains("audio stream #2 (opus) is re-encoded to AAC") ?? false, result.stderr)
        XCTAssertEqual(try AudioOracle.decodeErrors(output), "")
        // The same file into Matroska: both copied.
        let mkv = scratch("two-out.mkv")
        let kept = try transcode(input, mkv, ["--preset", "none"])
        XCTAssertEqual(try audioCodecs(mkv), ["vorbis", "opus"])
        for n in 0..<2 { XCTAssertEqual(try Oracle.audioMD5(mkv, index: n), try Oracle.audioMD5(input, index: n), "a:\(n)") }
        XCTAssertFalse(kept.stderr.contains("re-encoded"), kept.stderr)
    }

    func testPCMInMOVIsCopiedToMOVAndReencodedForMP4() throws {
        let input = try makeClip("pcm.mov", tracks: [(Self.tone, ["-c:a", "pcm_s16le"]), (Self.noise, ["-c:a", "pcm_s24le"])])
        let mov = scratch("pcm-out.mov")
        try transcode(input, mov, ["--preset", "none"])
        XCTAssertEqual(try audioCodecs(mov), ["pcm_s16le", "pcm_s24le"])
        for n in 0..<2 { XCTAssertEqual(try Oracle.audioMD5(mov, index: n), try Oracle.audioMD5(input, index: n), "a:\(n)") }

        let mp4 = scratch("pcm-out.mp4")
        let result = try transcode(input, mp4, ["--preset", "sepia"])
        XCTAssertEqual(try audioCodecs(mp4), ["aac", "aac"])
        XCTAssertEqual(result.stderrLines.filter { $0.contains("re-encoded to AAC") }.count, 2, result.stderr)
        let streams = try AudioOracle.streams(mp4)
        XCTAssertEqual(streams.map(\.sampleRate), [48000, 44100], "sample rates are kept")
        XCTAssertEqual(try AudioOracle.decodeErrors(mp4), "")
    }

    func testCopyOfVorbisIntoMP4IsRefused() throws {
        let input = try Paths.media("h264_vorbis.mkv")
        let before = listing(workDirectory)
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--audio", "copy"])
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["audio stream #1 (vorbis)", "--audio aac", ".mkv"],
                           outputDirectory: workDirectory, before: before)
    }

    func testOpusIntoMP4IsRefused() throws {
        let input = try Paths.media("h264_vorbis.mkv")
        let before = listing(workDirectory)
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--audio", "opus"])
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["--audio opus", ".mkv"],
                           outputDirectory: workDirectory, before: before)
    }

    func testNoAudio() throws {
        let input = try Paths.media("h264_ac3_srt.mkv")
        for flags in [["-an"], ["--audio", "none"]] {
            let output = scratch("none\(flags.count).mkv")
            try transcode(input, output, flags + ["--preset", "none"])
            let types = try Oracle.streams(output).map(\.codecType)
            XCTAssertEqual(types, ["video", "subtitle"], "\(flags)")
        }
    }

    func testTrackOrderAndStreamOrder() throws {
        // Subtitle between the audio tracks in the input: the output has video, audio (in the order
        // asked for), then the subtitle.
        let base = try makeClip("base.mkv", tracks: [(Self.tone, ["-c:a", "aac"]), (Self.noise, ["-c:a", "ac3"])])
        let subtitles = scratch("subs.srt")
        try "1\n00:00:00,000 --> 00:00:00,500\nhello\n".write(to: subtitles, atomically: true, encoding: .utf8)
        let input = scratch("tracks.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", base.path, "-i", subtitles.path,
                                         "-map", "0:v", "-map", "0:a:0", "-map", "1:s", "-map", "0:a:1", "-c", "copy", input.path])
        let output = scratch("tracks-out.mkv")
        try transcode(input, output, ["--audio-tracks", "2,1", "--preset", "none"])
        let streams = try Oracle.streams(output)
        XCTAssertEqual(streams.map(\.codecType), ["video", "audio", "audio", "subtitle"])
        XCTAssertEqual(try audioCodecs(output), ["ac3", "aac"])
        XCTAssertEqual(try Oracle.audioMD5(output, index: 0), try Oracle.audioMD5(input, index: 1))
        XCTAssertEqual(try Oracle.audioMD5(output, index: 1), try Oracle.audioMD5(input, index: 0))

        let one = scratch("one.mkv")
        try transcode(input, one, ["--audio-tracks", "2", "--preset", "none"])
        XCTAssertEqual(try audioCodecs(one), ["ac3"])

        let before = listing(workDirectory)
        let result = try gpuencode([input.path, scratch("three.mkv").path, "--audio-tracks", "1,3"])
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["--audio-tracks 3", "2 audio streams"],
                           outputDirectory: workDirectory, before: before)
    }

    func testAudioBitrate() throws {
        let input = try makeClip("rate.mkv", tracks: [(Self.noise, ["-c:a", "libvorbis"])])
        func bitrate(_ file: URL) throws -> Double {
            let json = try Oracle.ffprobeJSON(["-select_streams", "a:0", "-show_entries", "stream=bit_rate", file.path])
            return Double((json["streams"] as? [[String: Any]])?.first?["bit_rate"] as? String ?? "") ?? 0
        }
        let low = scratch("low.mp4")
        try transcode(input, low, ["--audio-bitrate", "32k", "--preset", "none"])
        let high = scratch("high.mp4")
        try transcode(input, high, ["--audio-bitrate", "160k", "--preset", "none"])
        // Noise is the hardest thing to compress, so the encoder spends about what it is given.
        XCTAssertEqual(try bitrate(low), 32_000, accuracy: 16_000)
        XCTAssertEqual(try bitrate(high), 160_000, accuracy: 60_000)

        let copied = scratch("copied.mkv")
        let result = try transcode(input, copied, ["--audio-bitrate", "32k", "--preset", "none"])
        XCTAssertTrue(result.stderr.contains("--audio-bitrate is ignored"), result.stderr)
    }

    func testAudioUsageErrors() throws {
        let input = try Paths.media("h264_vorbis.mkv")
        let bad: [[String]] = [["--audio", "loud"], ["--audio-tracks", "0"], ["--audio-tracks", "1,1"], ["--audio-tracks", "x"],
                               ["--audio-bitrate", "fast"], ["-an", "--audio", "aac"], ["-an", "--audio-tracks", "1"]]
        for flags in bad {
            let before = listing(workDirectory)
            let result = try gpuencode([input.path, scratch("out.mkv").path] + flags)
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [flags.last == "1" ? "--audio-tracks" : flags[0]],
                               outputDirectory: workDirectory, before: before)
        }
    }
}
