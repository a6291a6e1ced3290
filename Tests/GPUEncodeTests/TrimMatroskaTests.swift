import Foundation
import XCTest

// Trimmed copies of audio into Matroska/WebM (issue 14), which has no edit list. Copied Opus is cut
// at the sample by its own pre-skip (OpusTrimStart); every other codec keeps the packet holding the
// cut whole and says so once. The oracles: ffmpeg's framemd5 for the packets (a contiguous run of the
// source's, bit-identical), ffprobe for the first decoded sample's time and the OpusHead in the
// output's extradata, and the source decoded whole by ffmpeg for the samples (the same decoder).
final class TrimMatroskaTests: BatchTestCase {
    struct AudioPacket {
        let time: Double
        let duration: Double
        let md5: String
    }

    /// The first audio stream's packets as the demuxer gives them (ffprobe: its times, not shifted the
    /// way the ffmpeg CLI shifts a file that starts before 0) with the MD5 of each one's bytes.
    func packets(_ f: URL) throws -> [AudioPacket] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time,data_hash",
                                           "-show_data_hash", "md5", f.path])
        return (json["packets"] as? [[String: Any]] ?? []).compactMap { p in
            guard let t = (p["pts_time"] as? String).flatMap(Double.init), let md5 = p["data_hash"] as? String else { return nil }
            return AudioPacket(time: t, duration: (p["duration_time"] as? String).flatMap(Double.init) ?? 0, md5: md5)
        }
    }

    /// The OpusHead pre-skip in the output's extradata (bytes 10-11, little-endian), as ffprobe shows it.
    func opusPreSkip(_ f: URL) throws -> Int {
        let r = try Oracle.runChecked("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_streams", "-show_data", f.path])
        // extradata hex dump: "00000000: 4f70 7573 4865 6164 0102 3801 80bb 0000  OpusHead..8....."
        guard let row = r.stdout.split(separator: "\n").first(where: { $0.hasPrefix("00000000:") }) else {
            throw OracleError("no extradata in \(f.lastPathComponent)")
        }
        let hex = row.dropFirst(10).prefix(40).replacingOccurrences(of: " ", with: "")
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).map { i -> Int in
            let s = hex.index(hex.startIndex, offsetBy: i)
            return Int(hex[s..<hex.index(s, offsetBy: 2)], radix: 16)!
        }
        return bytes[10] | bytes[11] << 8
    }

    /// The output's decoded audio against the source decoded whole from the cut on: the lag (samples,
    /// searched within ±2 ms) where they match best, the largest difference there, and the SNR.
    func samplesAgainstSource(_ src: URL, _ out: URL, start: Double) throws -> (lag: Int, maxDiff: Double, snr: Double, count: Int) {
        let input = try AudioOracle.Timeline(src)
        let output = try AudioOracle.pcm(out)
        let rate = Double(AudioOracle.rate)
        let first = Int(((start - input.start) * rate).rounded())
        var best = (lag: 0, rms: Double.infinity)
        for lag in -96...96 where first + lag >= 0 && first + lag + output.count <= input.samples.count {
            var sum = 0.0
            for i in 0..<output.count {
                let d = Double(output[i] - input.samples[first + lag + i])
                sum += d * d
            }
            let rms = (sum / Double(output.count)).squareRoot()
            if rms < best.rms { best = (lag, rms) }
        }
        var maxDiff = 0.0, energy = 0.0
        for i in 0..<output.count where best.rms.isFinite {
            let r = Double(input.samples[first + best.lag + i])
            maxDiff = max(maxDiff, abs(Double(output[i]) - r))
            energy += r * r
        }
        let signal = (energy / Double(max(1, output.count))).squareRoot()
        return (best.lag, maxDiff, 20 * log10(signal / max(best.rms, 1e-12)), output.count)
    }

    /// Copied Opus into .mkv and .webm, from Opus in MP4 and in Matroska: the packets are a contiguous
    /// run of the source's, bit-identical; the output's pre-skip is the samples from the first kept
    /// packet to the cut (so the first decoded sample is at 0, within 1 ms); the first video frame is
    /// at its source time less the start; the decoded samples are the source's from the cut on
    /// (aligned to the sample, within 1e-4: the decoder starts 240 ms early and has converged); the
    /// audio lasts -t (DiscardPadding trims the last packet).
    func testCopiedOpusIsCutAtTheSample() throws {
        let mp4 = try makeTrimSource("opus.mp4", seconds: 4, audio: ["-c:a", "libopus"])
        let mkv = try makeTrimSource("opus.mkv", seconds: 4, audio: ["-c:a", "libopus"])
        var cases: [(URL, Double, String)] = [(mp4, 1.234, "mkv"), (mp4, 1.234, "webm"), (mkv, 1.234, "mkv"), (mkv, 2.01, "webm"), (mp4, 0.05, "mkv")]
        // A real WebM whose cut (2.01 s) is 10 ms after a keyframe: the run seeks 240 ms earlier for the pre-roll.
        if let real = try? Paths.media("vp9_opus_180p_bbb_5s.webm") { cases.append((real, 2.01, "mkv")) }
        for (src, start, ext) in cases {
            let out = scratch("o-\(src.deletingPathExtension().lastPathComponent)-\(start).\(ext)")
            try trimTranscode([src.path, out.path, "--ss", String(start), "-t", "1", "--audio", "copy"] + (ext == "webm" ? ["--codec", "av1"] : []))
            let what = "\(src.lastPathComponent) --ss \(start) -> .\(ext)"
            // Packets: a contiguous run of the source's.
            let a = try packets(src), b = try packets(out)
            guard let k = a.firstIndex(where: { $0.md5 == b.first?.md5 }) else { return XCTFail("\(what): the first packet is not a source packet") }
            XCTAssertEqual(b.map(\.md5), a[k..<min(a.count, k + b.count)].map(\.md5), "\(what): packets bit-identical, in order")
            // Pre-skip: from the first kept packet's start to the cut (the source's time base; ms in Matroska).
            let preSkip = try opusPreSkip(out)
            let expected = (start - a[k].time) * 48000
            XCTAssertEqual(Double(preSkip), expected, accuracy: src.pathExtension == "mp4" ? 0.5 : 48, "\(what): pre-skip \(preSkip)")
            XCTAssertTrue(k == 0 || a[k].time <= start - 0.24 + 0.0001,
                          "\(what): the first packet (\(a[k].time) s) starts 240 ms before the cut, or is the source's first")
            // The first decoded sample at 0.
            let firstAudio = try AudioOracle.firstSampleTime(out)
            XCTAssertEqual(firstAudio, 0, accuracy: 0.001, "\(what): first decoded sample at \(firstAudio * 1000) ms")
            // The first video frame at its source time less the start.
            let origin = try Oracle.formatStartTime(src)
            let firstFrame = try Oracle.frameTimes(src).sorted().first { $0 >= max(0, origin) + start - 1e-6 }!
            let video = try Oracle.frameTimes(out).sorted()
            XCTAssertEqual(video.first ?? -1, firstFrame - max(0, origin) - start, accuracy: 0.0011, "\(what): first frame at \((video.first ?? -1) * 1000) ms")
            // The samples: the source's from the cut on.
            let m = try samplesAgainstSource(src, out, start: max(0, origin) + start)
            print("trim-mkv \(what): pre-skip \(preSkip), first sample \(firstAudio * 1000) ms, lag \(m.lag) samples, largest difference \(m.maxDiff), SNR \(m.snr) dB, \(m.count) samples")
            // The source's decoded samples are placed by ffprobe's first frame time: exact for MP4, to
            // the millisecond for Matroska (a WebM's first sample at 6.5 ms reads 7 ms), so ±24 samples there.
            let slack = src.pathExtension == "mp4" ? 1 : 24
            XCTAssertLessThanOrEqual(abs(m.lag), slack, "\(what): decoded samples \(m.lag) samples off the source's")
            XCTAssertLessThanOrEqual(m.maxDiff, 1e-4, "\(what): largest difference to the source's samples \(m.maxDiff) (SNR \(m.snr) dB)")
            XCTAssertEqual(Double(m.count) / 48000, 1, accuracy: 0.001, "\(what): \(m.count) samples for -t 1")
        }
    }

    /// `--copyts` keeps input times: the first decoded sample at the cut's own time (within 1 ms; the
    /// block times are rounded as the decoder's skip is). And Opus from MP4 copied whole into Matroska
    /// starts at 0: its CodecDelay offset is taken in the muxer's 1/1000, not the input's 1/48000
    /// (which put it 305 ms late). A cut to the end keeps the source's end trim.
    func testCopiedOpusWithCopytsAndUntrimmed() throws {
        let src = try makeTrimSource("opus.mp4", seconds: 4, audio: ["-c:a", "libopus"])
        let kept = scratch("copyts.mkv")
        try trimTranscode([src.path, kept.path, "--ss", "1.234", "-t", "1", "--audio", "copy", "--copyts"])
        let first = try AudioOracle.firstSampleTime(kept)
        XCTAssertEqual(first, 1.234, accuracy: 0.001, "--copyts: first decoded sample at \(first) s")
        let video = try Oracle.frameTimes(kept).sorted()
        XCTAssertEqual(video.first ?? -1, 1.24, accuracy: 0.0011, "--copyts: first frame at \(video.first ?? -1) s")
        let whole = scratch("whole.mkv")
        try trimTranscode([src.path, whole.path, "--audio", "copy"])
        let start = try AudioOracle.firstSampleTime(whole)
        XCTAssertEqual(start, 0, accuracy: 0.001, "untrimmed: first decoded sample at \(start * 1000) ms")
        let m = try samplesAgainstSource(src, whole, start: 0)
        XCTAssertEqual(m.lag, 0, "untrimmed: the samples \(m.lag) off")
        XCTAssertEqual(m.maxDiff, 0, "untrimmed: the same packets decode to the same samples")
        print("trim-mkv copyts: first sample \(first) s, first frame \(video.first ?? -1) s; untrimmed: first sample \(start * 1000) ms")
        // To the input's end: the source's own end trim (ffmpeg's Matroska: DiscardPadding on the last
        // packet) stays, so the output has the source's samples after the cut, not one more.
        let mkv = try makeTrimSource("opus.mkv", seconds: 4, audio: ["-c:a", "libopus"])
        let tail = scratch("tail.mkv")
        try trimTranscode([mkv.path, tail.path, "--ss", "3", "--audio", "copy"])
        let total = try AudioOracle.pcm(mkv).count, left = try AudioOracle.pcm(tail).count
        XCTAssertEqual(left, total - 3 * 48000, "to the end: \(left) samples, the source has \(total - 3 * 48000) after 3 s")
    }

    /// Any other codec copied into Matroska keeps the packet holding the cut whole: one warning that
    /// says how far before the cut it starts (the part of that packet before the cut, from ffprobe's
    /// packet times), the video moved by as much (in sync), none where the cut is on a packet
    /// boundary, none into MP4 (its edit list trims).
    func testOtherCopiedAudioWarnsWhereTheCutIsInsideAPacket() throws {
        let src = try makeTrimSource("aac.mp4", seconds: 4, audio: ["-c:a", "aac"])
        let a = try packets(src)
        for (start, ext) in [(1.234, "mkv"), (1.28, "mkv"), (1.234, "mp4")] {
            let out = scratch("aac-\(start).\(ext)")
            let r = try trimTranscode([src.path, out.path, "--ss", String(start), "-t", "1", "--audio", "copy"])
            let warnings = r.stderrLines.filter { $0.contains("Matroska cannot trim inside an audio packet") }
            let holder = a.last { $0.time <= start + 1e-9 }!
            let offset = (start - holder.time) * 1000
            let what = "aac --ss \(start) -> .\(ext)"
            if ext == "mkv" && offset > 0.05 {
                XCTAssertEqual(warnings.count, 1, "\(what): one warning: \(r.stderr)")
                let said = warnings.first.flatMap { w in w.range(of: "starts ").map { Double(w[$0.upperBound...].prefix { $0.isNumber || $0 == "." }) } } ?? nil
                XCTAssertEqual(said ?? -1, offset, accuracy: 0.051, "\(what): the warning says \(said ?? -1) ms, the packet starts \(offset) ms before the cut")
                XCTAssertTrue(warnings[0].contains("audio stream #1 (aac)") && warnings[0].contains("--audio opus"), warnings[0])
                // In sync: the video moves by the same offset (Matroska starts the file with that packet).
                let firstFrame = try Oracle.frameTimes(src).sorted().first { $0 >= start - 1e-6 }!
                let video = try Oracle.frameTimes(out).sorted()
                XCTAssertEqual((video.first ?? -1) - (firstFrame - start), offset / 1000, accuracy: 0.0011,
                               "\(what): the video moved \(((video.first ?? -1) - (firstFrame - start)) * 1000) ms, the audio starts \(offset) ms early")
                print("trim-mkv \(what): warned \(said ?? -1) ms (packet \(offset) ms before the cut)")
            } else {
                XCTAssertEqual(warnings.count, 0, "\(what) (packet \(offset) ms before the cut): no warning: \(r.stderr)")
            }
        }
    }

    /// Batch: a manifest's start column gives the same cuts (CSV), and the warning per job.
    func testBatchManifestStartColumn() throws {
        _ = try makeTrimSource("a.mp4", seconds: 4, audio: ["-c:a", "libopus"])
        _ = try makeTrimSource("b.mp4", seconds: 4, audio: ["-c:a", "aac"])
        let csv = scratch("jobs.csv")
        try "input,output,start,duration,audio\na.mp4,out/a.webm,1.234,1,copy\nb.mp4,out/b.mkv,1.234,1,copy\n".write(to: csv, atomically: true, encoding: .utf8)
        let r = try batch(["--manifest", csv.path, "--speed", "ultrafast", "--codec", "av1", "--jobs", "1"])
        // b.mkv is AV1 too (Matroska holds it), so one --codec serves both rows.
        XCTAssertEqual(r.status, 0, r.summary)
        let opus = scratch("out/a.webm")
        let first = try AudioOracle.firstSampleTime(opus)
        XCTAssertEqual(first, 0, accuracy: 0.001, "batch opus: first decoded sample at \(first * 1000) ms")
        let m = try samplesAgainstSource(scratch("a.mp4"), opus, start: 1.234)
        XCTAssertLessThanOrEqual(abs(m.lag), 1, "batch opus: \(m.lag) samples off")
        XCTAssertLessThanOrEqual(m.maxDiff, 1e-4, "batch opus: largest difference \(m.maxDiff)")
        let warnings = r.stderrLines.filter { $0.contains("Matroska cannot trim inside an audio packet") }
        XCTAssertEqual(warnings.count, 1, "batch: the AAC row warns once, the Opus row not: \(r.stderr)")
        XCTAssertTrue(warnings.first?.contains("b.mkv") ?? false, warnings.joined())
        print("trim-mkv batch: opus lag \(m.lag), largest difference \(m.maxDiff), SNR \(m.snr) dB; warning: \(warnings.first ?? "-")")
    }
}
