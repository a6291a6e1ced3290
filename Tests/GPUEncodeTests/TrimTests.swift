import Foundation
import GPUEncodeKit
import XCTest

// Trim (issue 14): --start/--ss/-ss, --to/-to, --duration/-t. The oracles are the ffmpeg CLI with the
// same input options (`ffmpeg -ss X -to Y -i IN -c:v libx264`, re-encoding) for which frames are kept,
// ffprobe for every frame's time against the source's, the audio's first presented sample and the
// packets' MD5s, and cross-correlation of the decoded audio (AudioOracle) for where its content sits.
//
// The ffmpeg references are made with `-fps_mode passthrough`: its default for MP4 (cfr) duplicates
// a frame where the first kept frame is not on its 1/fps grid (-ss 1.02 -to 3.5 on 25 fps: 63
// frames, the first one twice; passthrough 62, the frames it selected), which is the CLI's frame-rate
// handling, not the trim.
final class TrimTests: BatchTestCase {
    /// The frames the ffmpeg CLI keeps with the same input options, re-encoding (times as ffprobe reads them).
    func ffmpegFrames(_ input: URL, _ trim: [String]) throws -> [Double] {
        let out = scratch("ffmpeg-\(UUID().uuidString).mkv")
        defer { try? FileManager.default.removeItem(at: out) }
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + trim + ["-i", input.path, "-map", "0:v:0", "-c:v", "libx264",
                                                                                   "-preset", "ultrafast", "-fps_mode", "passthrough", out.path])
        return try Oracle.frameTimes(out)
    }

    /// Our trimmed output against ffmpeg's: the same number of frames, and each of ours at its source
    /// frame's time less the start (source times from ffprobe, less the input's start as ffmpeg
    /// counts -ss from it), within `tolerance`; ffmpeg's own times are those on its 1/fps encoder grid,
    /// so they are compared within half a frame.
    func assertTrimmedLikeFFmpeg(_ input: URL, start: Double, _ trim: [String], container: String = "mp4", tolerance: Double = 0.0005,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let out = scratch("trim-\(UUID().uuidString).\(container)")
        try trimTranscode([input.path, out.path, "--audio", "none"] + trim, file: file, line: line)
        let ours = try Oracle.frameTimes(out)
        let reference = try ffmpegFrames(input, trim)
        let what = "\(input.lastPathComponent) \(trim.joined(separator: " "))"
        XCTAssertEqual(ours.count, reference.count, "\(what): frames kept (ffmpeg \(reference.count))", file: file, line: line)
        let origin = try Oracle.formatStartTime(input)
        let source = try Oracle.frameTimes(input).sorted()
        guard let first = source.firstIndex(where: { $0 >= origin + start - 1e-6 }) else {
            return XCTFail("\(what): no source frame after the start", file: file, line: line)
        }
        var worst = 0.0
        for (i, t) in ours.sorted().enumerated() where first + i < source.count {
            worst = max(worst, abs(t - (source[first + i] - origin - start)))
        }
        XCTAssertLessThanOrEqual(worst, tolerance, "\(what): worst |time - (source time - start)| \(worst * 1000) ms", file: file, line: line)
        let frame = source.count > 1 ? (source.last! - source.first!) / Double(source.count - 1) : 0.04
        let gap = zip(ours.sorted(), reference.sorted()).map { abs($0 - $1) }.max() ?? 0
        XCTAssertLessThanOrEqual(gap, frame / 2 + 0.001, "\(what): worst difference to ffmpeg's frame times \(gap * 1000) ms", file: file, line: line)
    }

    // MARK: Video

    func testFrameCountsAndTimesMatchFFmpegOnASyntheticClip() throws {
        let src = try makeTrimSource()
        // Between frames, on a frame, on a keyframe, with -t, to the end, from 0.
        for (start, trim) in [(1.02, ["-ss", "1.02", "-to", "3.5"]), (1.2, ["-ss", "1.2", "-t", "2"]), (2.0, ["-ss", "2", "-to", "4"]),
                              (0.5, ["-ss", "0.5", "-t", "1.013"]), (5.5, ["-ss", "5.5"]), (0, ["-t", "1"]), (3.999, ["-ss", "3.999", "-t", "0.5"])] {
            try assertTrimmedLikeFFmpeg(src, start: start, trim)
        }
        // Matroska too (its millisecond ticks).
        try assertTrimmedLikeFFmpeg(src, start: 1.02, ["-ss", "1.02", "-to", "3.5"], container: "mkv", tolerance: 0.0011)
    }

    func testFrameCountsAndTimesMatchFFmpegOnRealClips() throws {
        let cases: [(String, Double, [String])] = [
            ("h264_aac_720p_bframes_editlist_1s.mp4", 0.3, ["-ss", "0.3", "-to", "0.8"]),      // B-frames + edit list
            ("h264_aac_360p_rooftop_17s.mp4", 5.5, ["-ss", "5.5", "-t", "3"]),
            ("phone_h264_aac_vfr_rot180_2s.mp4", 0.75, ["-ss", "0.75", "-to", "1.9"]),         // VFR
            ("h264_bframes_empty_edit_10s_video_only.mp4", 1.51, ["-ss", "1.51", "-t", "1"]),  // starts at 10 s
            ("h264_ac3_srt.mkv", 0.41, ["-ss", "0.41", "-to", "1.0"]),
            // -t alone: no start cut (the pre-roll before the edit list's start stays the demuxer's business).
            ("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4", 0, ["-t", "0.5"]),
        ]
        for (name, start, trim) in cases {
            try assertTrimmedLikeFFmpeg(try Paths.media(name), start: start, trim, tolerance: name.hasSuffix(".mkv") ? 0.0011 : 0.0005)
        }
    }

    /// The spellings: ffmpeg's -ss/-to/-t and the long ones give the same frames.
    /// An input that cannot seek (a FIFO): the cut reads from the start and drops what is before it,
    /// giving what the same cut of the file gives (frames and times, audio start). Before, Matroska's
    /// "seek" read the pipe to its end looking for its index and the run failed with "no video frame".
    func testCutOfAPipeEqualsTheCutOfTheFile() throws {
        let mp4 = try makeTrimSource()
        let mkv = scratch("src.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", mp4.path, "-c", "copy", mkv.path])
        for (source, container) in [(mkv, "mp4"), (mkv, "mkv")] {
            let fifo = scratch("pipe-\(container).mkv")
            XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
            let writer = try Oracle.start("/bin/sh", ["-c", "cat '\(source.path)' > '\(fifo.path)'"])
            let piped = scratch("piped.\(container)"), direct = scratch("direct.\(container)")
            try trimTranscode([fifo.path, piped.path, "--ss", "2.02", "-t", "1.5"])
            _ = try? writer.wait(timeout: 10)
            try trimTranscode([source.path, direct.path, "--ss", "2.02", "-t", "1.5"])
            XCTAssertEqual(try Oracle.frameTimes(piped), try Oracle.frameTimes(direct), "\(container) from a pipe: frame times")
            let starts = try [piped, direct].map { f in try Oracle.streams(f).map { $0.startTime ?? -1 } }
            XCTAssertEqual(starts[0], starts[1], "\(container) from a pipe: stream start times")
            XCTAssertEqual(try Oracle.frameTimes(piped).count, 38, "1.5 s at 25 fps from 2.02 s")
        }
    }

    func testSpellings() throws {
        let src = try makeTrimSource(seconds: 3)
        var counts: [Int] = []
        for trim in [["-ss", "1", "-to", "2"], ["--ss", "1", "--to", "2"], ["--start", "00:00:01", "--duration", "1000ms"], ["--start", "1s", "-t", "0:01"]] {
            let out = scratch("s\(counts.count).mp4")
            try trimTranscode([src.path, out.path] + trim)
            counts.append(try Oracle.frameTimes(out).count)
        }
        XCTAssertEqual(counts, [25, 25, 25, 25], "1 s of 25 fps in every spelling")
    }

    /// Interlaced input: the deinterlacer sees only the kept frames (ffmpeg puts its trim first in
    /// the graph), so its first frame is its own previous as in ffmpeg's bwdif; frame and field rate,
    /// both transfer paths; the pictures match ffmpeg's `-ss -to -i ... -vf bwdif` (PSNR).
    func testInterlacedInputDeinterlacedAfterTheCut() throws {
        let prog = scratch("p.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50", "-frames:v", "100",
                                         "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p", "-c:v", "ffv1"] + InterlaceTests.bt709 + [prog.path])
        let src = scratch("i.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", prog.path, "-vf", "tinterlace=mode=interleave_top,setfield=tff",
                                         "-c:v", "libx264", "-qp", "0", "-flags", "+ilme+ildct", "-x264-params", "tff=1"] + InterlaceTests.bt709 + [src.path])
        let trim = ["-ss", "0.5", "-to", "1.3"]
        for (mode, bwdif) in [("frame", "bwdif=mode=send_frame:deint=all"), ("field", "bwdif=mode=send_field:deint=all")] {
            let reference = scratch("ref-\(mode).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + trim + ["-i", src.path, "-vf", bwdif, "-c:v", "ffv1",
                                                                                       "-fps_mode", "passthrough", reference.path])
            let want = try Oracle.frameTimes(reference).count
            for transfer in ["pbo", "client"] {
                let out = scratch("d-\(mode)-\(transfer).mkv")
                let r = try gpuencode([src.path, out.path, "--deinterlace", mode, "--crf", "0", "-y"] + trim, environment: ["GPUENCODE_TRANSFER": transfer])
                XCTAssertEqual(r.status, ExitCode.ok, r.summary)
                let times = try Oracle.frameTimes(out)
                XCTAssertEqual(times.count, want, "\(mode) (\(transfer)): frames, ffmpeg bwdif \(want)")
                XCTAssertEqual(times.first ?? -1, 0.02, accuracy: 0.0011, "\(mode): the first frame, 0.52 (25i), at 0.52 - 0.5")
                let ours = try RawFrames(out, width: 320, height: 240), theirs = try RawFrames(reference, width: 320, height: 240)
                let psnr = ours.psnr(against: theirs)
                XCTAssertGreaterThanOrEqual(psnr.y, 45, "\(mode) (\(transfer)): Y PSNR against ffmpeg's bwdif on the same cut: \(psnr.y) dB")
                print("trim+deinterlace \(mode) \(transfer): \(times.count) frames, Y \(psnr.y) dB, all \(psnr.all) dB against ffmpeg bwdif")
            }
        }
    }

    /// --copyts keeps the input's times (as `ffmpeg -copyts -ss`): the first frame at its own time.
    func testCopytsKeepsInputTimes() throws {
        let src = try makeTrimSource(seconds: 3)
        let out = scratch("c.mkv")
        try trimTranscode([src.path, out.path, "--copyts", "-ss", "1.02", "-t", "1"])
        let times = try Oracle.frameTimes(out)
        XCTAssertEqual(times.count, 25)
        XCTAssertEqual(times.first ?? -1, 1.04, accuracy: 0.0011, "first frame at its input time 1.04: \(times.first ?? -1)")
        let ref = scratch("c-ref.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-copyts", "-ss", "1.02", "-t", "1", "-i", src.path, "-an", "-c:v", "libx264",
                                         "-preset", "ultrafast", "-fps_mode", "passthrough", ref.path])
        let reference = try Oracle.frameTimes(ref)
        XCTAssertEqual(times.count, reference.count)
        XCTAssertEqual(times.first ?? -1, reference.first ?? 1, accuracy: 0.0011, "ffmpeg -copyts -ss: \(reference.first ?? -1)")
    }

    // MARK: Audio

    /// Copied AAC in MP4: cut at packet boundaries, the packet holding the start kept, every packet
    /// bit-identical (MD5s: a contiguous run of the source's), the edit list hiding the part before
    /// the start: the first sample plays at 0 (within 1 ms of the first video frame at 0) and the
    /// content sits where it was against the video (correlation, within 1 ms).
    func testCopiedAudioInMP4StartsWithTheVideo() throws {
        let src = try makeTrimSource()
        for start in [1.2, 1.234] {
            let out = scratch("a\(start).mp4")
            try trimTranscode([src.path, out.path, "-ss", String(start), "-t", "2", "--audio", "copy"])
            let video = try Oracle.frameTimes(out)
            let firstAudio = try AudioOracle.firstSampleTime(out)
            XCTAssertEqual(firstAudio, 0, accuracy: 0.001, "ss \(start): first audio sample at \(firstAudio * 1000) ms")
            if start == 1.2 { XCTAssertEqual(video.first ?? -1, 0, accuracy: 0.0005, "a start on a frame: the first frame at 0") }
            try assertAudioInPlace(src, out, start: start, videoShift: 0, what: "copy mp4 ss \(start)")
            try assertPacketsCopied(src, out, start: start, what: "mp4 ss \(start)")
        }
    }

    /// The same on real clips, into MP4: Big Buck Bunny's 5.1 AAC, an iPhone .mov (44.1 kHz mono), and a
    /// camera clip whose audio edit list opens with an empty edit. That one's AAC packets say 960
    /// samples but FFmpeg's decoder gives 1024 each, so its decoded samples cannot be placed on its
    /// timeline (the content check is left out for it); its packets and first sample are checked.
    func testCopiedAudioOnRealClips() throws {
        for (name, start, content) in [("h264_aac51_720p_bbb_5s.mp4", 2.3, true), ("iphone4s_h264_aac_rot90_2s.mov", 1.01, true),
                                       ("h264_aac_360p_rooftop_17s.mp4", 5.5, false)] {
            let src = try Paths.media(name)
            let out = scratch("real-\(start).mp4")
            try trimTranscode([src.path, out.path, "-ss", String(start), "-t", "0.5", "--audio", "copy"])
            let firstAudio = try AudioOracle.firstSampleTime(out)
            XCTAssertEqual(firstAudio, 0, accuracy: 0.001, "\(name) ss \(start): first audio sample at \(firstAudio * 1000) ms")
            try assertPacketsCopied(src, out, start: start, length: 0.5, what: name)
            if content { try assertAudioInPlace(src, out, start: start, videoShift: 0, what: name, points: [start + 0.2]) }
        }
    }

    /// Copied audio in Matroska: no negative times and no start skip for AAC in FFmpeg 5.1 (CodecDelay
    /// is written for Opus's pre-skip only, DiscardPadding only for an end), so the packet holding the
    /// start keeps its true time and the file starts with it: every stream moves by the part of that
    /// packet before the start (at most one packet, 21.3 ms at 1024 samples / 48 kHz), so the A/V
    /// offset stays (within Matroska's millisecond). Packets stay bit-identical. (Copied Opus is cut at
    /// the sample by its pre-skip instead: TrimMatroskaTests.)
    func testCopiedAudioInMatroskaKeepsSync() throws {
        // AAC (synthetic, 48 kHz); TrimMatroskaTests checks the warning this gives.
        for (src, start, ext) in [(try makeTrimSource(), 1.234, "mkv")] {
            let out = scratch("a-\(start).\(ext)")
            try trimTranscode([src.path, out.path, "-ss", String(start), "-t", "2", "--audio", "copy"])
            let video = try Oracle.frameTimes(out).sorted()
            let origin = try Oracle.formatStartTime(src)
            let source = try Oracle.frameTimes(src).sorted()
            let firstKept = source.first { $0 >= origin + start }!
            let shift = video.first! - (firstKept - origin - start)
            let what = "copy mkv \(src.lastPathComponent)"
            XCTAssertGreaterThanOrEqual(shift, -0.0011, what)
            XCTAssertLessThanOrEqual(shift, 0.0214, "\(what): the file starts at most one audio packet before the start: \(shift * 1000) ms")
            print("trim \(what): the streams start \(shift * 1000) ms after the file (the audio packet holding the start)")
            try assertAudioInPlace(src, out, start: origin + start, videoShift: shift, what: what)
            try assertPacketsCopied(src, out, start: origin + start, what: what)
        }
    }

    /// Re-encoded audio is cut at the sample: AAC in MP4 and Opus in Matroska start at 0 (the first
    /// presented sample within 1 ms), their content in place (within 1 ms), and end with the trim.
    func testReencodedAudioIsCutAtTheSample() throws {
        let src = try makeTrimSource()
        for (container, codec) in [("mp4", "aac"), ("mkv", "opus")] {
            let out = scratch("r.\(container)")
            try trimTranscode([src.path, out.path, "-ss", "1.234", "-t", "2", "--audio", codec])
            let first = try AudioOracle.firstSampleTime(out)
            XCTAssertEqual(first, 0, accuracy: 0.001, "\(codec) in .\(container): first sample at \(first * 1000) ms")
            let video = try Oracle.frameTimes(out).sorted()
            XCTAssertEqual(video.first ?? -1, 1.24 - 1.234, accuracy: 0.0011, "\(codec): the first frame at 1.24 - 1.234")
            try assertAudioInPlace(src, out, start: 1.234, videoShift: 0, what: "\(codec) .\(container)")
            let length = Double(try AudioOracle.pcm(out).count) / Double(AudioOracle.rate)
            XCTAssertEqual(first + length, 2, accuracy: 0.025, "\(codec): the audio ends at the trim's end: \(first + length) s")
        }
    }

    /// The decoded output audio against the source's: content at output time t was at source time
    /// t + start - videoShift (the video's own shift, 0 unless Matroska moved the file), within 1 ms.
    func assertAudioInPlace(_ src: URL, _ out: URL, start: Double, videoShift: Double, what: String, points: [Double]? = nil,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let input = try AudioOracle.Timeline(src)
        let output = try AudioOracle.Timeline(out)
        let placed = AudioOracle.Timeline(start: output.start + start - videoShift, samples: output.samples)
        for at in points ?? [start + 0.3, start + 1.2] {
            let (lag, correlation) = try AudioOracle.contentOffset(input, placed, at: at)
            XCTAssertGreaterThan(correlation, 0.85, "\(what): correlation \(correlation) at \(at) s", file: file, line: line)
            XCTAssertLessThanOrEqual(abs(lag), 0.001, "\(what): audio content \(lag * 1000) ms off at \(at) s", file: file, line: line)
            print("trim \(what): audio content offset \(lag * 1000) ms at source \(at) s (correlation \(correlation))")
        }
    }

    /// The output's audio packets (MD5 each) are a contiguous run of the source's, from the packet
    /// that holds the start.
    func assertPacketsCopied(_ src: URL, _ out: URL, start: Double, length wanted: Double = 2, what: String,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        func packets(_ f: URL) throws -> [(time: Double, duration: Double, md5: String)] {
            let r = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", f.path, "-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"])
            // framemd5: stream, dts, pts, duration, size, hash (times in the stream's time base, #tb line).
            var tb = 1.0
            var list: [(Double, Double, String)] = []
            for l in r.stdout.split(separator: "\n") {
                if l.hasPrefix("#tb 0:") {
                    let parts = l.split(separator: ":").last!.trimmingCharacters(in: .whitespaces).split(separator: "/")
                    tb = Double(parts[0])! / Double(parts[1])!
                } else if !l.hasPrefix("#") {
                    let f = l.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    list.append((Double(f[2])! * tb, Double(f[3])! * tb, f[5]))
                }
            }
            return list
        }
        let a = try packets(src), b = try packets(out)
        guard let first = b.first, let k = a.firstIndex(where: { $0.md5 == first.md5 }) else {
            return XCTFail("\(what): the first output packet is not a source packet", file: file, line: line)
        }
        XCTAssertTrue(a[k].time <= start + 1e-6 && start < a[k].time + a[k].duration,
                      "\(what): the first packet (source \(a[k].time) s + \(a[k].duration)) holds the start \(start)", file: file, line: line)
        XCTAssertEqual(b.map(\.md5), a[k..<min(a.count, k + b.count)].map(\.md5), "\(what): packets bit-identical, in order", file: file, line: line)
        let length = b.last.map { $0.time + $0.duration - first.time } ?? 0
        // From the packet holding the start to the last that starts before the end.
        XCTAssertLessThanOrEqual(length, wanted + 2 * first.duration, "\(what): \(b.count) packets, \(length) s for \(wanted) s", file: file, line: line)
        XCTAssertGreaterThanOrEqual(length, wanted, "\(what): \(b.count) packets, \(length) s for \(wanted) s", file: file, line: line)
    }

    // MARK: Subtitles

    /// A subtitle cue shown across the start is kept from the start to its own end; the Matroska
    /// clip's AC-3 packet holding the start moves the file by the part before it (see above).
    func testSubtitleCueAcrossTheStart() throws {
        let src = try Paths.media("h264_ac3_srt.mkv")   // one cue, 0 to 1.234 s
        let out = scratch("s.mkv")
        try trimTranscode([src.path, out.path, "-ss", "0.5"])
        let json = try Oracle.ffprobeJSON(["-select_streams", "s", "-show_entries", "packet=pts_time,duration_time", out.path])
        let cues = (json["packets"] as? [[String: Any]] ?? []).compactMap { p -> (Double, Double)? in
            guard let t = (p["pts_time"] as? String).flatMap(Double.init), let d = (p["duration_time"] as? String).flatMap(Double.init) else { return nil }
            return (t, d)
        }
        XCTAssertEqual(cues.count, 1)
        let video = try Oracle.frameTimes(out).sorted()
        let source = try Oracle.frameTimes(src).sorted()
        let shift = video.first! - (source.first { $0 >= 0.5 }! - 0.5)
        XCTAssertEqual(cues.first?.0 ?? -1, shift, accuracy: 0.0011, "the cue starts with the output (file shift \(shift * 1000) ms)")
        XCTAssertEqual((cues.first?.0 ?? 0) + (cues.first?.1 ?? 0) - shift, 1.234 - 0.5, accuracy: 0.0011, "and ends where it ended")
        // Cues wholly before the start are dropped, one across it starts at 0, later ones move with
        // the video, one starting after the end is left out (a synthetic clip with three cues).
        let srt = scratch("c.srt")
        try "1\n00:00:00,000 --> 00:00:00,500\nbefore\n\n2\n00:00:00,800 --> 00:00:01,500\nacross\n\n3\n00:00:02,000 --> 00:00:02,500\ninside\n\n4\n00:00:02,900 --> 00:00:03,000\nafter\n"
            .write(to: srt, atomically: true, encoding: .utf8)
        let clip = try makeTrimSource("v.mp4", seconds: 4)
        let muxed = scratch("cues.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", clip.path, "-i", srt.path, "-map", "0:v", "-c", "copy", "-map", "1", muxed.path])
        let cut = scratch("cut.mkv")
        try trimTranscode([muxed.path, cut.path, "-ss", "1", "-to", "2.2"])
        let packets = try Oracle.ffprobeJSON(["-select_streams", "s", "-show_entries", "packet=pts_time,duration_time", cut.path])["packets"] as? [[String: Any]] ?? []
        let times = packets.compactMap { p -> [Double]? in
            guard let t = (p["pts_time"] as? String).flatMap(Double.init), let d = (p["duration_time"] as? String).flatMap(Double.init) else { return nil }
            return [t, d]
        }
        XCTAssertEqual(times, [[0, 0.5], [1.0, 0.5]], "cue 2 from 0 to its end (1.5 - 1), cue 3 at 2 - 1; cues 1 and 4 gone")
    }

    // MARK: Errors and decisions

    func testUsageErrors() throws {
        let src = try makeTrimSource(seconds: 2)
        let dir = workDirectory!
        let cases: [([String], [String])] = [
            (["-ss", "2"], ["--start 2", "end"]),            // at the end: nothing to encode
            (["-ss", "9"], ["--start 9", "end"]),
            (["-ss", "1.99"], ["--start 1.99", "end"]),      // after the last frame (1.96)
            (["-ss", "1", "-to", "2", "-t", "1"], ["-t and -to"]),
            (["-ss", "1.5", "-to", "1"], ["--to", "not after"]),
            (["-t", "0"], ["--duration"]),
            (["--ss=-1"], ["--start"]),
            (["-ss", "1e3"], ["--start", "1e3"]),
            (["-to", "1:75"], ["--to"]),
        ]
        for (arguments, culprits) in cases {
            let before = listing(dir)
            let r = try gpuencode([src.path, scratch("e.mp4").path] + arguments)
            assertCleanFailure(r, exitCodes: [ExitCode.usage], mentioning: culprits, outputDirectory: dir, before: before)
        }
        // A picture has no time; a picture out is the frame at --start.
        let png = scratch("f.png")
        // (a picture takes no encoder settings, so not through trimTranscode's --speed)
        let made = try gpuencode([src.path, png.path, "--ss", "1", "-y"])
        XCTAssertEqual(made.status, ExitCode.ok, made.summary)
        let r = try gpuencode([png.path, scratch("p.mp4").path, "-ss", "1"])
        assertCleanFailure(r, exitCodes: [ExitCode.usage], mentioning: ["f.png", "picture"])
        assertCleanFailure(try gpuencode([src.path, scratch("g.png").path, "-t", "1"]), exitCodes: [ExitCode.usage], mentioning: ["-t"])
    }

    /// ffmpeg's time syntax (ffmpeg-utils(1), "Time duration"): its own examples.
    func testTimeSyntax() {
        let cases: [(String, Int64?)] = [("55", 55_000_000), ("0.2", 200_000), ("200ms", 200_000), ("200000us", 200_000),
                                         ("12:03:45", 43_425_000_000), ("23.189", 23_189_000), ("1:30", 90_000_000),
                                         ("00:01:30.500", 90_500_000), ("-1:30", -90_000_000), ("1.5s", 1_500_000),
                                         ("0.1234567", 123_456), ("1e3", nil), ("0x10", nil), ("1:60", nil), ("", nil), ("abc", nil),
                                         (" 1", nil), ("inf", nil), ("1:2:3:4", nil)]
        for (text, want) in cases { XCTAssertEqual(parseTime(text), want, "\"\(text)\"") }
    }

    /// The run's duration (progress total and ETA) is the trimmed one, in the one place the
    /// pipeline reports it (TranscodeOptions.onFrame, which the terminal line and batch use).
    func testProgressTotalIsTheTrimmedDuration() throws {
        FilterMedia.install(FFmpegFilterMedia())
        let src = try makeTrimSource()
        for (trim, want) in [(TrimRange(start: 1_000_000, end: .duration(2_000_000)), 2.0), (TrimRange(start: 4_500_000), 1.5),
                             (TrimRange(start: 500_000, end: .to(1_500_000)), 1.0)] {
            var options = TranscodeOptions(input: src.path, output: scratch("p.mp4").path, preset: try Preset.load("identity"))
            options.overwrite = true
            options.encoder.speed = "ultrafast"
            options.encoder.trim = trim
            let totals = Locked<[Double?]>([])
            options.onFrame = { p in totals.withLock { $0.append(p.total) } }
            _ = try Transcoder.run(options)
            let seen = totals.withLock { $0 }
            XCTAssertFalse(seen.isEmpty)
            XCTAssertTrue(seen.allSatisfy { abs(($0 ?? -1) - want) < 0.001 }, "\(trim.description): totals \(Set(seen.map { $0 ?? -1 })), want \(want)")
        }
    }

    // MARK: Batch

    /// Manifest columns (CSV: start and duration; JSON: start and to) over the batch flags.
    func testBatchManifestColumnsAndFlags() throws {
        let src = try makeTrimSource("a.mp4", seconds: 4)
        try FileManager.default.copyItem(at: src, to: scratch("b.mp4"))
        let csv = scratch("jobs.csv")
        try "input,output,start,duration\na.mp4,out/a.mkv,1.2,1\nb.mp4,out/b.mkv,,\n".write(to: csv, atomically: true, encoding: .utf8)
        var r = try batch(["--manifest", csv.path, "--ss", "2", "-to", "2.5", "--speed", "ultrafast", "--jobs", "2"])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertEqual(try Oracle.frameTimes(scratch("out/a.mkv")).count, 25, "the row's start and duration: 1 s")
        XCTAssertEqual(try Oracle.frameTimes(scratch("out/b.mkv")).count, 13, "the flags: -ss 2 -to 2.5 (2.00 ... 2.48)")
        let json = scratch("jobs.json")
        try #"[{"input": "a.mp4", "output": "j/a.mp4", "start": "00:00:00.5", "to": 1.5}]"#.write(to: json, atomically: true, encoding: .utf8)
        r = try batch(["--manifest", json.path, "--speed", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertEqual(try Oracle.frameTimes(scratch("j/a.mp4")).count, 25)
        // A bad value names the row.
        try "input,output,start,to\na.mp4,out/c.mkv,2,1\n".write(to: csv, atomically: true, encoding: .utf8)
        r = try batch(["--manifest", csv.path, "--dry-run"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("jobs.csv:2") && r.stderr.contains("to"), r.stderr)
    }
}
