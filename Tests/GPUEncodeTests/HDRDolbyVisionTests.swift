import Foundation
import XCTest

// Dolby Vision against libplacebo applying the same RPU (ffmpeg 5.1's libplacebo filter applies a
// frame's AV_FRAME_DATA_DOVI_METADATA by default, apply_dolbyvision=1), with HDRTests' helpers and
// its libplacebo options, so only the RPU differs from the HLG comparisons there. ffmpeg 5.1 cannot
// write RPUs, so the generated clips are camera footage made HLG by zscale and encoded by x265,
// with the iPhone clip's own RPU NAL units (HEVC NAL type 62, one per frame, changing from frame to
// frame) appended to each access unit, as a Dolby Vision encoder places them.
extension HDRTests {
    /// Every frame's PSNR (dB, yuv420p, all planes), frames matched by index (as many as both have).
    func framePSNRs(_ a: URL, _ b: URL) throws -> [Double] {
        func frames(_ f: URL) throws -> Data {
            try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", f.path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        }
        let x = try frames(a), y = try frames(b)
        let w = try videoStream(a)["width"] as? Int ?? 0, h = try videoStream(a)["height"] as? Int ?? 0
        let size = w * h * 3 / 2
        guard size > 0, x.count % size == 0, y.count % size == 0, !x.isEmpty, !y.isEmpty else {
            throw OracleError("\(a.lastPathComponent) and \(b.lastPathComponent): frames of different sizes")
        }
        return stride(from: 0, to: min(x.count, y.count), by: size).map { start in
            var sum = 0.0
            for i in start..<(start + size) { let d = Double(x[i]) - Double(y[i]); sum += d * d }
            return 10 * log10(255 * 255 / max(sum / Double(size), 1e-10))
        }
    }

    /// `ours` against libplacebo's rendition with the RPU applied: each of the first 4 frames ≥
    /// `minimumDB`, the first frame's mean saturation and luma within 3%.
    func assertDolbyVisionLikeLibplacebo(_ ours: URL, _ ref: URL, label: String, minimumDB: Double = 45,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let db = try framePSNRs(ours, ref)
        let a = try saturationAndLuma(ours), b = try saturationAndLuma(ref)
        let message = "\(label): saturation \(a.saturation) vs libplacebo \(b.saturation), luma \(a.luma) vs \(b.luma), \(db.map { String(format: "%.2f", $0) }) dB"
        print(message)
        XCTAssertGreaterThanOrEqual(db.count, 4, message, file: file, line: line)
        XCTAssertGreaterThanOrEqual(db.min() ?? 0, minimumDB, message, file: file, line: line)
        XCTAssertLessThan(abs(a.saturation / b.saturation - 1), 0.03, message, file: file, line: line)
        XCTAssertLessThan(abs(a.luma / b.luma - 1), 0.03, message, file: file, line: line)
    }

    /// The iPhone clip (profile 8.4): its RPU applied by default, as libplacebo applies it. (The HLG
    /// base layer alone, what gpuencode did before, has 78% of libplacebo's saturation: a grey sky
    /// where libplacebo's is blue-grey.) Measured 50.6 dB on each of the 4 frames, saturation
    /// 99.0%, luma 100.2%. The 1080p phone clip (profile 8.4 too, an RPU on every frame, B-frames,
    /// an edit list): 50.5 dB, saturation 99.8%, luma 100.3%.
    func testDolbyVisionClipMatchesLibplacebo() throws {
        let phone = try Paths.media("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4")
        let phoneOurs = scratch("phone.mkv")
        let phoneResult = try gpuencode([phone.path, phoneOurs.path, "--crf", "0", "--to", "0.15", "-v"])
        XCTAssertEqual(phoneResult.status, 0, phoneResult.summary)
        XCTAssertTrue(phoneResult.stderr.contains("Dolby Vision profile 8.4: RPU applied"), phoneResult.stderr)
        try assertDolbyVisionLikeLibplacebo(phoneOurs, try reference(phone, HDRTests.libplacebo, name: "pl-phone.mkv", vulkan: true, frames: 4),
                                            label: "1080p phone clip, RPU applied")

        let input = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let ours = scratch("ours.mkv")
        let result = try gpuencode([input.path, ours.path, "--crf", "0", "-v"])
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertTrue(result.stderr.contains("Dolby Vision profile 8.4: RPU applied"), result.stderr)
        XCTAssertTrue(result.stderr.contains("HDR: PQ tone-mapped to SDR BT.709 with bt2390, peak 1000 nits (metadata)"), result.stderr)
        let ref = try reference(input, HDRTests.libplacebo, name: "pl.mkv", vulkan: true, frames: 4)
        try assertDolbyVisionLikeLibplacebo(ours, ref, label: "iPhone clip, RPU applied")
        // --dolby-vision base: the HLG base layer, visibly less saturated than libplacebo's.
        let base = scratch("base.mkv")
        XCTAssertEqual(try gpuencode([input.path, base.path, "--crf", "0", "--dolby-vision", "base"]).status, 0)
        let s = try saturationAndLuma(base).saturation / saturationAndLuma(ref).saturation
        XCTAssertLessThan(s, 0.85, "the base layer's saturation against libplacebo's RPU rendition: \(s)")
    }

    /// `gpuencode preview` and picture outputs apply the RPU as a transcode does by default: the
    /// iPhone clip's first frame, saturation and luma within 3% of libplacebo's (the base layer: 78%
    /// of its saturation, what `--dolby-vision base` gives).
    func testDolbyVisionPreview() throws {
        let input = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let png = scratch("preview.png")
        let result = try gpuencode(["preview", input.path, "--at", "0", "-o", png.path])
        XCTAssertEqual(result.status, 0, result.summary)
        let ref = try reference(input, HDRTests.libplacebo, name: "pl.mkv", vulkan: true, frames: 1)
        let a = try saturationAndLuma(png), b = try saturationAndLuma(ref)
        let message = "preview: saturation \(a.saturation) vs libplacebo \(b.saturation), luma \(a.luma) vs \(b.luma)"
        print(message)
        XCTAssertLessThan(abs(a.saturation / b.saturation - 1), 0.03, message)
        XCTAssertLessThan(abs(a.luma / b.luma - 1), 0.03, message)
        // A picture output takes --dolby-vision: applied by default, the base layer when asked.
        let picture = scratch("picture.png"), base = scratch("base.png")
        XCTAssertEqual(try gpuencode([input.path, picture.path, "--start", "0"]).status, 0)
        XCTAssertEqual(try gpuencode([input.path, base.path, "--start", "0", "--dolby-vision", "base"]).status, 0)
        let p = try saturationAndLuma(picture), q = try saturationAndLuma(base)
        XCTAssertLessThan(abs(p.saturation / b.saturation - 1), 0.03, "picture output: saturation \(p.saturation) vs libplacebo \(b.saturation)")
        XCTAssertLessThan(q.saturation / b.saturation, 0.85, "picture output of the base layer: saturation \(q.saturation) vs libplacebo \(b.saturation)")
    }

    /// `--dolby-vision base` is the base layer as before: the same pixels as the clip's frames copied
    /// losslessly without their RPU (ffv1, rotation kept). A value other than apply or base is a
    /// usage error.
    func testDolbyVisionBaseIsTheBaseLayer() throws {
        let input = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let copy = scratch("copy.mov")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-noautorotate", "-i", input.path, "-map", "0:v", "-c:v", "ffv1", copy.path])
        let base = scratch("base.mkv"), plain = scratch("plain.mkv")
        let result = try gpuencode([input.path, base.path, "--crf", "0", "--dolby-vision", "base", "-v"])
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertTrue(result.stderr.contains("Dolby Vision profile 8.4: the HLG base layer is used (--dolby-vision base)"), result.stderr)
        XCTAssertEqual(try gpuencode([copy.path, plain.path, "--crf", "0"]).status, 0)
        XCTAssertEqual(try framePSNRs(base, plain).count, 4)
        XCTAssertEqual(try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", base.path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]),
                       try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", plain.path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]))
        let bad = try gpuencode([input.path, scratch("y.mkv").path, "--dolby-vision", "enhance"])
        XCTAssertEqual(bad.status, ExitCode.usage, bad.summary)
        // From a pipe the RPU cannot be read ahead: the base layer, and the warning says why (it
        // said the frames carry no RPU).
        let mkv = scratch("dv.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-map", "0:v", "-c", "copy", mkv.path])
        let piped = try Oracle.run("/bin/sh", ["-c", "cat \"$0\" | \"$1\" /dev/stdin \"$2\" -v", mkv.path, try Paths.gpuencode(), scratch("piped.mkv").path])
        XCTAssertEqual(piped.status, 0, piped.summary)
        XCTAssertTrue(piped.stderr.contains("the HLG base layer is used: its RPU is read ahead from a file before the run, and this input is not one (a pipe)"), piped.stderr)
    }

    /// Generated clips: camera footage as HLG with the iPhone clip's RPUs, one per frame, applied as
    /// libplacebo applies them: ≥ 45 dB each frame, saturation and luma within 3%. (Measured: Big
    /// Buck Bunny 50.0 dB, the cup 48.6. The deer's saturated greens 45.2 dB: Y' 48.6, but Cb 40.8
    /// and Cr 43.6 dB, where the two resample chroma differently, as on its base layer (Cb 35.4), so
    /// 44 dB there.) Big Buck Bunny as PQ with the same RPUs stands in for profile 8.1's PQ base layer
    /// (the RPU decides what its codes mean; libplacebo applies it whatever the base's transfer):
    /// 52.1 dB with --peak-detect. (A darker PQ version of it, 203-nit white, measured 43.7 dB while
    /// its reshaped PQ R'G'B' matched libplacebo's at 64 dB in a numpy model: tone mapping near black.)
    func testDolbyVisionGeneratedClipsMatchLibplacebo() throws {
        let iphone = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let stream = scratch("iphone.hevc")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", iphone.path, "-map", "0:v", "-c:v", "copy",
                                         "-bsf:v", "hevc_mp4toannexb", "-f", "hevc", stream.path])
        let rpus = HDRTests.nalUnits(try Data(contentsOf: stream)).filter { HDRTests.nalType($0) == 62 }
        XCTAssertGreaterThanOrEqual(rpus.count, 4, "the iPhone clip's RPU NAL units")
        let clips: [(String, String, Double)] = [("h264_aac51_720p_bbb_5s.mp4", "arib-std-b67", 45), ("h264_aac_480p_cup_8s.mp4", "arib-std-b67", 45),
                                                 ("h264_aac_1080p_deer_1s.mp4", "arib-std-b67", 44), ("h264_aac51_720p_bbb_5s.mp4", "smpte2084", 45)]
        for (name, transfer, minimumDB) in clips {
            let hlg = scratch("\(name)-\(transfer).hevc")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", try Paths.media(name).path, "-frames:v", "4",
                                             "-vf", "scale=1280:720,zscale=tin=bt709:t=\(transfer):pin=bt709:p=bt2020:min=bt709:m=bt2020nc:npl=1000:r=tv:agamma=0,format=yuv420p10le",
                                             "-c:v", "libx265", "-x265-params", "log-level=none:lossless=1:aud=1:bframes=0",
                                             "-color_range", "tv", "-color_trc", transfer, "-color_primaries", "bt2020", "-colorspace", "bt2020nc",
                                             "-f", "hevc", hlg.path])
            let input = scratch("\(name)-\(transfer)-dv.mp4")
            try HDRTests.muxWithRPUs(hlg, rpus: rpus, raw: scratch("\(name)-\(transfer)-dv.hevc"), into: input)
            let frames = try Oracle.ffprobeJSON(["-show_frames", "-select_streams", "v:0", input.path])["frames"] as? [[String: Any]] ?? []
            let withRPU = frames.filter { (($0["side_data_list"] as? [[String: Any]]) ?? []).contains { $0["side_data_type"] as? String == "Dolby Vision Metadata" } }
            XCTAssertEqual(withRPU.count, 4, "\(name): frames with an RPU, as FFmpeg reads them")
            let ours = scratch("ours-\(name)-\(transfer).mkv")
            // (PQ: the reshaped picture peaks well below the RPU's 1000 nits, and libplacebo's
            // defaults measure the peak; without --peak-detect here 29.6 dB, luma 95.7%.)
            let result = try gpuencode([input.path, ours.path, "--crf", "0", "-v"] + (transfer == "smpte2084" ? ["--peak-detect"] : []))
            XCTAssertEqual(result.status, 0, result.summary)
            XCTAssertTrue(result.stderr.contains("Dolby Vision (RPUs without a configuration record): RPU applied"), result.stderr)
            let ref = try reference(input, HDRTests.libplacebo, name: "pl-\(name)-\(transfer).mkv", vulkan: true, frames: 4)
            try assertDolbyVisionLikeLibplacebo(ours, ref, label: "\(name) (\(transfer)) with the iPhone's RPUs", minimumDB: minimumDB)
        }
    }

    /// The NAL units of an Annex B stream, without their start codes.
    static func nalUnits(_ data: Data) -> [Data] {
        let bytes = [UInt8](data)
        var starts: [(code: Int, payload: Int)] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
                starts.append((i > 0 && bytes[i - 1] == 0 ? i - 1 : i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        return starts.indices.map { k in
            Data(bytes[starts[k].payload..<(k + 1 < starts.count ? starts[k + 1].code : bytes.count)])
        }
    }

    /// HEVC's nal_unit_type (35: access unit delimiter; 62: a Dolby Vision RPU).
    /// An Annex B stream with an RPU NAL unit (the next of `rpus`, round) ending each access unit
    /// (from one delimiter to the next), written to `raw` and muxed by ffmpeg into `into` at 30 fps.
    static func muxWithRPUs(_ stream: URL, rpus: [Data], raw: URL, into: URL) throws {
        var out = Data(), frame = 0
        for nal in nalUnits(try Data(contentsOf: stream)) {
            if nalType(nal) == 35 && !out.isEmpty { out += [0, 0, 0, 1] + rpus[frame % rpus.count]; frame += 1 }
            out += [0, 0, 0, 1] + nal
        }
        out += [0, 0, 0, 1] + rpus[frame % rpus.count]
        try out.write(to: raw)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-r", "30", "-i", raw.path, "-c", "copy", into.path])
    }

    static func nalType(_ nal: Data) -> Int { nal.isEmpty ? -1 : Int(nal[nal.startIndex] >> 1) & 0x3f }
}
