import Foundation
import XCTest

// HDR and wide gamut against independent references: ffmpeg's zscale (zimg) + tonemap for the
// hable/mobius/reinhard/clip curves and for BT.2020 SDR, libplacebo (through ffmpeg's libplacebo
// filter on Mesa's lavapipe Vulkan) for BT.2390 and the real HLG clips, ffprobe for kept HDR.
// Fixtures are made here with zscale from testsrc2 / gradients / smptehdbars. Every zscale that
// changes a transfer function says agamma=0: zscale's default lets zimg approximate the gamma
// curves, and on CPUs with AVX-512 zimg's approximation alone cost the references 4-6 dB (the bars
// 40.1 dB against the exact curves' 44.6; tone curves 34 dB against 40).
final class HDRTests: BatchTestCase {
    /// testsrc2 as 10-bit BT.2020 in `transfer` (smpte2084 or arib-std-b67), SDR white at 1000 nits:
    /// ffv1, or with `metadata` lossless HEVC whose SEI says MaxCLL 1000, MaxFALL 400 and a
    /// 1000-nit mastering display (so PQ's peak is 1000 nits for every tool, not PQ's 10000).
    func makeHDRPattern(_ transfer: String, name: String, size: String = "320x180", metadata: Bool = false) throws -> URL {
        try makeHDR(transfer, name: name, source: "testsrc2=s=\(size):d=0.2:r=10", matrixIn: "bt709", metadata: metadata)
    }

    /// 10-bit BT.2020 in `transfer` made by zscale from lavfi `source` (read with `matrixIn`).
    func makeHDR(_ transfer: String, name: String, source: String, prefilter: String = "", matrixIn: String, metadata: Bool) throws -> URL {
        let url = scratch(name)
        let codec = metadata
            ? ["-c:v", "libx265", "-x265-params", "log-level=none:lossless=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50):max-cll=1000,400"]
            : ["-c:v", "ffv1"]
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source,
                                         "-vf", prefilter + "zscale=tin=bt709:t=\(transfer):pin=bt709:p=bt2020:min=\(matrixIn):m=bt2020nc:npl=1000:r=tv:agamma=0,format=yuv420p10le"]
                                         + codec + ["-color_range", "tv", "-color_trc", transfer, "-color_primaries", "bt2020",
                                                    "-colorspace", "bt2020nc", url.path])
        return url
    }

    /// `filter` applied to `input` by ffmpeg, as lossless yuv420p (the reference picture).
    func reference(_ input: URL, _ filter: String, name: String, vulkan: Bool = false, frames: Int = 2) throws -> URL {
        let url = scratch(name)
        let device = vulkan ? ["-init_hw_device", "vulkan=vk", "-filter_hw_device", "vk"] : []
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + device + ["-i", input.path, "-vf", filter,
                                         "-frames:v", String(frames), "-c:v", "ffv1", url.path])
        return url
    }

    /// zimg linearises (npl=100: 1.0 is 100 nits, as gpuencode's default --target-peak), converts the
    /// primaries, ffmpeg's tonemap applies the curve (desat=0: gpuencode does not desaturate highlights;
    /// peak=10: the 1000-nit nominal peak), zimg encodes BT.709.
    static func zscaleToneMap(_ curve: String) -> String {
        "zscale=t=linear:npl=100:agamma=0,format=gbrpf32le,zscale=p=bt709:agamma=0,tonemap=\(curve):desat=0:peak=10,zscale=t=bt709:m=bt709:r=tv:agamma=0,format=yuv420p"
    }

    /// libplacebo's BT.2390 on Vulkan (lavapipe on CPU-only machines) with all its other defaults
    /// (tone-mapping mode auto, crosstalk 0.04, peak detection on, gamut clipping off), as an
    /// ffmpeg user gets it: no option chosen to look like gpuencode.
    static let libplacebo = "format=yuv420p10le,hwupload,libplacebo=tonemapping=bt.2390:colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv:format=yuv420p,hwdownload,format=yuv420p"

    /// Mean HSV saturation and mean BT.709 luma (0...1) of the first frame, from rgb24.
    func saturationAndLuma(_ file: URL) throws -> (saturation: Double, luma: Double) {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-frames:v", "1",
                                                        "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        var s = 0.0, y = 0.0
        let count = data.count / 3
        data.withUnsafeBytes { (p: UnsafeRawBufferPointer) in
            for i in 0..<count {
                let r = Double(p[3 * i]), g = Double(p[3 * i + 1]), b = Double(p[3 * i + 2])
                let hi = max(r, g, b), lo = min(r, g, b)
                if hi > 0 { s += (hi - lo) / hi }
                y += (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
            }
        }
        return (s / Double(count), y / Double(count))
    }

    /// PSNR (dB) of the first frames as yuv420p, all three planes together (ffmpeg's "average").
    func firstFramePSNR(_ a: URL, _ b: URL) throws -> Double {
        func frame(_ f: URL) throws -> Data {
            try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", f.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        }
        let x = try frame(a), y = try frame(b)
        guard x.count == y.count, !x.isEmpty else { throw OracleError("frames of \(a.lastPathComponent) and \(b.lastPathComponent) differ in size") }
        var sum = 0.0
        for (p, q) in zip(x, y) { let d = Double(p) - Double(q); sum += d * d }
        return 10 * log10(255 * 255 / max(sum / Double(x.count), 1e-10))
    }

    /// The first video stream's ffprobe fields.
    func videoStream(_ file: URL) throws -> [String: Any] {
        let json = try Oracle.ffprobeJSON(["-show_streams", "-select_streams", "v:0", file.path])
        return try XCTUnwrap((json["streams"] as? [[String: Any]])?.first, "no video stream in \(file.path)")
    }

    /// Decoded samples of the first frames as 16-bit values.
    func samples16(_ file: URL, format: String = "yuv420p10le") throws -> [UInt16] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-fps_mode", "passthrough",
                                                        "-f", "rawvideo", "-pix_fmt", format, "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
    }

    // MARK: - Tone curves against zscale + tonemap

    /// PQ (absolute, so no OOTF convention can differ) through each ffmpeg curve, both GPU transfer
    /// paths: ≥ 40 dB against zimg + tonemap with the same curve and peak.
    func testPQToneCurvesMatchZscaleTonemap() throws {
        let input = try makeHDRPattern("smpte2084", name: "pq.mkv", metadata: true)
        for (i, curve) in ["hable", "mobius", "reinhard", "clip"].enumerated() {
            let transfer = i % 2 == 0 ? "pbo" : "client"
            let ours = scratch("\(curve).mkv")
            // --target-peak 100: zscale's npl=100.
            let result = try gpuencode([input.path, ours.path, "--tonemap", curve, "--target-peak", "100", "--crf", "0", "-v"],
                                       environment: ["GPUENCODE_TRANSFER": transfer])
            XCTAssertEqual(result.status, 0, result.summary)
            XCTAssertTrue(result.stderr.contains("HDR: PQ tone-mapped to SDR BT.709 with \(curve), peak 1000 nits (metadata) to 100 nits"), result.stderr)
            let ref = try reference(input, HDRTests.zscaleToneMap(curve), name: "ref-\(curve).mkv")
            let db = try Oracle.psnr(ours, ref)
            XCTAssertGreaterThanOrEqual(db, 40, "\(curve) (\(transfer)): \(db) dB against zscale+tonemap")
            let s = try videoStream(ours)
            XCTAssertEqual(s["color_transfer"] as? String, "bt709")
            XCTAssertEqual(s["color_primaries"] as? String, "bt709")
        }
    }

    /// The same through `gpuencode batch` with --tonemap (the setting reaches batch jobs).
    func testBatchToneMaps() throws {
        try FileManager.default.createDirectory(at: scratch("in"), withIntermediateDirectories: true)
        let input = try makeHDRPattern("smpte2084", name: "in/pq.mkv", metadata: true)
        let out = scratch("out")
        let result = try batch([input.deletingLastPathComponent().path, "--out-dir", out.path, "--include", "*.mkv", "--tonemap", "hable",
                                "--target-peak", "100", "--crf", "0"])
        XCTAssertEqual(result.status, 0, result.summary)
        let ours = try XCTUnwrap(FileManager.default.contentsOfDirectory(at: out, includingPropertiesForKeys: nil).first { $0.lastPathComponent == "pq.mp4" })
        let db = try Oracle.psnr(ours, try reference(input, HDRTests.zscaleToneMap("hable"), name: "ref.mkv"))
        XCTAssertGreaterThanOrEqual(db, 40, "batch --tonemap hable: \(db) dB against zscale+tonemap")
    }

    // MARK: - Wide-gamut SDR

    /// BT.2020 SDR (8-bit) through linear light: ≥ 45 dB against zimg's colorimetric conversion on a
    /// smooth gradient, where the matrix-only conversion of before scored 24-25 dB.
    func testBT2020SDRConvertsPrimaries() throws {
        for (i, source) in ["gradients=s=320x180:d=0.2:r=10:c0=red:c1=green:x0=0:y0=0:x1=320:y1=180", "smptehdbars=s=320x180:d=0.2:r=10"].enumerated() {
            let input = scratch("sdr2020-\(i).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "\(source),format=rgb24",
                                             "-vf", "zscale=tin=bt709:t=bt2020-10:pin=bt709:p=bt2020:min=bt709:m=bt2020nc:r=tv:agamma=0,format=yuv420p",
                                             "-c:v", "ffv1", "-color_range", "tv", "-color_trc", "bt2020-10", "-color_primaries", "bt2020",
                                             "-colorspace", "bt2020nc", input.path])
            let ours = scratch("ours-\(i).mkv")
            let transfer = i == 0 ? "pbo" : "client"
            let result = try gpuencode([input.path, ours.path, "--crf", "0"], environment: ["GPUENCODE_TRANSFER": transfer])
            XCTAssertEqual(result.status, 0, result.summary)
            let db = try Oracle.psnr(ours, try reference(input, "zscale=t=bt709:p=bt709:m=bt709:r=tv:agamma=0,format=yuv420p", name: "ref-\(i).mkv"))
            // Smooth content ≥ 45 dB; the bars' sharp colour edges also measure how chroma is
            // resampled (zimg's filters against gpuencode's), so 43 dB there.
            XCTAssertGreaterThanOrEqual(db, i == 0 ? 45 : 43, "\(source) (\(transfer)): \(db) dB against zscale's BT.2020 → BT.709")
        }
    }

    /// Checks `ours` against libplacebo's rendition `ref`: first-frame PSNR ≥ `minimumDB` (when
    /// given), mean saturation and luma within 5%; prints and reports the figures under `label`.
    func assertLikeLibplacebo(_ ours: URL, _ ref: URL, label: String, minimumDB: Double?, file: StaticString = #filePath, line: UInt = #line) throws {
        let a = try saturationAndLuma(ours), b = try saturationAndLuma(ref)
        var message = "\(label): saturation \(a.saturation) vs libplacebo \(b.saturation), luma \(a.luma) vs \(b.luma)"
        if let minimumDB {
            let db = try firstFramePSNR(ours, ref)
            message += ", \(db) dB"
            XCTAssertGreaterThanOrEqual(db, minimumDB, message, file: file, line: line)
        }
        print(message)
        XCTAssertLessThan(abs(a.saturation / b.saturation - 1), 0.05, message, file: file, line: line)
        XCTAssertLessThan(abs(a.luma / b.luma - 1), 0.05, message, file: file, line: line)
    }

    // MARK: - BT.2390 and the real clips against libplacebo

    /// The BT.2390 default against libplacebo's defaults, on HLG and PQ patterns, both transfer
    /// paths: mean saturation and luma within 5%, PQ ≥ 35 dB, HLG ≥ 30 dB. (Measured: PQ 37.1 dB;
    /// before gpuencode tone-mapped as libplacebo's default mode does, 23.9 dB. HLG measured 41.6 dB
    /// on a pattern made with zimg's approximate HLG curve, which on AVX-512 machines is up to 103
    /// codes off the exact one; on the exact pattern 30.1 dB, luma 2.5% above libplacebo's, while the
    /// real HLG clips measure 51.7 dB (testHLGClipsAgainstLibplacebo). Where the 2.5% comes from is
    /// open, in the note.)
    func testBT2390MatchesLibplacebo() throws {
        for (i, transfer) in ["arib-std-b67", "smpte2084"].enumerated() {
            let input = try makeHDRPattern(transfer, name: "\(transfer).mkv", metadata: true)
            let ours = scratch("ours-\(transfer).mkv")
            let path = i == 0 ? "pbo" : "client"
            let result = try gpuencode([input.path, ours.path, "--crf", "0"], environment: ["GPUENCODE_TRANSFER": path])
            XCTAssertEqual(result.status, 0, result.summary)
            let ref = try reference(input, HDRTests.libplacebo, name: "pl-\(transfer).mkv", vulkan: true, frames: 1)
            try assertLikeLibplacebo(ours, ref, label: "\(transfer) (\(path))", minimumDB: i == 0 ? 30 : 35)
        }
    }

    /// PQ without metadata (a 10000-nit peak, 49 times the target: libplacebo's 'hybrid' mode, the
    /// luminance curve mixed with a per-channel one) with --peak-detect against libplacebo's
    /// defaults (which detect the peak too): ≥ 35 dB, saturation and luma within 5%. (Measured
    /// 39.4 dB; 19.2 dB when gpuencode tone-mapped on max(R, G, B) of BT.709 light.)
    func testBT2390HybridMatchesLibplacebo() throws {
        let input = try makeHDRPattern("smpte2084", name: "pq.mkv")
        let ours = scratch("ours.mkv")
        let result = try gpuencode([input.path, ours.path, "--crf", "0", "--peak-detect"])
        XCTAssertEqual(result.status, 0, result.summary)
        let ref = try reference(input, HDRTests.libplacebo, name: "pl.mkv", vulkan: true, frames: 1)
        try assertLikeLibplacebo(ours, ref, label: "10000-nit PQ, --peak-detect", minimumDB: 35)
    }

    /// The two iPhone HLG clips (Dolby Vision 8.4 on an HLG base layer) against libplacebo's own
    /// defaults on the same HLG base layer: ≥ 40 dB (measured 51.7 and 51.5 dB), mean saturation
    /// and luma within 5% (the matrix-only
    /// conversion of before had 43-55% of libplacebo's saturation). ffmpeg 5.1 hands libplacebo the
    /// Dolby Vision RPU, which it applies, so its reference is made from a lossless copy of the first
    /// frame (ffv1 keeps the HLG tags and drops the RPU).
    func testHLGClipsAgainstLibplacebo() throws {
        for name in ["iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov", "hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4"] {
            let input = try Paths.media(name)
            let ours = scratch("ours-\(name).mkv")
            // (--dolby-vision base: the HLG base layer is what this compares; HDRDolbyVisionTests the RPU.)
            let result = try gpuencode([input.path, ours.path, "--crf", "0", "-v", "--dolby-vision", "base"])
            XCTAssertEqual(result.status, 0, result.summary)
            XCTAssertTrue(result.stderr.contains("Dolby Vision profile 8.4: the HLG base layer is used"), result.stderr)
            let base = scratch("base-\(name).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-frames:v", "1", "-an", "-c:v", "ffv1", base.path])
            let ref = try reference(base, HDRTests.libplacebo, name: "pl-\(name).mkv", vulkan: true, frames: 1)
            try assertLikeLibplacebo(ours, ref, label: name, minimumDB: 40)
        }
    }

    /// `gpuencode preview` tone-maps as a transcode does: the HLG pattern's preview against
    /// libplacebo's defaults, saturation and luma within 5%.
    func testPreviewToneMaps() throws {
        let input = try makeHDRPattern("arib-std-b67", name: "hlg.mkv", metadata: true)
        let png = scratch("preview.png")
        let result = try gpuencode(["preview", input.path, "-o", png.path])
        XCTAssertEqual(result.status, 0, result.summary)
        let ref = try reference(input, HDRTests.libplacebo, name: "pl.mkv", vulkan: true, frames: 1)
        try assertLikeLibplacebo(png, ref, label: "preview", minimumDB: nil)
    }

    /// `--peak-detect` on a dim PQ scene (SDR white at 100 nits) whose metadata claims 4000 nits:
    /// against libplacebo's own peak detection (its defaults), ≥ 40 dB on the first frame,
    /// both transfer paths and the chain path (a blur); without detection the picture is tone-mapped
    /// for 4000 nits and far darker (the test can fail).
    func testPeakDetectionMatchesLibplacebo() throws {
        let input = scratch("dim.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:d=0.5:r=10",
                                         "-vf", "zscale=tin=bt709:t=smpte2084:pin=bt709:p=bt2020:min=bt709:m=bt2020nc:npl=100:r=tv:agamma=0,format=yuv420p10le",
                                         "-c:v", "libx265", "-x265-params", "log-level=none:lossless=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(40000000,50):max-cll=4000,400",
                                         "-color_range", "tv", "-color_trc", "smpte2084", "-color_primaries", "bt2020", "-colorspace", "bt2020nc", input.path])
        let ref = try reference(input, HDRTests.libplacebo, name: "pl.mkv", vulkan: true, frames: 1)
        for transfer in ["pbo", "client"] {
            let ours = scratch("pd-\(transfer).mkv")
            let result = try gpuencode([input.path, ours.path, "--peak-detect", "--crf", "0", "-v"], environment: ["GPUENCODE_TRANSFER": transfer])
            XCTAssertEqual(result.status, 0, result.summary)
            XCTAssertTrue(result.stderr.contains("peak measured per scene (at most 4000 nits)"), result.stderr)
            let db = try firstFramePSNR(ours, ref)
            print("--peak-detect (\(transfer)): \(db) dB against libplacebo's peak detection")
            XCTAssertGreaterThanOrEqual(db, 40, "--peak-detect (\(transfer)): \(db) dB against libplacebo's peak detection")
        }
        let fixed = scratch("fixed.mkv")
        XCTAssertEqual(try gpuencode([input.path, fixed.path, "--crf", "0"]).status, 0)
        let db = try firstFramePSNR(fixed, ref)
        XCTAssertLessThan(db, 30, "without --peak-detect: \(db) dB against libplacebo's peak detection")
        let blurred = scratch("blur.mkv"), blurredFixed = scratch("blur-fixed.mkv")
        XCTAssertEqual(try gpuencode([input.path, blurred.path, "--preset", "heavyblur", "--peak-detect", "--crf", "0"]).status, 0)
        XCTAssertEqual(try gpuencode([input.path, blurredFixed.path, "--preset", "heavyblur", "--crf", "0"]).status, 0)
        let a = try saturationAndLuma(blurred), b = try saturationAndLuma(blurredFixed)
        // Measured: 0.325 against 0.298 (the luminance-based curve leaves this dim scene's colours
        // brighter than the max(R, G, B) one did, so the two differ less than before).
        print("chain path: luma \(a.luma) with --peak-detect, \(b.luma) without")
        XCTAssertGreaterThan(a.luma, b.luma * 1.05, "the chain path uses the detected peak: luma \(a.luma) against \(b.luma) without")
    }

    // MARK: - --hdr keep

    /// PQ kept: HEVC Main 10 by default (H.264 High 10 and AV1 10-bit when asked), transfer,
    /// primaries and matrix tags, and the pixels within 2 code values of the input's, in .mp4 and .mkv.
    func testHDRKeep() throws {
        let input = scratch("pq10.mkv")
        // (Ten frames, so x265 reorders: B-frames and an edit list in the MP4.)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:d=1:r=10",
                                         "-vf", "zscale=tin=bt709:t=smpte2084:pin=bt709:p=bt2020:min=bt709:m=bt2020nc:npl=1000:r=tv,format=yuv420p10le",
                                         "-c:v", "ffv1", "-color_range", "tv", "-color_trc", "smpte2084", "-color_primaries", "bt2020",
                                         "-colorspace", "bt2020nc", input.path])
        let original = try samples16(input)
        // (No codec: HEVC, the default for kept HDR, at crf 0, which x265 does not make lossless.)
        for (name, codec, expect) in [("keep.mp4", nil, ("hevc", "Main 10")), ("keep.mkv", "hevc", ("hevc", "Main 10")),
                                      ("keep264.mkv", "h264", ("h264", "High 4:4:4 Predictive")), ("keepav1.mkv", "av1", ("av1", "Main"))] {
            let ours = scratch(name)
            // x265 is lossless with lossless=1 only, 10-bit x264 with qp=0 (its crf 0 is not); SVT-AV1 has no lossless mode.
            let quality = codec == "av1" ? ["--crf", "1"] : codec == "hevc" ? ["--x265-params", "lossless=1"] : codec == "h264" ? ["--x264-params", "qp=0"] : ["--crf", "0"]
            let result = try gpuencode([input.path, ours.path, "--hdr", "keep"] + quality + (codec.map { ["--codec", $0] } ?? []))
            XCTAssertEqual(result.status, 0, result.summary)
            let s = try videoStream(ours)
            XCTAssertEqual(s["codec_name"] as? String, expect.0, name)
            XCTAssertEqual(s["profile"] as? String, expect.1, name)
            XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p10le", name)
            XCTAssertEqual(s["color_transfer"] as? String, "smpte2084", name)
            XCTAssertEqual(s["color_primaries"] as? String, "bt2020", name)
            XCTAssertEqual(s["color_space"] as? String, "bt2020nc", name)
            let kept = try samples16(ours)
            XCTAssertEqual(kept.count, original.count, name)
            var worst = 0, total = 0
            for (a, b) in zip(kept, original) { let d = abs(Int(a) - Int(b)); worst = max(worst, d); total += d }
            let mean = Double(total) / Double(max(kept.count, 1))
            // Lossless runs match to the code value; lossy ones (x265 crf 0, SVT-AV1 crf 1) on average.
            let lossless = codec == "hevc" || codec == "h264"
            XCTAssertLessThanOrEqual(worst, lossless ? 2 : 64, "\(name): largest 10-bit difference \(worst) code values (mean \(mean))")
            XCTAssertLessThan(mean, lossless ? 0.5 : 2, "\(name): mean 10-bit difference \(mean) code values (largest \(worst))")
        }
        // Lossy 10-bit H.264 is High 10.
        let high10 = scratch("high10.mp4")
        XCTAssertEqual(try gpuencode([input.path, high10.path, "--hdr", "keep", "--codec", "h264"]).status, 0)
        XCTAssertEqual(try videoStream(high10)["profile"] as? String, "High 10")
    }

    func testHDROptionsAreChecked() throws {
        let input = try makeHDRPattern("smpte2084", name: "pq.mkv")
        for bad in [["--tonemap", "aces"], ["--target-peak", "5"], ["--hdr", "hdr10"]] {
            let result = try gpuencode([input.path, scratch("x.mp4").path] + bad)
            XCTAssertEqual(result.status, ExitCode.usage, "\(bad): \(result.summary)")
        }
        // (Kept HDR takes filters now: HDRKeepFilterTests. .mkv: a 2-frame HEVC MP4 fails now and
        // then with "pts/dts pair unsupported" on main too, tone-mapped or kept.)
        let result = try gpuencode([input.path, scratch("y.mkv").path, "--hdr", "keep", "--preset", "sepia"])
        XCTAssertEqual(result.status, 0, result.summary)
    }
}
