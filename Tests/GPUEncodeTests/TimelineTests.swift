import Foundation
import XCTest

/// Output timelines as the ffmpeg CLI's default makes them (no -copyts): the input's start becomes 0
/// and every stream keeps its offset to the others; `--copyts` keeps the absolute times. Judged by
/// ffprobe on clips made here with the ffmpeg CLI: every decoded frame's time against the input's
/// (less the input's start), the A/V offset (the difference of the streams' first presented times,
/// after edit lists and decoder skips) against the input's within 1 ms, and copied audio
/// bit-identical.
final class TimelineTests: BatchTestCase {
    /// 2^33 ticks of 90 kHz: where MPEG-TS timestamps wrap, 95443.7 s.
    static let wrapSeconds = Double(1 << 33) / 90000

    /// Decoded frame times (best effort, as presented) of the first video and first audio stream, sorted.
    struct Presented {
        var video: [Double] = []
        var audio: [Double] = []
        /// Audio's first presented time less video's, in ms.
        var offsetMS: Double { (audio.first! - video.first!) * 1000 }
    }

    static func presented(_ file: URL, extra: [String] = []) throws -> Presented {
        let streams = try Oracle.streams(file)
        let video = streams.first { $0.codecType == "video" }?.index
        let audio = streams.first { $0.codecType == "audio" }?.index
        let json = try Oracle.ffprobeJSON(extra + ["-show_entries", "frame=stream_index,best_effort_timestamp_time", file.path])
        var p = Presented()
        for frame in json["frames"] as? [[String: Any]] ?? [] {
            guard let index = (frame["stream_index"] as? NSNumber)?.intValue,
                  let text = frame["best_effort_timestamp_time"] as? String, let t = Double(text) else { continue }
            if index == video { p.video.append(t) } else if index == audio { p.audio.append(t) }
        }
        p.video.sort()
        p.audio.sort()
        return p
    }

    /// Packet MD5 of the first audio stream, copied through `bsf` (ADTS AAC from MPEG-TS loses its
    /// headers in MP4 and Matroska, as the muxers' own aac_adtstoasc does).
    static func audioMD5(_ file: URL, bsf: String? = nil) throws -> String {
        let result = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:a:0", "-c", "copy"]
                                           + (bsf.map { ["-bsf:a", $0] } ?? []) + ["-f", "md5", "-"])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// 4 s of 30 fps H.264 with B-frames (120 frames) and AAC, made at 0 in Matroska.
    func makeSource(_ name: String, audio: String = "aac", seconds: Int = 4) throws -> URL {
        let file = scratch(name)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=\(seconds)",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p",
                                         "-c:a", audio == "aac" ? "aac" : "libopus", file.path])
        return file
    }

    /// The source remuxed (packets copied) into MPEG-TS with its times moved by `offset` seconds.
    func makeTS(_ name: String, offset: Double, source: URL) throws -> URL {
        let file = scratch(name)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source.path, "-c", "copy",
                                         "-output_ts_offset", String(offset), "-f", "mpegts", file.path])
        return file
    }

    func transcode(_ input: URL, _ output: URL, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try gpuencode([input.path, output.path, "--speed", "ultrafast"] + extra)
        XCTAssertEqual(r.status, ExitCode.ok, r.summary, file: file, line: line)
    }

    /// Every input frame (moved by `origin`) has an output frame within `tolerance` s, the counts
    /// match, and the A/V offset is the input's within 1 ms.
    func assertSameTimeline(_ input: Presented, _ output: Presented, origin: Double, tolerance: Double, what: String,
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(output.video.count, input.video.count, "\(what): video frames presented", file: file, line: line)
        XCTAssertEqual(output.audio.count, input.audio.count, "\(what): audio frames presented", file: file, line: line)
        let worst = zip(input.video, output.video).map { abs($1 - ($0 - origin)) }.max() ?? .infinity
        XCTAssertLessThanOrEqual(worst, tolerance, "\(what): worst video frame time error \(worst * 1000) ms", file: file, line: line)
        XCTAssertEqual(output.offsetMS, input.offsetMS, accuracy: 1,
                       "\(what): A/V offset \(output.offsetMS) ms, input \(input.offsetMS) ms", file: file, line: line)
    }

    // MARK: - A TS far from 0

    func testTSAt95001SecondsStartsAtZeroUnlessCopyts() throws {
        let ts = try makeTS("far.ts", offset: 95001, source: try makeSource("src.mkv"))
        let start = try Oracle.formatStartTime(ts)
        XCTAssertGreaterThan(start, 95001, "the fixture starts at \(start) s")
        let input = try Self.presented(ts)
        let inMD5 = try Self.audioMD5(ts, bsf: "aac_adtstoasc")
        for ext in ["mp4", "mkv", "mov"] {
            let out = scratch("out.\(ext)")
            try transcode(ts, out, ["-y"])
            let output = try Self.presented(out)
            XCTAssertEqual(try Oracle.formatStartTime(out), 0, accuracy: 0.0005, ext)
            XCTAssertEqual(min(output.video.first!, output.audio.first!), 0, accuracy: 0.0005, "\(ext): first presented time")
            // A 4 s clip is 4 s long, not 26 hours.
            let duration = try XCTUnwrap(Double(Oracle.ffprobeJSON(["-show_entries", "format=duration", out.path])["format"]
                                                    .flatMap { ($0 as? [String: Any])?["duration"] as? String } ?? ""))
            XCTAssertLessThan(duration, 4.1, "\(ext): duration \(duration) s")
            assertSameTimeline(input, output, origin: start, tolerance: ext == "mkv" ? 0.0006 : 0.00002, what: ext)
            XCTAssertEqual(try Self.audioMD5(out), inMD5, "\(ext): copied AAC packets differ")
        }
        // --copyts: the absolute times stay (the MP4 has an empty edit of 95002 s).
        let abs = scratch("abs.mp4")
        try transcode(ts, abs, ["--copyts"])
        let output = try Self.presented(abs)
        assertSameTimeline(input, output, origin: 0, tolerance: 0.00002, what: "--copyts")
        XCTAssertEqual(try Oracle.formatStartTime(abs), start, accuracy: 0.0005, "--copyts keeps the start")
    }

    // MARK: - A TS across the 33-bit wrap

    func testTSAcrossTheWrapPresentsEveryFrame() throws {
        let ts = try makeTS("wrap.ts", offset: 95441.5, source: try makeSource("src.mkv"))
        // The fixture really wraps: raw timestamps (no correction) both just below 2^33 and just above 0.
        let raw = try Oracle.ffprobeJSON(["-correct_ts_overflow", "0", "-show_entries", "packet=pts", ts.path])
        let pts = (raw["packets"] as? [[String: Any]] ?? []).compactMap { ($0["pts"] as? NSNumber)?.int64Value }
        XCTAssertTrue(pts.contains { $0 > (1 << 33) - 90000 * 5 } && pts.contains { $0 < 90000 * 5 }, "the fixture does not wrap")
        let input = try Self.presented(ts)
        XCTAssertEqual(input.video.count, 120)
        let start = try Oracle.formatStartTime(ts)
        let inMD5 = try Self.audioMD5(ts, bsf: "aac_adtstoasc")
        for (ext, extra) in [("mp4", []), ("mkv", []), ("mp4", ["--deterministic"]), ("mp4", ["--preset", "none"])] {
            let out = scratch("out.\(ext)")
            try transcode(ts, out, ["-y"] + extra)
            let output = try Self.presented(out)
            let what = ([ext] + extra).joined(separator: " ")
            XCTAssertEqual(min(output.video.first!, output.audio.first!), 0, accuracy: 0.0005, "\(what): first presented time")
            assertSameTimeline(input, output, origin: start, tolerance: ext == "mkv" ? 0.0006 : 0.00002, what: what)
            XCTAssertEqual(try Self.audioMD5(out), inMD5, "\(what): copied AAC packets differ")
        }
        // Re-encoded audio (decoded times moved before the sample count takes over): the same offset.
        for (ext, codec) in [("mp4", "aac"), ("mkv", "opus"), ("mkv", "aac")] {
            let out = scratch("re.\(ext)")
            try transcode(ts, out, ["-y", "--audio", codec])
            let output = try Self.presented(out)
            let what = "\(ext) --audio \(codec)"
            // AAC in Matroska presents its priming frame first (no way to skip it there in FFmpeg 5.1),
            // and the muxer moves every stream later by it: the content starts one frame (1024
            // samples) after the first presented time.
            let priming = ext == "mkv" && codec == "aac" ? 1024.0 / 48000 : 0
            XCTAssertEqual(output.video.count, input.video.count, "\(what): video frames presented")
            XCTAssertEqual(output.video.first!, input.video.first! - start + priming, accuracy: 0.0011, "\(what): video start")
            let offset = (output.audio.first! + priming - output.video.first!) * 1000
            XCTAssertEqual(offset, input.offsetMS, accuracy: 1, "\(what): A/V offset \(offset) ms, input \(input.offsetMS) ms")
            XCTAssertEqual(output.audio.last! - output.audio.first!, input.audio.last! - input.audio.first!, accuracy: 0.05,
                           "\(what): audio span")
        }
        // --copyts: the times the file counts (before the wrap: 95442.9 s), continuous across it.
        let abs = scratch("abs.mp4")
        try transcode(ts, abs, ["--copyts"])
        let output = try Self.presented(abs)
        assertSameTimeline(input, output, origin: -Self.wrapSeconds, tolerance: 0.00002, what: "--copyts")
        XCTAssertEqual(output.video.first!, input.video.first! + Self.wrapSeconds, accuracy: 0.00002)
    }

    // MARK: - Matroska: negative times, Opus

    func testNegativeStartMatroskaKeepsItsOffsets() throws {
        // Audio 0.639 s before the video (AAC priming: 0.660 s), written negative.
        let input = scratch("neg.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=3",
                                         "-itsoffset", "-0.639", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3.6",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac",
                                         "-avoid_negative_ts", "disabled", "-t", "3", input.path])
        let start = try Oracle.formatStartTime(input)
        XCTAssertLessThan(start, -0.6, "the fixture starts at \(start) s")
        let inTimes = try Self.presented(input)
        let inMD5 = try Self.audioMD5(input)
        // --copyts cannot keep a negative time (MP4's edit list would hide 0.66 s of audio, as
        // `ffmpeg -copyts` does): that start moves to 0 too.
        for (ext, extra) in [("mkv", []), ("mp4", []), ("mov", []), ("mp4", ["--copyts"]), ("mkv", ["--copyts"])] {
            let out = scratch("out.\(ext)")
            try transcode(input, out, ["-y"] + extra)
            let output = try Self.presented(out)
            let what = ([ext] + extra).joined(separator: " ")
            // Matroska counts milliseconds; MP4 keeps the video's 1/1000 time base here too.
            assertSameTimeline(inTimes, output, origin: start, tolerance: 0.0006, what: what)
            XCTAssertEqual(min(output.video.first!, output.audio.first!), 0, accuracy: 0.0005, "\(what): first presented time")
            XCTAssertEqual(try Self.audioMD5(out), inMD5, "\(what): copied AAC packets differ")
        }
    }

    /// AAC whose MP4 edit list skips the encoder's priming, copied into Matroska: FFmpeg 5.1's muxer has
    /// no way to say "skip it" for AAC, so the priming frame (1024 samples) plays first and the muxer
    /// moves every stream later by it. The content keeps its offset to the video (DESIGN.md, Audio sync).
    func testAACWithPrimingIntoMatroskaKeepsTheContentsOffset() throws {
        let input = scratch("primed.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=2",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", input.path])
        let inTimes = try Self.presented(input)
        let out = scratch("out.mkv")
        try transcode(input, out)
        let output = try Self.presented(out)
        let priming = 1024.0 / 48000
        let contentOffset = (output.audio.first! + priming - output.video.first!) * 1000
        XCTAssertEqual(contentOffset, inTimes.offsetMS, accuracy: 1, "content A/V offset \(contentOffset) ms, input \(inTimes.offsetMS) ms")
        XCTAssertEqual(output.audio.count, inTimes.audio.count + 1, "the priming frame is presented in Matroska")
        XCTAssertEqual(output.video.count, inTimes.video.count)
    }

    func testOpusInMatroskaKeepsItsOffsetPassAfterPass() throws {
        let source = try makeSource("opus.mkv", audio: "opus", seconds: 3)
        let first = try Self.presented(source)
        var previous = source
        var offsets: [Double] = []
        var videoStarts: [Double] = []
        // Three passes through Matroska, then two through WebM (AV1).
        for pass in 1...5 {
            let out = scratch("pass\(pass).\(pass <= 3 ? "mkv" : "webm")")
            try transcode(previous, out)
            let p = try Self.presented(out)
            assertSameTimeline(first, p, origin: 0, tolerance: 0.0006, what: "pass \(pass)")
            offsets.append(p.offsetMS)
            videoStarts.append(p.video.first!)
            XCTAssertEqual(try Self.audioMD5(out), try Self.audioMD5(source), "pass \(pass): copied Opus packets differ")
            previous = out
        }
        XCTAssertEqual(Set(offsets).count, 1, "A/V offset per pass (ms): \(offsets), input \(first.offsetMS)")
        XCTAssertEqual(Set(videoStarts).count, 1, "video start per pass (s): \(videoStarts)")
        // Re-encoded to AAC into MP4 (players there do not play Opus): the offset stays within 1 ms.
        let mp4 = scratch("opus.mp4")
        try transcode(previous, mp4)
        let p = try Self.presented(mp4)
        XCTAssertEqual(p.offsetMS, first.offsetMS, accuracy: 1, "MP4: A/V offset \(p.offsetMS) ms, input \(first.offsetMS) ms")
        XCTAssertEqual(p.video.count, first.video.count)
    }

    // MARK: - Batch

    func testBatchStartsAtZeroAndCopytsKeepsTheTimes() throws {
        let dir = scratch("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = try makeSource("src.mkv", seconds: 2)
        let ts = try makeTS("a.ts", offset: 95001, source: source)
        try FileManager.default.moveItem(at: ts, to: dir.appendingPathComponent("a.ts"))
        let input = dir.appendingPathComponent("a.ts")
        let start = try Oracle.formatStartTime(input)
        let inTimes = try Self.presented(input)
        for copyts in [false, true] {
            let out = scratch(copyts ? "abs" : "zero")
            let r = try batch([dir.path, "--out-dir", out.path, "--name", "{stem}.mp4", "--preset", "none", "--speed", "ultrafast"]
                              + (copyts ? ["--copyts"] : []))
            XCTAssertEqual(r.status, 0, r.summary)
            let file = out.appendingPathComponent("a.mp4")
            XCTAssertEqual(try Oracle.formatStartTime(file), copyts ? start : 0, accuracy: 0.0005, "batch copyts=\(copyts)")
            assertSameTimeline(inTimes, try Self.presented(file), origin: copyts ? 0 : start, tolerance: 0.00002,
                               what: "batch copyts=\(copyts)")
        }
        // A manifest row turns it on for its job alone.
        let manifest = scratch("jobs.json")
        try """
        {"jobs": [{"input": "\(input.path)", "output": "\(scratch("m-abs.mp4").path)", "copyts": true},
                  {"input": "\(input.path)", "output": "\(scratch("m-zero.mp4").path)"}]}
        """.write(to: manifest, atomically: true, encoding: .utf8)
        let m = try batch(["--manifest", manifest.path, "--preset", "none", "--speed", "ultrafast"])
        XCTAssertEqual(m.status, 0, m.summary)
        XCTAssertEqual(try Oracle.formatStartTime(scratch("m-abs.mp4")), start, accuracy: 0.0005, "manifest copyts: true")
        XCTAssertEqual(try Oracle.formatStartTime(scratch("m-zero.mp4")), 0, accuracy: 0.0005, "manifest default")
    }
}
