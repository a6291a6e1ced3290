import Foundation
import GPUEncodeBatch
import GPUEncodeKit
import XCTest

// Interlaced video (--deinterlace), scored against ground truth: progressive 50p material is
// interlaced with the ffmpeg CLI (tinterlace: frame k's top field from original 2k, its bottom
// field from 2k+1; flagged tff with x264's interlaced coding, lossless), deinterlaced by gpuencode
// and by ffmpeg's bwdif and yadif, and each compared by PSNR with the original progressive frames:
// at the frame rate with the original at the top field's time (2k), at the field rate with all of
// them. Colour is BT.709 throughout, so gpuencode's colour conversion changes no value by matrix.

/// Raw yuv420p frames decoded by the ffmpeg CLI, and PSNR between two sets, frame i against frame i.
struct RawFrames {
    let width: Int
    let height: Int
    let bytes: [UInt8]
    var frameSize: Int { width * height * 3 / 2 }
    var count: Int { bytes.count / frameSize }

    init(_ file: URL, width: Int, height: Int, filter: String? = nil) throws {
        self.width = width
        self.height = height
        var arguments = ["-nostdin", "-v", "error", "-i", file.path, "-vsync", "passthrough"]
        if let filter { arguments += ["-vf", filter] }
        bytes = [UInt8](try Oracle.runCheckedData("ffmpeg", arguments + ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]))
    }

    private init(width: Int, height: Int, bytes: [UInt8]) {
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// Every `step`th frame from `start`.
    func frames(from start: Int, step: Int) -> RawFrames {
        var out: [UInt8] = []
        for i in stride(from: start, to: count, by: step) { out += bytes[(i * frameSize)..<((i + 1) * frameSize)] }
        return RawFrames(width: width, height: height, bytes: out)
    }

    /// PSNR of luma and of all samples (Y, Cb, Cr together) against `reference`, over the first
    /// min(count) frames.
    func psnr(against reference: RawFrames) -> (y: Double, all: Double) {
        let n = min(count, reference.count)
        var ySum = 0.0, allSum = 0.0
        let luma = width * height
        for f in 0..<n {
            let base = f * frameSize
            for i in 0..<frameSize {
                let d = Double(Int(bytes[base + i]) - Int(reference.bytes[base + i]))
                allSum += d * d
                if i < luma { ySum += d * d }
            }
        }
        func db(_ sum: Double, _ samples: Int) -> Double { sum == 0 ? 99 : 10 * log10(255 * 255 / (sum / Double(samples))) }
        return (db(ySum, n * luma), db(allSum, n * frameSize))
    }

    /// Samples that differ from `other`'s.
    func differences(from other: RawFrames) -> Int {
        zip(bytes, other.bytes).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) }
    }
}

final class InterlaceTests: GPUEncodeTestCase {
    static let bt709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]

    /// Progressive 50p frames (lossless, BT.709 Y'CbCr) from lavfi `source` or a file's arguments.
    func progressive(_ name: String, input: [String], frames: Int, filter: String = "") throws -> URL {
        let out = scratch("\(name)-50p.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + input + ["-an", "-frames:v", String(frames),
                              "-vf", filter + "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p", "-c:v", "ffv1"] + InterlaceTests.bt709 + [out.path])
        return out
    }

    /// `source` interlaced at 25 frames a second, flagged and coded interlaced, losslessly:
    /// top field first (the top field from frame 2k) or bottom field first (the bottom one from 2k).
    func interlace(_ source: URL, topFirst: Bool = true, container: String = "mp4") throws -> URL {
        let out = scratch("\(source.deletingPathExtension().lastPathComponent)-\(topFirst ? "tff" : "bff").\(container)")
        let filter = topFirst ? "tinterlace=mode=interleave_top,setfield=tff" : "tinterlace=mode=interleave_bottom,setfield=bff"
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source.path, "-vf", filter, "-c:v", "libx264", "-qp", "0",
                                         "-flags", "+ilme+ildct", "-x264-params", topFirst ? "tff=1" : "bff=1"] + InterlaceTests.bt709 + [out.path])
        return out
    }

    static func fieldOrder(_ file: URL) throws -> String {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "stream=field_order", file.path])
        return ((json["streams"] as? [[String: Any]])?.first?["field_order"] as? String) ?? "unknown"
    }

    /// Each decoded frame's interlaced_frame and top_field_first.
    func frameFlags(_ file: URL) throws -> [(interlaced: Bool, topFirst: Bool)] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "frame=interlaced_frame,top_field_first", file.path])
        return (json["frames"] as? [[String: Any]] ?? []).map {
            (($0["interlaced_frame"] as? NSNumber)?.intValue == 1, ($0["top_field_first"] as? NSNumber)?.intValue == 1)
        }
    }

    func run(_ arguments: [String], environment: [String: String]? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try gpuencode(arguments + ["-y"], environment: environment)
        XCTAssertEqual(r.status, 0, r.summary, file: file, line: line)
    }

    /// The acceptance: gpuencode's PSNR to the original within 1 dB of bwdif's, or better, at the
    /// frame rate (auto) and the field rate, on a synthetic pattern and on real footage. bwdif's
    /// output taken through gpuencode's own colour path (identity preset) must be the same picture
    /// as gpuencode's: the deinterlacer is bwdif's arithmetic.
    func testDeinterlacingScoresLikeBwdifAgainstTheProgressiveOriginal() throws {
        var cases: [(String, [String], Int, Int, String)] = [("testsrc2", ["-f", "lavfi", "-i", "testsrc2=size=352x288:rate=50"], 352, 288, "")]
        if let bbb = try? Paths.media("h264_aac51_720p_bbb_5s.mp4") {
            // Real footage: its 25p frames taken as 50p (every frame a new moment), cropped.
            cases.append(("bbb", ["-i", bbb.path], 480, 272, "setpts=N/50/TB,crop=480:272:400:200,"))
        }
        var table: [String] = []
        for (name, input, w, h, filter) in cases {
            let original = try RawFrames(try progressive(name, input: input, frames: 24, filter: filter), width: w, height: h)
            let interlaced = try interlace(try progressive(name, input: input, frames: 24, filter: filter))
            let woven = try RawFrames(interlaced, width: w, height: h)
            for (mode, rate, reference) in [("auto", "send_frame", original.frames(from: 0, step: 2)), ("field", "send_field", original)] {
                let out = scratch("\(name)-\(mode).mkv")
                try run([interlaced.path, out.path, "--deinterlace", mode, "--crf", "0"])
                let ours = try RawFrames(out, width: w, height: h)
                XCTAssertEqual(ours.count, reference.count, "\(name) \(mode): one frame per \(mode == "field" ? "field" : "frame")")
                let bwdif = try RawFrames(interlaced, width: w, height: h, filter: "bwdif=mode=\(rate):parity=auto:deint=all")
                let yadif = try RawFrames(interlaced, width: w, height: h, filter: "yadif=mode=\(rate):parity=auto:deint=all")
                let g = ours.psnr(against: reference), b = bwdif.psnr(against: reference), y = yadif.psnr(against: reference)
                // No deinterlacing: the woven frames against the originals at their top fields' times.
                let none = woven.psnr(against: original.frames(from: 0, step: 2))
                let line = String(format: "%@ %@: gpuencode Y %.2f / all %.2f dB, bwdif %.2f / %.2f, yadif %.2f / %.2f, woven %.2f / %.2f",
                                  name, mode, g.y, g.all, b.y, b.all, y.y, y.all, none.y, none.all)
                table.append(line)
                XCTAssertGreaterThanOrEqual(g.y, b.y - 1, line)
                XCTAssertGreaterThanOrEqual(g.all, b.all - 1, line)
                XCTAssertGreaterThan(g.y, none.y + 2, "deinterlacing beats the woven fields: \(line)")

                // bwdif's frames through gpuencode's colour path: the same samples.
                let bwdifFile = scratch("\(name)-\(mode)-bwdif.mkv"), bwdifOut = scratch("\(name)-\(mode)-bwdif-gpu.mkv")
                try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", interlaced.path, "-vf",
                                                 "bwdif=mode=\(rate):parity=auto:deint=all,setfield=prog", "-c:v", "libx264", "-qp", "0"]
                                      + InterlaceTests.bt709 + [bwdifFile.path])
                try run([bwdifFile.path, bwdifOut.path, "--crf", "0"])
                let same = try RawFrames(bwdifOut, width: w, height: h)
                let p = ours.psnr(against: same)
                XCTAssertGreaterThanOrEqual(p.all, 50, "\(name) \(mode): \(ours.differences(from: same)) of \(ours.bytes.count) samples differ from bwdif's (\(p.all) dB)")
            }
        }
        print(table.joined(separator: "\n"))
    }

    /// 10-bit interlaced video (deep planes on the GPU: R16UI/RGBA16UI): the deinterlacer works on the
    /// 10-bit code values, so its output equals bwdif's 10-bit output taken through the same colour
    /// path, and scores like bwdif against the progressive original.
    func testTenBitInterlacedVideo() throws {
        let (w, h) = (320, 240)
        let source = scratch("deep-50p.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50", "-frames:v", "16",
                                         "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p10le", "-c:v", "ffv1"] + InterlaceTests.bt709 + [source.path])
        let interlaced = scratch("deep-tff.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source.path, "-vf", "tinterlace=mode=interleave_top,setfield=tff",
                                         "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p10le", "-flags", "+ilme+ildct", "-x264-params", "tff=1"]
                              + InterlaceTests.bt709 + [interlaced.path])
        let bwdif10 = scratch("deep-bwdif.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", interlaced.path, "-vf", "bwdif=mode=send_frame:parity=auto:deint=all,setfield=prog",
                                         "-c:v", "ffv1", "-pix_fmt", "yuv420p10le"] + InterlaceTests.bt709 + [bwdif10.path])
        for transfer in ["pbo", "client"] {
            let ours = scratch("deep-ours-\(transfer).mkv"), theirs = scratch("deep-bwdif-gpu-\(transfer).mkv")
            try run([interlaced.path, ours.path, "--crf", "0"], environment: ["GPUENCODE_TRANSFER": transfer])
            try run([bwdif10.path, theirs.path, "--crf", "0"], environment: ["GPUENCODE_TRANSFER": transfer])
            XCTAssertEqual(try InterlaceTests.fieldOrder(ours), "progressive")
            let a = try RawFrames(ours, width: w, height: h), b = try RawFrames(theirs, width: w, height: h)
            XCTAssertEqual(a.count, 8)
            let same = a.psnr(against: b)
            XCTAssertGreaterThanOrEqual(same.all, 50, "\(transfer): \(a.differences(from: b)) samples differ from bwdif's 10-bit output (\(same.all) dB)")
            let original = try RawFrames(source, width: w, height: h).frames(from: 0, step: 2)
            let g = a.psnr(against: original), r = b.psnr(against: original)
            XCTAssertGreaterThanOrEqual(g.y, r.y - 1, "10-bit \(transfer): gpuencode Y \(g.y) dB, bwdif \(r.y) dB")
        }
    }

    /// Bottom field first: detected from the stream, deinterlaced at the bottom field's time;
    /// --deinterlace off keeps bb.
    func testBottomFieldFirst() throws {
        let source = try progressive("bff", input: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50"], frames: 12)
        let original = try RawFrames(source, width: 320, height: 240)
        let interlaced = try interlace(source, topFirst: false)
        XCTAssertEqual(try InterlaceTests.fieldOrder(interlaced), "bb")
        let out = scratch("bff.mp4")
        try run([interlaced.path, out.path, "--crf", "0"])
        XCTAssertEqual(try InterlaceTests.fieldOrder(out), "progressive")
        let ours = try RawFrames(out, width: 320, height: 240)
        let bwdif = try RawFrames(interlaced, width: 320, height: 240, filter: "bwdif=mode=send_frame:parity=auto:deint=all")
        let reference = original.frames(from: 0, step: 2)
        let g = ours.psnr(against: reference), b = bwdif.psnr(against: reference)
        XCTAssertGreaterThanOrEqual(g.y, b.y - 1, "bff: gpuencode \(g) dB, bwdif \(b) dB")
        let kept = scratch("bff-off.mkv")
        try run([interlaced.path, kept.path, "--deinterlace", "off"])
        XCTAssertEqual(try InterlaceTests.fieldOrder(kept), "bb")
        XCTAssertTrue(try frameFlags(kept).allSatisfy { $0.interlaced && !$0.topFirst }, "every frame coded interlaced, bottom field first")
    }

    /// Flags, counts and timestamps in MP4 and MKV: auto is progressive at the input's frame times;
    /// field doubles the count with every second frame at its field's time, exact in the stream's
    /// time base; off keeps tt with interlaced coding. Both transfer paths, pipelined and
    /// --deterministic, give the same pictures.
    func testFlagsCountsAndTimestamps() throws {
        let source = try progressive("t", input: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50"], frames: 20)
        for container in ["mp4", "mkv"] {
            let interlaced = try interlace(source, container: container)
            // The ffmpeg CLI writes tb (its word for woven top-field-first frames) into Matroska.
            XCTAssertTrue(["tt", "tb"].contains(try InterlaceTests.fieldOrder(interlaced)), "the fixture is flagged top field first")
            let inTimes = try Oracle.frameTimes(interlaced)
            XCTAssertEqual(inTimes.count, 10)

            let auto = scratch("auto.\(container)")
            try run([interlaced.path, auto.path])
            XCTAssertEqual(try InterlaceTests.fieldOrder(auto), "progressive", container)
            XCTAssertTrue(try frameFlags(auto).allSatisfy { !$0.interlaced }, container)
            XCTAssertEqual(try Oracle.frameTimes(auto), inTimes, "\(container): the input's frame times")

            var pictures: [String: [UInt8]] = [:]
            for transfer in ["pbo", "client"] {
                for deterministic in [false, true] {
                    let field = scratch("field-\(transfer)-\(deterministic).\(container)")
                    try run([interlaced.path, field.path, "--deinterlace", "field"] + (deterministic ? ["--deterministic"] : []),
                            environment: ["GPUENCODE_TRANSFER": transfer])
                    let times = try Oracle.frameTimes(field)
                    XCTAssertEqual(times.count, 20, "\(container) \(transfer): two frames per interlaced frame")
                    for (i, t) in times.enumerated() {
                        XCTAssertEqual(t, inTimes[0] + Double(i) * 0.02, accuracy: 1e-9, "\(container) \(transfer): frame \(i) at its field's time")
                    }
                    XCTAssertEqual(try InterlaceTests.fieldOrder(field), "progressive")
                    pictures["\(transfer) \(deterministic)"] = try RawFrames(field, width: 320, height: 240).bytes
                }
            }
            XCTAssertEqual(Set(pictures.values).count, 1, "\(container): the same pictures through PBO and client memory, pipelined or not")
            if container == "mp4" {
                // The input's time base holds the field times (1/12800: 256 ticks a field), so it is kept.
                let inTick = try Oracle.streams(interlaced).first { $0.codecType == "video" }?.tick
                let outTick = try Oracle.streams(scratch("field-pbo-false.mp4")).first { $0.codecType == "video" }?.tick
                XCTAssertEqual(inTick, outTick)
            }

            let off = scratch("off.\(container)")
            try run([interlaced.path, off.path, "--deinterlace", "off"])
            XCTAssertEqual(try InterlaceTests.fieldOrder(off), "tt", container)
            let flags = try frameFlags(off)
            XCTAssertEqual(flags.count, 10)
            XCTAssertTrue(flags.allSatisfy { $0.interlaced && $0.topFirst }, "\(container): coded interlaced, top field first")
        }
    }

    /// 29.97i in MP4 (time base 1/30000, 1001 ticks a frame): half a frame is no whole tick, so the
    /// field rate counts in 1/60000 and every field lands on a multiple of 1001. And off with HEVC
    /// (no interlaced coding in FFmpeg 5.1's libx265) still tags the container tt.
    func testFieldTimesAtNTSCRateAndHEVCTagging() throws {
        let interlaced = scratch("i2997.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=60000/1001", "-frames:v", "12",
                                         "-vf", "tinterlace=mode=interleave_top,setfield=tff", "-c:v", "libx264", "-flags", "+ildct+ilme",
                                         "-x264-params", "tff=1", interlaced.path])
        let field = scratch("f2997.mp4")
        try run([interlaced.path, field.path, "--deinterlace", "field"])
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "stream=time_base:frame=pts", field.path])
        XCTAssertEqual((json["streams"] as? [[String: Any]])?.first?["time_base"] as? String, "1/60000")
        let pts = (json["frames"] as? [[String: Any]] ?? []).compactMap { ($0["pts"] as? NSNumber)?.int64Value }
        XCTAssertEqual(pts, (0..<24).map { Int64($0) * 1001 }, "12 frames, 24 fields, each at its exact time")

        for container in ["mp4", "mkv"] {
            let hevc = scratch("off-hevc.\(container)")
            try run([interlaced.path, hevc.path, "--deinterlace", "off", "--codec", "hevc", "--speed", "ultrafast"])
            XCTAssertEqual(try InterlaceTests.fieldOrder(hevc), "tt", container)
        }
    }

    /// A progressive input under auto is untouched: the same bytes as with the deinterlacer off
    /// (the code path of every release before it). frame and field deinterlace it anyway, as
    /// bwdif's deint=all: field gives two frames per frame.
    func testProgressiveInput() throws {
        let clip = scratch("p.mp4")
        try Oracle.makeClip(clip, seconds: 0.4, size: "320x240", rate: 25, audio: false)
        XCTAssertEqual(try InterlaceTests.fieldOrder(clip), "progressive")
        for transfer in ["pbo", "client"] {
            let auto = scratch("auto-\(transfer).mp4"), off = scratch("off-\(transfer).mp4")
            try run([clip.path, auto.path], environment: ["GPUENCODE_TRANSFER": transfer])
            try run([clip.path, off.path, "--deinterlace", "off"], environment: ["GPUENCODE_TRANSFER": transfer])
            XCTAssertEqual(try Oracle.sha256(auto), try Oracle.sha256(off), transfer)
        }
        let frame = scratch("frame.mp4"), field = scratch("field.mp4")
        try run([clip.path, frame.path, "--deinterlace", "frame"])
        try run([clip.path, field.path, "--deinterlace", "field"])
        XCTAssertNotEqual(try Oracle.sha256(frame), try Oracle.sha256(scratch("auto-pbo.mp4")), "frame deinterlaces a progressive input too")
        XCTAssertEqual(try Oracle.frameTimes(frame).count, 10)
        XCTAssertEqual(try Oracle.frameTimes(field).count, 20)
    }

    /// --preset none does not touch pixels: interlaced input stays interlaced (tt kept) under auto;
    /// --deinterlace frame adds a GPU stage that deinterlaces. A geometry filter after deinterlacing
    /// sees a progressive picture.
    func testPresetNoneAndGeometryFilters() throws {
        let source = try progressive("n", input: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50"], frames: 8)
        let interlaced = try interlace(source)
        let none = scratch("none.mkv")
        try run([interlaced.path, none.path, "--preset", "none"])
        XCTAssertEqual(try InterlaceTests.fieldOrder(none), "tt")
        XCTAssertTrue(try frameFlags(none).allSatisfy { $0.interlaced && $0.topFirst })
        let forced = scratch("none-frame.mkv")
        try run([interlaced.path, forced.path, "--preset", "none", "--deinterlace", "frame"])
        XCTAssertEqual(try InterlaceTests.fieldOrder(forced), "progressive")
        XCTAssertEqual(try Oracle.frameTimes(forced).count, 4)

        // A preset that turns the picture, with deinterlacing in its encode block.
        let preset = scratch("turn.json")
        try #"{"version": 2, "name": "turn", "filters": [{"filter": "rotate90"}], "encode": {"deinterlace": "field"}}"#
            .write(to: preset, atomically: true, encoding: .utf8)
        let turned = scratch("turned.mp4")
        try run([interlaced.path, turned.path, "--preset", preset.path])
        let stream = try XCTUnwrap(Oracle.streams(turned).first { $0.codecType == "video" })
        XCTAssertEqual(stream.width, 240)
        XCTAssertEqual(try InterlaceTests.fieldOrder(turned), "progressive")
        XCTAssertEqual(try Oracle.frameTimes(turned).count, 8, "the preset's encode.deinterlace field")
        // The flag wins over the preset.
        let flagged = scratch("turned-frame.mp4")
        try run([interlaced.path, flagged.path, "--preset", preset.path, "--deinterlace", "frame"])
        XCTAssertEqual(try Oracle.frameTimes(flagged).count, 4)
    }

    /// A stream that does not say it is interlaced (field_order progressive) whose later frames are
    /// flagged: auto shows the progressive part untouched and deinterlaces from the first flagged
    /// frame on.
    func testFramesFlaggedInAStreamNotTagged() throws {
        let source = try progressive("mix", input: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50"], frames: 40)
        let a = scratch("a.ts"), b = scratch("b.ts"), mix = scratch("mix.ts")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source.path, "-vf", "select='lt(n,10)',setpts=N/25/TB", "-r", "25",
                                         "-c:v", "libx264", "-qp", "0", "-bf", "0"] + InterlaceTests.bt709 + [a.path])
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source.path, "-vf",
                                         "select='gte(n,20)',tinterlace=mode=interleave_top,setfield=tff,setpts=N/25/TB", "-r", "25",
                                         "-c:v", "libx264", "-qp", "0", "-bf", "0", "-flags", "+ildct+ilme", "-x264-params", "tff=1"]
                              + InterlaceTests.bt709 + [b.path])
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", "concat:\(a.path)|\(b.path)", "-c", "copy", mix.path])
        XCTAssertEqual(try InterlaceTests.fieldOrder(mix), "progressive", "the fixture's stream does not say")
        XCTAssertEqual(try frameFlags(mix).map(\.interlaced), Array(repeating: false, count: 10) + Array(repeating: true, count: 10))
        let auto = scratch("auto.mkv"), off = scratch("off.mkv")
        try run([mix.path, auto.path, "--crf", "0"])
        try run([mix.path, off.path, "--crf", "0", "--deinterlace", "off"])
        let ours = try RawFrames(auto, width: 320, height: 240), woven = try RawFrames(off, width: 320, height: 240)
        XCTAssertEqual(ours.count, 20)
        // The output starts at 0 (the timeline's default): the input's times less its start.
        let start = try Oracle.formatStartTime(mix)
        let expected = try Oracle.frameTimes(mix).map { $0 - start }
        XCTAssertEqual(try Oracle.frameTimes(auto).count, expected.count)
        for (got, want) in zip(try Oracle.frameTimes(auto), expected) { XCTAssertEqual(got, want, accuracy: 0.0005) }
        let size = ours.frameSize
        XCTAssertEqual(Array(ours.bytes[0..<(10 * size)]), Array(woven.bytes[0..<(10 * size)]), "the progressive frames untouched")
        let original = try RawFrames(source, width: 320, height: 240).frames(from: 20, step: 2)
        let g = ours.frames(from: 10, step: 1).psnr(against: original), w = woven.frames(from: 10, step: 1).psnr(against: original)
        XCTAssertGreaterThan(g.y, w.y + 2, "deinterlaced from the first flagged frame: \(g.y) dB against the woven \(w.y) dB")
    }

    func testBadValueIsAUsageError() throws {
        let clip = scratch("c.mp4")
        try Oracle.makeClip(clip, seconds: 0.2, audio: false)
        assertCleanFailure(try gpuencode([clip.path, scratch("o.mp4").path, "--deinterlace", "bob"]), exitCodes: [64],
                           mentioning: ["--deinterlace", "bob"], outputDirectory: workDirectory, before: listing(workDirectory))
        let help = try gpuencode(["--help"])
        XCTAssertTrue(help.stdout.contains("--deinterlace"))
    }
}

final class InterlaceBatchTests: BatchTestCase {
    /// Batch: the flag for every job, a manifest column over it.
    func testBatchFlagAndManifest() throws {
        let dir = scratch("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let prog = dir.appendingPathComponent("p.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=50", "-frames:v", "8",
                                         "-pix_fmt", "yuv420p", "-c:v", "ffv1", prog.path])
        for name in ["a", "b"] {
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", prog.path, "-vf", "tinterlace=mode=interleave_top,setfield=tff",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-flags", "+ilme+ildct", "-top", "1",
                                             dir.appendingPathComponent("\(name).mp4").path])
        }
        try FileManager.default.removeItem(at: prog)
        let manifest = scratch("jobs.csv")
        try "input,output,deinterlace\n\(dir.path)/a.mp4,\(scratch("out").path)/a.mkv,off\n\(dir.path)/b.mp4,\(scratch("out").path)/b.mkv,\n"
            .write(to: manifest, atomically: true, encoding: .utf8)
        let r = try batch(["--manifest", manifest.path, "--deinterlace", "field", "--jobs", "2"])
        XCTAssertEqual(r.status, 0, r.summary)
        let a = scratch("out/a.mkv"), b = scratch("out/b.mkv")
        XCTAssertEqual(try InterlaceTests.fieldOrder(a), "tt", "the manifest's off")
        XCTAssertEqual(try Oracle.frameTimes(a).count, 4)
        XCTAssertEqual(try InterlaceTests.fieldOrder(b), "progressive", "the flag's field")
        XCTAssertEqual(try Oracle.frameTimes(b).count, 8)
    }
}
