import Foundation
import GPUEncodeKit
import XCTest

// H.264, HEVC and AV1 through the binary, judged by ffprobe and ffmpeg: every codec through a
// filtered preset on both GPU transfer paths (the fused pass hands NV12, the RGBA path yuv420p) and
// through the no-GPU bypass, in the containers that hold it. Clips are tiny (128x96, 10 frames)
// and speeds ultrafast: x265 and SVT-AV1 are slow on two cores.

final class CodecTests: BatchTestCase {
    static let codecs = ["h264", "hevc", "av1"]
    /// How each test encodes: fast, and a crf high enough in quality that the PSNR check means
    /// "the right picture" (each codec's crf is on its own scale).
    static func quality(_ codec: String) -> [String] { ["--codec", codec, "--speed", "ultrafast", "--crf", codec == "av1" ? "12" : "14"] }

    /// A 128x96 clip of 10 frames at 24000/1001 fps (timestamps that are not round numbers),
    /// tagged BT.709 so the bypass has tags to keep; no audio (WebM cannot hold the AAC a clip
    /// would carry).
    func input() throws -> URL {
        let url = scratch("in.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=128x96:rate=24000/1001",
                                         "-frames:v", "10", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                                         "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv", url.path])
        return url
    }

    func videoStream(_ file: URL) throws -> [String: Any] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries",
                                           "stream=codec_name,codec_tag_string,profile,pix_fmt,color_primaries,color_transfer,color_space,color_range", file.path])
        return (json["streams"] as? [[String: Any]])?.first ?? [:]
    }

    func keyframes(_ file: URL) throws -> Int {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "frame=key_frame", file.path])
        return (json["frames"] as? [[String: Any]] ?? []).filter { ($0["key_frame"] as? Int) == 1 }.count
    }

    /// ffmpeg decodes the whole file without a message at -v error.
    func assertDecodesCleanly(_ file: URL, file f: StaticString = #filePath, line: UInt = #line) throws {
        let r = try Oracle.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-f", "null", "-"])
        XCTAssertEqual(r.status, 0, r.summary, file: f, line: line)
        XCTAssertEqual(r.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "\(file.lastPathComponent) decodes with messages", file: f, line: line)
    }

    func assertSameTimes(_ a: [Double], _ b: [Double], _ what: String, file f: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, "\(what): frame count", file: f, line: line)
        // Matroska counts milliseconds: a 1/24000 time is rounded to half a millisecond at most.
        for (x, y) in zip(a, b) where abs(x - y) > 0.0006 {
            XCTFail("\(what): frame at \(x) s is at \(y) s", file: f, line: line)
            return
        }
    }

    /// Every codec, both transfer paths and the bypass, in .mp4 and .mkv (and .webm for AV1):
    /// clean decode, every frame at its input time, the codec and tag (hvc1), BT.709 tags, and
    /// the same picture as lossless H.264 of the same path (PSNR ≥ 40 dB).
    func testEveryCodecOnEveryPathAndContainer() throws {
        let input = try input()
        let inputTimes = try Oracle.frameTimes(input)
        XCTAssertEqual(inputTimes.count, 10)
        let paths: [(name: String, args: [String])] = [
            ("nv12", ["--preset", "sepia"]),                            // the fused single pass writes NV12
            ("yuv420p", ["--preset", "sepia", "--render-path", "rgba"]), // the RGBA path writes planar 4:2:0
            ("bypass", ["--preset", "none"]),                           // decode → encode, no GPU
        ]
        for path in paths {
            let reference = scratch("ref-\(path.name).mkv")
            let r = try gpuencode([input.path, reference.path, "--codec", "h264", "--crf", "0", "--speed", "ultrafast"] + path.args)
            XCTAssertEqual(r.status, 0, r.summary)
            for codec in CodecTests.codecs {
                for ext in codec == "av1" ? ["mp4", "mkv", "webm"] : ["mp4", "mkv"] {
                    let what = "\(codec) \(path.name) .\(ext)"
                    let out = scratch("\(codec)-\(path.name).\(ext)")
                    let run = try gpuencode([input.path, out.path] + CodecTests.quality(codec) + path.args + ["-v"])
                    XCTAssertEqual(run.status, 0, "\(what): \(run.summary)")
                    guard run.status == 0 else { continue }
                    try assertDecodesCleanly(out)
                    assertSameTimes(try Oracle.frameTimes(out), inputTimes, what)
                    let s = try videoStream(out)
                    XCTAssertEqual(s["codec_name"] as? String, codec, what)
                    if codec == "hevc" && ext == "mp4" { XCTAssertEqual(s["codec_tag_string"] as? String, "hvc1", what) }
                    if codec == "av1" && ext == "mp4" { XCTAssertEqual(s["codec_tag_string"] as? String, "av01", what) }
                    XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p", what)
                    for key in ["color_primaries", "color_transfer", "color_space"] { XCTAssertEqual(s[key] as? String, "bt709", "\(what): \(key)") }
                    XCTAssertEqual(s["color_range"] as? String, "tv", what)
                    let psnr = try Oracle.psnr(out, reference)
                    XCTAssertGreaterThanOrEqual(psnr, 40, "\(what): PSNR against lossless H.264 of the same path")
                    // libx265 and libsvtav1 take planar frames only: the fused pass's NV12 is converted for them.
                    if path.name == "nv12" && codec != "h264" {
                        XCTAssertTrue(run.stderr.contains("nv12 frames converted to yuv420p"), "\(what): \(run.stderr)")
                    }
                }
            }
        }
    }

    /// HEVC is tagged hvc1 in every MP4-family container (QuickTime and Safari refuse hev1);
    /// .m4v, which FFmpeg's ipod muxer cannot hold HEVC in, is written as MP4.
    func testHEVCIsTaggedHvc1InMP4MOVAndM4V() throws {
        let input = try input()
        for ext in ["mov", "m4v"] {
            let out = scratch("h.\(ext)")
            let r = try gpuencode([input.path, out.path, "--preset", "sepia"] + CodecTests.quality("hevc"))
            XCTAssertEqual(r.status, 0, r.summary)
            XCTAssertEqual(try videoStream(out)["codec_tag_string"] as? String, "hvc1", ext)
            XCTAssertEqual(try videoStream(out)["profile"] as? String, "Main", ext)
            try assertDecodesCleanly(out)
        }
    }

    /// libx265 gives encodes of one or two frames a decode time read from uninitialised memory, so
    /// the MP4 muxer refused their packets ("pts/dts pair unsupported", exit 74) in 5 of 6 runs of
    /// a 2-frame clip. Every run now writes a file whose packets' DTS increase and never pass their
    /// PTS (ffprobe). Heap contents decide the old failure, so several runs of each length.
    func testHEVCOfOneAndTwoFramesIntoMP4() throws {
        for frames in [1, 2] {
            let clip = scratch("short-\(frames).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=128x96:rate=25",
                                             "-frames:v", String(frames), "-c:v", "libx265", "-x265-params", "log-level=none", clip.path])
            for run in 0..<4 {
                let out = scratch("short-\(frames)-\(run).mp4")
                let r = try gpuencode([clip.path, out.path, "--preset", "sepia", "--codec", "hevc"])
                XCTAssertEqual(r.status, 0, "\(frames) frames, run \(run): \(r.summary)")
                let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "packet=pts,dts", out.path])
                let packets = (json["packets"] as? [[String: Any]] ?? []).compactMap { p -> (Int, Int)? in
                    guard let pts = (p["pts"] as? NSNumber)?.intValue, let dts = (p["dts"] as? NSNumber)?.intValue else { return nil }
                    return (pts, dts)
                }
                XCTAssertEqual(packets.count, frames)
                for (i, p) in packets.enumerated() {
                    XCTAssertLessThanOrEqual(p.1, p.0, "packet \(i): dts after pts \(packets)")
                    if i > 0 { XCTAssertGreaterThan(p.1, packets[i - 1].1, "dts not increasing \(packets)") }
                }
            }
        }
    }

    /// An impossible pairing is one line and exit 64 before any work: the input is never opened
    /// (a missing input would be 66) and nothing is written.
    func testImpossiblePairingsAreUsageErrorsBeforeTheInputIsOpened() throws {
        let dir = scratch("out")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let missing = scratch("no-such-input.mp4").path
        for (codec, ext) in [("h264", "webm"), ("hevc", "webm"), ("av1", "mov")] {
            let out = dir.appendingPathComponent("o.\(ext)").path
            let r = try gpuencode([missing, out, "--codec", codec])
            assertCleanFailure(r, exitCodes: [ExitCode.usage], mentioning: ["o.\(ext)", codec == "h264" ? "H.264" : codec == "hevc" ? "HEVC" : "AV1"], outputDirectory: dir)
        }
        // -c:v takes encoder names.
        assertCleanFailure(try gpuencode([missing, dir.appendingPathComponent("c.webm").path, "-c:v", "libx265"]), exitCodes: [ExitCode.usage], mentioning: ["HEVC"], outputDirectory: dir)
        // A codec from the preset counts the same.
        let preset = scratch("hevc.json")
        try #"{"version": 2, "name": "h", "encode": {"codec": "hevc"}, "filters": []}"#.write(to: preset, atomically: true, encoding: .utf8)
        assertCleanFailure(try gpuencode([missing, dir.appendingPathComponent("p.webm").path, "--preset", preset.path]),
                           exitCodes: [ExitCode.usage], mentioning: ["HEVC"], outputDirectory: dir)
    }

    /// With no codec named, the container chooses, as in ffmpeg: .webm is AV1 (and its audio Opus,
    /// AAC being re-encoded), every other container H.264.
    func testWebMWithoutACodecIsAV1WithOpus() throws {
        let input = scratch("aac.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=128x96:rate=25",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "0.4",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", input.path])
        let out = scratch("default.webm")
        let r = try gpuencode([input.path, out.path, "--preset", "sepia", "--speed", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try Oracle.ffprobeJSON(["-show_entries", "stream=codec_name", out.path])
        XCTAssertEqual((json["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec_name"] as? String }, ["av1", "opus"])
        XCTAssertTrue(r.stderr.contains("re-encoded to Opus"), r.stderr)
        try assertDecodesCleanly(out)
        let mkv = scratch("default.mkv")
        XCTAssertEqual(try gpuencode([input.path, mkv.path, "--preset", "sepia", "--speed", "ultrafast"]).status, 0)
        XCTAssertEqual(try videoStream(mkv)["codec_name"] as? String, "h264")
    }

    /// Settings a codec does not take: 64 on the command line, 67 from a preset (named).
    func testSettingsTheCodecDoesNotTake() throws {
        let input = try input()
        let dir = scratch("out")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let o = dir.appendingPathComponent("o.mkv").path
        for (args, culprit) in [(["--codec", "av1", "--crf", "0"], "--crf"), (["--codec", "av1", "--crf", "20.5"], "--crf"),
                                (["--codec", "hevc", "--crf", "52"], "--crf"), (["--crf", "63"], "--crf"), (["--crf", "64"], "--crf"),
                                (["--codec", "hevc", "--tune", "film"], "--tune"), (["--codec", "av1", "--tune", "psnr"], "--tune"),
                                (["--codec", "hevc", "--profile", "high"], "--profile"), (["--codec", "av1", "--profile", "baseline"], "--profile"),
                                (["--x265-params", "keyint=5"], "--x265-params"), (["--codec", "av1", "--x264-params", "keyint=5"], "--x264-params"),
                                (["--codec", "hevc", "--x265-params", "keyint"], "--x265-params"), (["--codec", "vp9"], "--codec"),
                                (["--speed", "warp"], "--speed"), (["--x264-preset", "warp"], "--x264-preset"),
                                (["--speed", "fast", "--x264-preset", "fast"], "--x264-preset"), (["--encoder", "libx265"], "--encoder"),
                                (["-c:v", "h264_nvenc", "--encoder", "software"], "--encoder")] {
            let r = try gpuencode([input.path, o] + args)
            assertCleanFailure(r, exitCodes: [ExitCode.usage], mentioning: [culprit], outputDirectory: dir)
        }
        // A preset's crf is checked against the widest scale when read, and against the codec when
        // the run knows it: crf 0 (lossless H.264) is no AV1 crf.
        let preset = scratch("lossless.json")
        try #"{"version": 2, "name": "l", "encode": {"crf": 0}, "filters": []}"#.write(to: preset, atomically: true, encoding: .utf8)
        assertCleanFailure(try gpuencode([input.path, o, "--preset", preset.path, "--codec", "av1"]), exitCodes: [ExitCode.badPreset],
                           mentioning: [preset.path, "encode.crf"], outputDirectory: dir)
        let bad = scratch("bad.json")
        try #"{"version": 2, "name": "b", "encode": {"codec": "av1", "tune": "film"}, "filters": []}"#.write(to: bad, atomically: true, encoding: .utf8)
        assertCleanFailure(try gpuencode([input.path, o, "--preset", bad.path]), exitCodes: [ExitCode.badPreset], mentioning: ["encode.tune"], outputDirectory: dir)
        let validate = try gpuencode(["validate", bad.path])
        XCTAssertEqual(validate.status, ExitCode.badPreset, validate.summary)
        XCTAssertTrue(validate.stdout.contains("encode.tune"), validate.stdout)
        // The flag wins over the preset's crf, so the same preset runs with a crf the codec takes.
        XCTAssertEqual(try gpuencode([input.path, o, "--preset", preset.path, "--codec", "av1", "--crf", "40", "--speed", "ultrafast"]).status, 0)
    }

    /// Each encoder's own options reach it: keyint=3 in its params gives a keyframe every 3 frames
    /// at most (10 frames: at least 4), where its default GOP gives one.
    func testParamsReachTheEncoder() throws {
        let input = try input()
        for (codec, flag) in [("h264", "--x264-params"), ("hevc", "--x265-params"), ("av1", "--svtav1-params")] {
            let plain = scratch("\(codec)-plain.mkv")
            XCTAssertEqual(try gpuencode([input.path, plain.path] + CodecTests.quality(codec)).status, 0)
            XCTAssertEqual(try keyframes(plain), 1, "\(codec) default GOP")
            let short = scratch("\(codec)-short.mkv")
            let r = try gpuencode([input.path, short.path, flag, "keyint=3"] + CodecTests.quality(codec))
            XCTAssertEqual(r.status, 0, r.summary)
            XCTAssertGreaterThanOrEqual(try keyframes(short), 4, "\(flag) keyint=3 reached \(codec)")
        }
        // --keyint is the codec-neutral way.
        let gop = scratch("hevc-gop.mp4")
        XCTAssertEqual(try gpuencode([input.path, gop.path, "--keyint", "3"] + CodecTests.quality("hevc")).status, 0)
        XCTAssertGreaterThanOrEqual(try keyframes(gop), 4)
    }

    /// A preset can choose the codec and speed; a flag still wins. A version 1 preset's
    /// x264Preset is read as speed.
    func testPresetCodecAndLegacyX264Preset() throws {
        let input = try input()
        let preset = scratch("hevc.json")
        try #"{"version": 2, "name": "h", "encode": {"codec": "hevc", "speed": "ultrafast", "crf": 20}, "filters": [{"filter": "sepia"}]}"#
            .write(to: preset, atomically: true, encoding: .utf8)
        let out = scratch("p.mp4")
        let r = try gpuencode([input.path, out.path, "--preset", preset.path, "-v"])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertTrue(r.stderr.contains("encoder: libx265 (speed ultrafast, crf 20)"), r.stderr)
        XCTAssertEqual(try videoStream(out)["codec_name"] as? String, "hevc")
        let flag = scratch("f.mkv")
        XCTAssertEqual(try gpuencode([input.path, flag.path, "--preset", preset.path, "-c:v", "libsvtav1"]).status, 0)
        XCTAssertEqual(try videoStream(flag)["codec_name"] as? String, "av1")

        let old = scratch("old.json")
        try #"{"version": 1, "name": "o", "encode": {"x264Preset": "ultrafast"}, "filters": [{"filter": "sepia"}]}"#
            .write(to: old, atomically: true, encoding: .utf8)
        let legacy = scratch("legacy.mp4")
        let l = try gpuencode([input.path, legacy.path, "--preset", old.path, "-v"])
        XCTAssertEqual(l.status, 0, l.summary)
        XCTAssertTrue(l.stderr.contains("encoder: libx264 (speed ultrafast, crf 23)"), l.stderr)
        XCTAssertTrue(try Oracle.runChecked("strings", [legacy.path]).stdout.contains("cabac=0"), "x264 ran ultrafast")
        // Speeds map per encoder: SVT-AV1 gets a preset number.
        let av1 = try gpuencode([input.path, scratch("a.mkv").path, "--codec", "av1", "--speed", "veryfast", "-v"])
        XCTAssertEqual(av1.status, 0, av1.summary)
        XCTAssertTrue(av1.stderr.contains("encoder: libsvtav1 (speed veryfast = preset 11, crf 35)"), av1.stderr)
    }

    /// The encoders that print to stderr themselves (x265, SVT-AV1) stay quiet: a run prints
    /// nothing, and a failure stays one line.
    func testX265AndSVTAV1PrintNothingOfTheirOwn() throws {
        let input = try input()
        for codec in ["hevc", "av1"] {
            // -q: no final "wrote" line either, so any line is the encoder's own.
            let r = try gpuencode([input.path, scratch("q-\(codec).mkv").path, "-q"] + CodecTests.quality(codec))
            XCTAssertEqual(r.status, 0, r.summary)
            XCTAssertEqual(r.stderrLines, [], codec)
        }
    }

    /// x265 threads as it does under the ffmpeg CLI: the frame-thread count and pool it reports for
    /// gpuencode's run equal those of `ffmpeg -c:v libx265` on the same clip and machine. (Forced to
    /// one frame thread, HEVC ran at half ffmpeg's speed on 16 cores; on two cores both choose one.)
    func testX265ChoosesItsThreadsAsUnderFFmpeg() throws {
        let input = try input()
        func threading(_ stderr: String) -> [String] {
            stderr.split(separator: "\n").map(String.init).filter { $0.contains("frame threads") || $0.contains("Thread pool") }
        }
        let r = try gpuencode([input.path, scratch("t.mp4").path, "--codec", "hevc", "--speed", "ultrafast", "--x265-params", "log-level=info"])
        XCTAssertEqual(r.status, 0, r.summary)
        let f = try Oracle.run("ffmpeg", ["-nostdin", "-y", "-i", input.path, "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                                          scratch("f.mp4").path])
        XCTAssertEqual(f.status, 0, f.stderr)
        XCTAssertFalse(threading(f.stderr).isEmpty, f.stderr)
        XCTAssertEqual(threading(r.stderr), threading(f.stderr))
    }

    /// `batch --codec hevc` and a manifest's codec column; a row the codec cannot take stops the
    /// batch before anything runs; changing the codec redoes a job, an unchanged one is skipped.
    func testBatchCodecFlagAndManifestColumn() throws {
        let dir = try clips(["a.mp4", "b.mp4", "c.mp4"], in: "in", seconds: 0.2)
        let out = scratch("out")
        let report = scratch("r.json")
        let speed = ["--speed", "ultrafast", "--progress", "none"]
        let first = try batch([dir.path, "--out-dir", out.path, "--codec", "hevc", "--report", report.path] + speed)
        XCTAssertEqual(first.status, 0, first.summary)
        for name in ["a", "b", "c"] {
            let file = out.appendingPathComponent("\(name).mp4")
            XCTAssertEqual(try videoStream(file)["codec_name"] as? String, "hevc", name)
            XCTAssertEqual(try videoStream(file)["codec_tag_string"] as? String, "hvc1", name)
        }
        let again = try batch([dir.path, "--out-dir", out.path, "--codec", "hevc", "--report", report.path] + speed)
        XCTAssertEqual(again.status, 0, again.summary)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "skipped", "b.mp4": "skipped", "c.mp4": "skipped"])
        let changed = try batch([dir.path, "--out-dir", out.path, "--codec", "h264", "--report", report.path] + speed)
        XCTAssertEqual(changed.status, 0, changed.summary)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "ok", "b.mp4": "ok", "c.mp4": "ok"])
        XCTAssertEqual(jobs(try readJSON(report)).first?["reason"] as? String, "encoder settings changed")

        // Manifest: a column per setting, the flag as the default for rows without one.
        let manifest = dir.appendingPathComponent("jobs.csv")
        try "input,output,codec,crf,x265_params,speed\na.mp4,m/a.mkv,av1,30,,\nb.mp4,m/b.mp4,hevc,,keyint=2,\nc.mp4,m/c.mkv,,,,\n"
            .write(to: manifest, atomically: true, encoding: .utf8)
        let m = try batch(["--manifest", manifest.path, "--codec", "hevc"] + speed)
        XCTAssertEqual(m.status, 0, m.summary)
        XCTAssertEqual(try videoStream(dir.appendingPathComponent("m/a.mkv"))["codec_name"] as? String, "av1")
        XCTAssertEqual(try videoStream(dir.appendingPathComponent("m/b.mp4"))["codec_name"] as? String, "hevc")
        XCTAssertGreaterThanOrEqual(try keyframes(dir.appendingPathComponent("m/b.mp4")), 2, "the row's x265_params reached x265")
        XCTAssertEqual(try videoStream(dir.appendingPathComponent("m/c.mkv"))["codec_name"] as? String, "hevc")

        // A row whose crf its codec cannot take, or whose output cannot hold its codec: 64, no job run.
        for (row, culprit) in [("a.mp4,x/a.mkv,av1,0,,", "crf"), ("a.mp4,x/a.webm,hevc,,,", "HEVC"), ("a.mp4,x/a.mkv,h264,,keyint=2,", "x265Params")] {
            try "input,output,codec,crf,x265_params,speed\n\(row)\n".write(to: manifest, atomically: true, encoding: .utf8)
            let bad = try batch(["--manifest", manifest.path] + speed)
            assertCleanFailure(bad, exitCodes: [ExitCode.usage], mentioning: ["jobs.csv", culprit])
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("x").path), row)
        }
        // Batch takes the transcode's encode flags now: --encoder and --hwaccel too.
        let nvenc = try batch([dir.path, "--out-dir", scratch("o2").path, "--encoder", "nvenc", "--codec", "av1", "--hwaccel", "none", "--dry-run"])
        XCTAssertEqual(nvenc.status, 0, nvenc.summary)
    }

    /// The settings digest a batch records: the text of the first format for default settings (so
    /// state files written before HEVC and AV1 keep resuming), and a new digest for a change in
    /// any setting a manifest or the command line can give.
    func testSettingsDigestCoversEverySetting() throws {
        XCTAssertEqual(EncoderSettings().digestText, "crf=23.0 preset=medium tune=- bitrate=- keyint=- profile=-")
        let base = try EncodeOverrides.resolve([])
        let samples: [String: String] = [
            "codec": "hevc", "encoder": "auto", "speed": "slow", "crf": "20", "bitrate": "2M", "keyint": "30", "tune": "grain",
            "profile": "main", "x264Params": "bframes=2", "x265Params": "bframes=2", "svtav1Params": "tile-rows=1", "threads": "3",
            "hwaccel": "cuda", "audio": "opus", "audioTracks": "2,1", "audioBitrate": "96k", "stripMetadata": "true",
            "noLocation": "true", "copyts": "true", "metadata": "title=x", "deinterlace": "field", "hdr": "keep", "tonemap": "hable", "targetPeak": "400", "peakDetect": "true", "dolbyVision": "base",
            // issue 14: scale and frame rate
            "width": "640", "height": "360", "size": "640x360", "maxWidth": "640", "maxHeight": "360", "fps": "30",
            // issue 14: trim
            "start": "1.5", "to": "2", "duration": "1",
        ]
        // Settings that do not change what is written.
        let machine: Set<String> = ["threads", "hwaccel"]
        for setting in EncodeSetting.all {
            let value = try XCTUnwrap(samples[setting.key], "a sample value for \(setting.key)")
            var o = EncodeOverrides()
            if setting.key == "x265Params" { o.codec = .hevc }
            if setting.key == "svtav1Params" { o.codec = .av1 }
            XCTAssertNil(setting.apply(value, at: .commandLine, to: &o), setting.key)
            var changed = try EncodeOverrides.resolve([EncodeLayer(o, from: .commandLine)])
            changed.threads = 0
            if machine.contains(setting.key) {
                XCTAssertEqual(changed.digestText, base.digestText, setting.key)
            } else {
                XCTAssertNotEqual(changed.digestText, base.digestText, "\(setting.key) is not in the digest")
            }
        }
    }

    /// --speed and -c:v are the documented spellings; --x264-preset still works and is hidden.
    func testHelpTeachesTheCodecFlags() throws {
        let help = try gpuencode(["--help"])
        XCTAssertEqual(help.status, 0)
        for text in ["--codec", "-c:v", "--speed", "--x265-params", "--svtav1-params", "--audio", "--metadata", "--strip-metadata",
                     "--no-location", "--audio-tracks", "SVT-AV1", "hvc1"] {
            XCTAssertTrue(help.stdout.contains(text), "--help mentions \(text)")
        }
        XCTAssertFalse(help.stdout.contains("--x264-preset"), "the old flag is hidden")
        let batchHelp = try gpuencode(["batch", "--help"])
        for text in ["--codec", "--encoder", "--hwaccel", "--speed"] { XCTAssertTrue(batchHelp.stdout.contains(text), "batch --help mentions \(text)") }
    }
}
