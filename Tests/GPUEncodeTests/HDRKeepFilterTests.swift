import Foundation
import XCTest

// `--hdr keep` with filters: the GPU filters the HDR signal's own R'G'B' (the input's matrix only)
// and writes 10-bit planes in the input's matrix and range. Checked against the input's own 10-bit
// samples, a float64 reference on zimg's decoding of the input (BT.2020 matrix, no transfer change),
// ffmpeg's bwdif, and ffprobe's tags and side data.
extension HDRTests {
    /// A smooth 10-bit BT.2020 clip in `transfer` (ffmpeg's `gradients` through zscale, 3 frames): no
    /// sharp colour edges, whose R'G'B' overshoots any Y'CbCr → RGB → Y'CbCr round trip clips.
    /// `metadata`: lossless HEVC whose SEI carries a 1000-nit mastering display and MaxCLL 1000,
    /// MaxFALL 400; else ffv1.
    // Colours and ends given: FFmpeg 5.1's `gradients` picks random ones whatever `seed` says, which
    // made the clip, and so the bounds below, differ from run to run.
    func makeHDRGradient(_ transfer: String, name: String, metadata: Bool = false) throws -> URL {
        try makeHDR(transfer, name: name, source: "gradients=s=320x180:d=0.3:r=10:nb_colors=4:c0=0x1f4fa0:c1=0xe0c040:c2=0x30a050:c3=0xc03060:x0=0:y0=0:x1=319:y1=179", prefilter: "format=rgb24,",
                    matrixIn: "gbr", metadata: metadata)
    }

    /// A preset file of `filters` (JSON objects).
    func keepPreset(_ name: String, _ filters: String) throws -> URL {
        let url = scratch("\(name).json")
        try Data("{ \"version\": 2, \"name\": \"\(name)\", \"filters\": [\(filters)] }".utf8).write(to: url)
        return url
    }

    /// Largest and mean absolute difference of two sample arrays.
    func difference(_ a: [UInt16], _ b: [UInt16]) -> (worst: Int, mean: Double) {
        var worst = 0, total = 0
        for (x, y) in zip(a, b) { let d = abs(Int(x) - Int(y)); worst = max(worst, d); total += d }
        return (worst, Double(total) / Double(max(a.count, 1)))
    }

    /// The kept colour description and side data: 10-bit, the input's transfer, BT.2020 primaries
    /// and matrix, limited range; with `sideData` the mastering display and content light level.
    func assertKeptHDR(_ file: URL, transfer: String, sideData: Bool, _ what: String) throws {
        let s = try videoStream(file)
        XCTAssertEqual(s["pix_fmt"] as? String, "yuv420p10le", what)
        XCTAssertEqual(s["color_transfer"] as? String, transfer, what)
        XCTAssertEqual(s["color_primaries"] as? String, "bt2020", what)
        XCTAssertEqual(s["color_space"] as? String, "bt2020nc", what)
        XCTAssertEqual(s["color_range"] as? String, "tv", what)
        guard sideData else { return }
        let list = (s["side_data_list"] as? [[String: Any]]) ?? []
        let types = list.compactMap { $0["side_data_type"] as? String }
        XCTAssertTrue(types.contains("Mastering display metadata"), "\(what): side data \(types)")
        let light = list.first { $0["side_data_type"] as? String == "Content light level metadata" }
        XCTAssertEqual(light?["max_content"] as? Int, 1000, "\(what): \(list)")
        XCTAssertEqual(light?["max_average"] as? Int, 400, "\(what): \(list)")
    }

    /// (1), (4), (5): a point filter that changes nothing (brightness 0) puts kept HDR through the
    /// GPU (source → R'G'B' by the BT.2020 matrix → filter → Y'CbCr → 10-bit codes), and the
    /// decoded output is the input to within 2 code values: HLG and PQ (with side data), both
    /// transfer paths, .mp4 and .mkv, pipelined and --deterministic, HEVC lossless. (Before: exit 64.)
    func testKeepWithPointFilterIsTransparent() throws {
        let preset = try keepPreset("nochange", "{ \"filter\": \"brightness\", \"brightness\": 0 }")
        for (transfer, metadata) in [("arib-std-b67", false), ("smpte2084", true)] {
            let input = try makeHDRGradient(transfer, name: "\(transfer).\(metadata ? "mp4" : "mkv")", metadata: metadata)
            let original = try samples16(input)
            for transferPath in ["pbo", "client"] {
                for (container, deterministic) in [("mp4", false), ("mkv", false), ("mkv", true)] {
                    let name = "\(transfer)-\(transferPath)\(deterministic ? "-det" : "").\(container)"
                    let ours = scratch(name)
                    let result = try gpuencode([input.path, ours.path, "--hdr", "keep", "--preset", preset.path, "--codec", "hevc", "--x265-params", "lossless=1", "-v"]
                                               + (deterministic ? ["--deterministic"] : []),
                                               environment: ["GPUENCODE_TRANSFER": transferPath])
                    XCTAssertEqual(result.status, 0, "\(name): \(result.summary)")
                    XCTAssertTrue(result.stderr.contains("pass 1: source, brightness"), "\(name) goes through the GPU: \(result.stderr)")
                    try assertKeptHDR(ours, transfer: transfer, sideData: metadata, name)
                    XCTAssertEqual(try videoStream(ours)["profile"] as? String, "Main 10", name)
                    let kept = try samples16(ours)
                    XCTAssertEqual(kept.count, original.count, name)
                    let d = difference(kept, original)
                    XCTAssertLessThanOrEqual(d.worst, 2, "\(name): largest 10-bit difference \(d.worst) code values (mean \(d.mean))")
                    XCTAssertLessThan(d.mean, 0.1, "\(name): mean 10-bit difference \(d.mean) code values")
                }
            }
        }
    }

    /// (2): `grayscale` on kept HLG and PQ against a float64 reference: zimg decodes the input to R'G'B'
    /// with the BT.2020 matrix (bilinear, left-sited chroma; transfer untouched), clipped to 0...1;
    /// grey = 0.2125 R' + 0.7154 G' + 0.0721 B' (the filter's published weights); the output's Y'
    /// is 64 + 876 · grey (BT.2020's Y' of a grey is the grey) and Cb = Cr = 512. H.264 lossless
    /// (10-bit High 4:4:4 Predictive), both transfer paths. The input's own Y' misses it by more than 2
    /// codes (4.7 on PQ, 15 on HLG).
    func testKeepGrayscaleMatchesBT2020Reference() throws {
        let preset = try keepPreset("grey", "{ \"filter\": \"grayscale\" }")
        let (w, h) = (320, 180)
        for transfer in ["arib-std-b67", "smpte2084"] {
            let input = try makeHDRGradient(transfer, name: "\(transfer).mkv")
            let rgbData = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", input.path, "-vf", "zscale=filter=bilinear,format=gbrpf32le",
                                                               "-frames:v", "1", "-f", "rawvideo", "-"])
            let rgb = rgbData.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }.map { min(max(Double($0), 0), 1) }
            XCTAssertEqual(rgb.count, 3 * w * h)
            // gbrp planes: G, B, R.
            let expected = (0..<(w * h)).map { i in 64 + 876 * (0.2125 * rgb[2 * w * h + i] + 0.7154 * rgb[i] + 0.0721 * rgb[w * h + i]) }
            for transferPath in ["pbo", "client"] {
                let name = "\(transfer)-grey-\(transferPath).mkv"
                let ours = scratch(name)
                let result = try gpuencode([input.path, ours.path, "--hdr", "keep", "--preset", preset.path, "--codec", "h264", "--x264-params", "qp=0"],
                                           environment: ["GPUENCODE_TRANSFER": transferPath])
                XCTAssertEqual(result.status, 0, "\(name): \(result.summary)")
                try assertKeptHDR(ours, transfer: transfer, sideData: false, name)
                let out = try samples16(ours)
                var worst = 0.0, total = 0.0, worstChroma = 0
                for i in 0..<(w * h) {
                    let d = abs(Double(out[i]) - expected[i])
                    worst = max(worst, d)
                    total += d
                }
                for i in (w * h)..<(w * h * 3 / 2) { worstChroma = max(worstChroma, abs(Int(out[i]) - 512)) }
                XCTAssertLessThanOrEqual(worst, 2, "\(name): Y' against the BT.2020 float64 reference: largest \(worst) codes, mean \(total / Double(w * h))")
                XCTAssertLessThanOrEqual(worstChroma, 1, "\(name): grey chroma is 512; largest difference \(worstChroma)")
            }
            // The reference can fail: the input's own luma is not it.
            let original = try samples16(input)
            let unfiltered = (0..<(w * h)).map { abs(Double(original[$0]) - expected[$0]) }.max() ?? 0
            XCTAssertGreaterThan(unfiltered, 2, "the untouched input misses the grey reference by \(unfiltered) codes")
        }
    }

    /// (3): a sampling filter (the chain's passes, then its RGBA → 10-bit NV12-block pass) on kept PQ,
    /// AV1 10-bit (SVT-AV1) in .mkv and HEVC in .mp4, both transfer paths: 10-bit, tags and side data
    /// kept, the picture blurred (less spread) with its mean kept to within 3 codes. And kept HDR
    /// deinterlaces now that it can go through the GPU: `--deinterlace frame` equals ffmpeg's
    /// 10-bit bwdif to within 6 codes, 0.05 on average.
    func testKeepBlurAndDeinterlace() throws {
        let input = try makeHDRGradient("smpte2084", name: "pq.mp4", metadata: true)
        let original = try samples16(input)
        let luma = 320 * 180
        func stats(_ s: ArraySlice<UInt16>) -> (mean: Double, spread: Double) {
            let m = s.reduce(0.0) { $0 + Double($1) } / Double(s.count)
            return (m, (s.reduce(0.0) { $0 + (Double($1) - m) * (Double($1) - m) } / Double(s.count)).squareRoot())
        }
        let before = stats(original[0..<luma])
        for (name, codec, transferPath) in [("blur.mkv", "av1", "pbo"), ("blur-client.mkv", "av1", "client"), ("blur.mp4", "hevc", "pbo")] {
            let ours = scratch(name)
            let result = try gpuencode([input.path, ours.path, "--hdr", "keep", "--preset", "heavyblur", "--codec", codec, "--crf", "10", "-v"],
                                       environment: ["GPUENCODE_TRANSFER": transferPath])
            XCTAssertEqual(result.status, 0, "\(name): \(result.summary)")
            XCTAssertTrue(result.stderr.contains("gaussianBlur"), "\(name): \(result.stderr)")
            try assertKeptHDR(ours, transfer: "smpte2084", sideData: true, name)
            let after = stats(try samples16(ours)[0..<luma])
            XCTAssertEqual(after.mean, before.mean, accuracy: 3, "\(name): mean Y' \(after.mean) against the input's \(before.mean)")
            XCTAssertLessThan(after.spread, before.spread, "\(name): blurred spread \(after.spread) against the input's \(before.spread)")
        }
        let deinterlaced = scratch("deint.mkv"), bwdif = scratch("bwdif.mkv")
        let result = try gpuencode([input.path, deinterlaced.path, "--hdr", "keep", "--deinterlace", "frame", "--codec", "hevc", "--x265-params", "lossless=1"])
        XCTAssertEqual(result.status, 0, result.summary)
        try assertKeptHDR(deinterlaced, transfer: "smpte2084", sideData: true, "deinterlaced")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-vf", "bwdif=mode=send_frame:parity=tff:deint=all",
                                         "-c:v", "ffv1", bwdif.path])
        let d = difference(try samples16(deinterlaced), try samples16(bwdif))
        // (A few samples differ by up to 5 codes: the 4:2:0 chroma's round trip through R'G'B'.)
        XCTAssertLessThanOrEqual(d.worst, 6, "kept HDR deinterlaced against 10-bit bwdif: largest \(d.worst) codes, mean \(d.mean)")
        XCTAssertLessThan(d.mean, 0.05, "kept HDR deinterlaced against 10-bit bwdif: mean \(d.mean) codes, largest \(d.worst)")
    }

    /// The other writers: a rotated real phone clip (iPhone HLG, rotation -90: the per-plane luma and
    /// chroma passes, not the packed block) against ffmpeg's rotated decoding of it, and
    /// `--render-path rgba` / `unfused` (the chain's RGBA → Y and → CbCr passes) on the gradient, both
    /// transfer paths.
    func testKeepRotatedAndRGBAWriters() throws {
        let preset = try keepPreset("nochange", "{ \"filter\": \"brightness\", \"brightness\": 0 }")
        let phone = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let reference = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", phone.path, "-frames:v", "1",
                                                             "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-"])
        let expected = reference.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        let luma = 720 * 1280
        XCTAssertEqual(expected.count, luma * 3 / 2, "ffmpeg turns the clip upright")
        for transferPath in ["pbo", "client"] {
            let ours = scratch("phone-\(transferPath).mkv")
            let result = try gpuencode([phone.path, ours.path, "--hdr", "keep", "--preset", preset.path, "--codec", "hevc", "--x265-params", "lossless=1"],
                                       environment: ["GPUENCODE_TRANSFER": transferPath])
            XCTAssertEqual(result.status, 0, result.summary)
            try assertKeptHDR(ours, transfer: "arib-std-b67", sideData: false, "phone \(transferPath)")
            let s = try videoStream(ours)
            XCTAssertEqual(s["width"] as? Int, 720)
            XCTAssertEqual(s["height"] as? Int, 1280)
            let kept = Array(try samples16(ours).prefix(luma * 3 / 2))
            let y = difference(Array(kept[0..<luma]), Array(expected[0..<luma]))
            let c = difference(Array(kept[luma...]), Array(expected[luma...]))
            // (The few larger differences sit on sharp colour edges, whose R'G'B' leaves 0...1 and is clipped.)
            XCTAssertLessThan(y.mean, 0.01, "phone \(transferPath): Y' mean difference \(y.mean), largest \(y.worst)")
            XCTAssertLessThanOrEqual(y.worst, 10, "phone \(transferPath): Y' largest difference \(y.worst), mean \(y.mean)")
            XCTAssertLessThan(c.mean, 0.2, "phone \(transferPath): CbCr mean difference \(c.mean), largest \(c.worst)")
        }
        let input = try makeHDRGradient("smpte2084", name: "pq.mkv")
        let original = try samples16(input)
        for (path, transferPath) in [("rgba", "pbo"), ("rgba", "client"), ("unfused", "pbo")] {
            let ours = scratch("\(path)-\(transferPath).mkv")
            let result = try gpuencode([input.path, ours.path, "--hdr", "keep", "--preset", preset.path, "--render-path", path,
                                        "--codec", "hevc", "--x265-params", "lossless=1"], environment: ["GPUENCODE_TRANSFER": transferPath])
            XCTAssertEqual(result.status, 0, result.summary)
            try assertKeptHDR(ours, transfer: "smpte2084", sideData: false, path)
            let d = difference(try samples16(ours), original)
            XCTAssertLessThanOrEqual(d.worst, 2, "--render-path \(path) (\(transferPath)): largest \(d.worst) codes, mean \(d.mean)")
        }
    }

    /// (6): batch with `--hdr keep --preset ...`: each output filtered, 10-bit, tagged as its input.
    func testBatchKeepsHDRWithFilters() throws {
        try FileManager.default.createDirectory(at: scratch("in"), withIntermediateDirectories: true)
        let preset = try keepPreset("grey", "{ \"filter\": \"grayscale\" }")
        _ = try makeHDRGradient("arib-std-b67", name: "in/hlg.mkv")
        _ = try makeHDRGradient("smpte2084", name: "in/pq.mkv", metadata: true)
        let out = scratch("out")
        let result = try batch([scratch("in").path, "--out-dir", out.path, "--include", "*.mkv", "--hdr", "keep", "--preset", preset.path,
                                "--codec", "hevc", "--x265-params", "lossless=1"])
        XCTAssertEqual(result.status, 0, result.summary)
        for (name, transfer) in [("hlg.mp4", "arib-std-b67"), ("pq.mp4", "smpte2084")] {
            let ours = out.appendingPathComponent(name)
            try assertKeptHDR(ours, transfer: transfer, sideData: transfer == "smpte2084", "batch \(name)")
            let chroma = try samples16(ours)[(320 * 180)..<(320 * 180 * 3 / 2)]
            let worst = chroma.map { abs(Int($0) - 512) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "batch \(name) is grey: chroma within \(worst) of 512")
        }
    }
}
