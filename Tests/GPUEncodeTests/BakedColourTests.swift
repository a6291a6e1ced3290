import Foundation
import XCTest

// Baked colour (BakedColour.swift): with the optional passes on, a point colour chain that costs
// more than a tetrahedral 3D table lookup runs as one, sized so the lookup stays within an error
// bound of the exact math. Checked end to end against the reference plan (`--no-optimize`): both
// written losslessly and decoded by ffmpeg, sample by sample on smooth content and by ffmpeg's
// PSNR on real clips; the -v pass line says whether (and at which size) a chain was baked.
final class BakedColourTests: BatchTestCase {
    /// A smooth clip (ffmpeg's `gradients`, colours fixed: FFmpeg 5.1 picks random ones otherwise),
    /// 8-bit or (`tenBit`) 10-bit, optionally tagged HLG BT.2020, as lossless FFV1.
    private func gradient(_ name: String, tenBit: Bool = false, hlg: Bool = false) throws -> URL {
        let url = scratch(name)
        let tags = hlg ? ["-color_trc", "arib-std-b67", "-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-color_range", "tv"] : []
        _ = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                             "gradients=s=320x180:d=0.3:r=10:nb_colors=4:c0=0x1f4fa0:c1=0xe0c040:c2=0x30a050:c3=0xc03060:x0=0:y0=0:x1=319:y1=179",
                                             "-pix_fmt", tenBit ? "yuv420p10le" : "yuv420p", "-c:v", "ffv1"] + tags + [url.path])
        return url
    }

    /// Decoded samples as integers (8-bit, or 16-bit little endian for `format` ending in 10le).
    private func samples(_ file: URL, format: String) throws -> [Int] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-fps_mode", "passthrough",
                                                        "-f", "rawvideo", "-pix_fmt", format, "-"])
        if format.hasSuffix("10le") { return data.withUnsafeBytes { $0.bindMemory(to: UInt16.self).map(Int.init) } }
        return data.map(Int.init)
    }

    /// The optimized and reference transcodes of `input` (lossless H.264), and the optimized run's
    /// pass line (`-v`). Both drawn by the renderer (no CPU kernel: those are CPUPlanTests'), so a
    /// chain that does not bake comes out as the reference's, byte for byte.
    private func pair(_ input: URL, _ name: String, _ arguments: [String], transfer: String = "pbo") throws -> (optimized: URL, reference: URL, passes: String) {
        let (optimized, reference) = (scratch("\(name).mkv"), scratch("\(name)-reference.mkv"))
        let lossless = ["--codec", "h264", "--x264-params", "qp=0", "-v"]
        let a = try gpuencode([input.path, optimized.path] + arguments + lossless, environment: ["GPUENCODE_TRANSFER": transfer, "GPUENCODE_CPU_KERNELS": "0"])
        XCTAssertEqual(a.status, 0, "\(name): \(a.summary)")
        let b = try gpuencode([input.path, reference.path] + arguments + lossless + ["--no-optimize"], environment: ["GPUENCODE_TRANSFER": transfer, "GPUENCODE_CPU_KERNELS": "0"])
        XCTAssertEqual(b.status, 0, "\(name) --no-optimize: \(b.summary)")
        XCTAssertFalse(b.stderr.contains("colour baked"), "\(name): the reference plan bakes nothing: \(b.stderr)")
        return (optimized, reference, a.stderr.split(whereSeparator: \.isNewline).first { $0.contains("pass 1:") }.map(String.init) ?? "")
    }

    /// The bound the pass line reports ("... of B code values)").
    private func bound(_ passes: String) -> Double? {
        guard let r = passes.range(of: " of "), let end = passes[r.upperBound...].range(of: " code values") else { return nil }
        return Double(passes[r.upperBound..<end.lowerBound])
    }

    private func assertWithin(_ optimized: URL, _ reference: URL, format: String, codes: Int, mean: Double = 0.5, _ what: String) throws {
        let (a, b) = (try samples(optimized, format: format), try samples(reference, format: format))
        XCTAssertEqual(a.count, b.count, what)
        XCTAssertGreaterThan(a.count, 0, what)
        var worst = 0, total = 0
        for (x, y) in zip(a, b) { let d = abs(x - y); worst = max(worst, d); total += d }
        XCTAssertLessThanOrEqual(worst, codes, "\(what): largest difference \(worst) code values")
        XCTAssertLessThan(Double(total) / Double(max(a.count, 1)), mean, "\(what): mean difference")
    }

    /// 8-bit looks whose exact chain rounds to 8 bits between filters (GPUImage's staircase) cannot
    /// be interpolated within 1 code value (measured at 65³: 1977 and nashville 3, transfer 2, instant
    /// 1.5), so they keep the exact chain: the pass line names no table and the output is the
    /// reference's, byte for byte. Both transfer paths for 1977.
    func testEightBitLooksThatRoundKeepTheExactChain() throws {
        let input = try gradient("gradient8.mkv")
        for look in ["1977", "instant", "nashville", "transfer"] {
            for transfer in look == "1977" ? ["pbo", "client"] : ["pbo"] {
                let name = "\(look)-\(transfer)"
                let (optimized, reference, passes) = try pair(input, name, ["--preset", look], transfer: transfer)
                XCTAssertFalse(passes.contains("colour baked"), "\(name): \(passes)")
                XCTAssertEqual(try samples(optimized, format: "yuv420p"), try samples(reference, format: "yuv420p"), name)
            }
        }
    }

    /// 10-bit sources: to 8-bit SDR (`transfer`: 65³ within 1 code value, no 8-bit rounding between
    /// filters) and `--hdr keep` on HLG (10-bit output, within 4 code values of 1023).
    func testTenBitSourcesAndKeptHDRWithinTheBound() throws {
        let sdr = try gradient("gradient10.mkv", tenBit: true)
        var (optimized, reference, passes) = try pair(sdr, "transfer10", ["--preset", "transfer"])
        XCTAssertTrue(passes.contains("colour baked into a 65³ table") && passes.contains("of 1 code values"), passes)
        try assertWithin(optimized, reference, format: "yuv420p", codes: 2, "transfer, 10-bit source")
        let hlg = try gradient("hlg10.mkv", tenBit: true, hlg: true)
        for transfer in ["pbo", "client"] {
            (optimized, reference, passes) = try pair(hlg, "keep-\(transfer)", ["--preset", "instant", "--hdr", "keep"], transfer: transfer)
            XCTAssertTrue(passes.contains("colour baked into a 17³ table") && passes.contains("of 4 code values"), passes)
            try assertWithin(optimized, reference, format: "yuv420p10le", codes: 5, mean: 1, "instant, --hdr keep, \(transfer)")
        }
    }

    /// A real 10-bit clip: `transfer` baked (no rounding between its filters at 10 bits) at ≥ 50 dB
    /// against the reference.
    func testRealClipsAgreeWithTheReference() throws {
        let input = URL(fileURLWithPath: "../shared/media/vp9_10bit_240p_video_only.webm")
        let (optimized, reference, passes) = try pair(input, "vp9-10bit", ["--preset", "transfer", "--to", "0.5"])
        XCTAssertTrue(passes.contains("colour baked"), passes)
        let psnr = try Oracle.planePSNR(optimized, reference)
        XCTAssertGreaterThanOrEqual(psnr.min() ?? 0, 50, "PSNR \(psnr)")
    }

    /// What does not bake runs as before, to the byte: HDR to SDR (no table size holds tone mapping's
    /// gamut edge within 1 code value), sepia and chrome (cheaper than the lookup), position
    /// filters (vignette reads uv).
    func testUnbakedChainsAreUnchanged() throws {
        let hlg = try gradient("hlg-sdr.mkv", tenBit: true, hlg: true)
        let sdr = try gradient("plain.mkv")
        for (input, look) in [(hlg, "none"), (hlg, "1977"), (sdr, "chrome"), (sdr, "1977"), (sdr, "nashville")] {
            let name = "\(look)-\(input.lastPathComponent)"
            let (optimized, reference, passes) = try pair(input, name, ["--preset", look])
            XCTAssertFalse(passes.contains("colour baked"), "\(name): \(passes)")
            XCTAssertEqual(try samples(optimized, format: "yuv420p"), try samples(reference, format: "yuv420p"), name)
        }
    }
}
