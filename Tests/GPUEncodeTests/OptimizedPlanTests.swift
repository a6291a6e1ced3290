import Foundation
import XCTest

/// The optimized plan against the reference (`--no-optimize`, the compiler without its optional
/// passes), for every built-in look: within 1 code value on smooth content and at least 50 dB on
/// real clips, on 8- and 10-bit sources, HDR tone-mapped and kept, scaled and unscaled, on both
/// transfer paths. Outputs are lossless (x264 crf 0), so what is compared is what the renderer drew;
/// the reference runs on client memory (the transfer path does not change a pixel), the optimized
/// plan on both paths across the contents.
final class OptimizedPlanTests: GPUEncodeTestCase {
    private static let tags = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"]

    private func ffmpeg(_ arguments: [String]) throws {
        _ = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// A smooth picture: slow ramps and a gentle wave in R'G'B', made Y'CbCr by swscale (BT.709,
    /// limited range, left-sited chroma), so every pixel is a colour (inside the R'G'B' cube), 8 or
    /// 10 bits. (Y'CbCr outside the cube is not smooth content: the reference clamps it per pixel
    /// before a blur, the blur on planes blurs it as it is.)
    private func smoothClip(bits: Int) throws -> URL {
        let clip = scratch("smooth\(bits).mkv")
        if FileManager.default.fileExists(atPath: clip.path) { return clip }
        let rgb = "geq=r='30+190*X/W':g='40+150*Y/H+20*sin(X/37)':b='200-150*X/W*Y/H'"
        try ffmpeg(["-f", "lavfi", "-i", "color=black:size=192x108:rate=25", "-frames:v", "3",
                    "-vf", "format=gbrp,\(rgb),scale=out_color_matrix=bt709:out_range=tv:out_h_chr_pos=0:out_v_chr_pos=128,format=\(bits == 8 ? "yuv420p" : "yuv420p10le")",
                    "-chroma_sample_location", "left"] + Self.tags + ["-c:v", "ffv1", clip.path])
        return clip
    }

    /// The first frames of a real clip, losslessly, at a small size.
    private func realClip(_ name: String, frames: Int, scale: String) throws -> URL {
        let clip = scratch("real-\(name).mkv")
        if FileManager.default.fileExists(atPath: clip.path) { return clip }
        try ffmpeg(["-i", try Paths.media(name).path, "-frames:v", String(frames), "-an", "-vf", scale, "-c:v", "ffv1", clip.path])
        return clip
    }

    /// Renders `input` with `look` optimized (on `transfer`) and as the reference; returns both outputs.
    /// Where the optimized plan scales first in swscale (`-v` says so), the reference is the same
    /// swscale Lanczos (ffmpeg's `scale` with the renderer's left-sited chroma) and then the reference
    /// plan on the scaled picture: swscale's Lanczos is the reference for a scale on the CPU.
    private func pair(_ input: URL, look: String, extra: [String] = [], transfer: String, tag: String) throws -> (URL, URL) {
        let outputs = [scratch("\(look)-\(tag)-opt.mkv"), scratch("\(look)-\(tag)-ref.mkv")]
        let common = ["--preset", look, "--crf", "0", "--x264-preset", "ultrafast", "-y"]
        let optimized = try gpuencode([input.path, outputs[0].path, "-v"] + common + extra, environment: ["GPUENCODE_TRANSFER": transfer])
        XCTAssertEqual(optimized.status, ExitCode.ok, "\(look) \(tag): \(optimized.summary)")
        var source = input
        var referenceExtra = extra
        if optimized.stderr.contains("in swscale (lanczos) before the upload"), let height = extra.firstIndex(of: "--height").map({ extra[$0 + 1] }) {
            source = scratch("\(look)-\(tag)-prescaled.mkv")
            try ffmpeg(["-i", input.path, "-vf", "scale=-2:\(height):flags=lanczos:in_h_chr_pos=0:in_v_chr_pos=128:out_h_chr_pos=0:out_v_chr_pos=128",
                        "-c:v", "ffv1", source.path])
            referenceExtra = []
        }
        let reference = try gpuencode([source.path, outputs[1].path, "--no-optimize"] + common + referenceExtra, environment: ["GPUENCODE_TRANSFER": "client"])
        XCTAssertEqual(reference.status, ExitCode.ok, "\(look) \(tag) reference: \(reference.summary)")
        return (outputs[0], outputs[1])
    }

    /// Largest difference in code values between two outputs' decoded planes (all frames).
    private func maxDifference(_ a: URL, _ b: URL, tenBit: Bool) throws -> Int {
        let format = tenBit ? "yuv420p10le" : "yuv420p"
        let x = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", a.path, "-f", "rawvideo", "-pix_fmt", format, "-"])
        let y = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", b.path, "-f", "rawvideo", "-pix_fmt", format, "-"])
        XCTAssertEqual(x.count, y.count)
        var worst = 0
        if tenBit {
            x.withUnsafeBytes { p in y.withUnsafeBytes { q in
                let u = p.bindMemory(to: UInt16.self), v = q.bindMemory(to: UInt16.self)
                for i in 0..<min(u.count, v.count) { worst = max(worst, abs(Int(u[i]) - Int(v[i]))) }
            } }
        } else {
            for i in 0..<min(x.count, y.count) { worst = max(worst, abs(Int(x[i]) - Int(y[i]))) }
        }
        return worst
    }

    private var looks: [String] {
        get throws {
            let listed = try gpuencode(["--list-presets"]).stdout.split(whereSeparator: \.isNewline).compactMap { $0.split(separator: " ").first.map(String.init) }
            XCTAssertGreaterThan(listed.count, 20)
            return listed.filter { $0 != "none" }
        }
    }

    /// Smooth content, 8-bit, unscaled and scaled: within 1 code value.
    func testEveryLookOnSmoothEightBit() throws {
        let clip = try smoothClip(bits: 8)
        for (n, look) in try looks.enumerated() {
            let transfer = n % 2 == 0 ? "pbo" : "client"
            let (opt, ref) = try pair(clip, look: look, transfer: transfer, tag: "smooth8")
            XCTAssertLessThanOrEqual(try maxDifference(opt, ref, tenBit: false), 1, "\(look), smooth 8-bit, \(transfer)")
            let (sOpt, sRef) = try pair(clip, look: look, extra: ["--height", "54"], transfer: transfer == "pbo" ? "client" : "pbo", tag: "smooth8s")
            XCTAssertLessThanOrEqual(try maxDifference(sOpt, sRef, tenBit: false), 1, "\(look), smooth 8-bit scaled")
        }
    }

    /// Smooth content, 10-bit source to 8-bit output: within 1 code value.
    func testEveryLookOnSmoothTenBit() throws {
        let clip = try smoothClip(bits: 10)
        for (n, look) in try looks.enumerated() {
            let transfer = n % 2 == 0 ? "client" : "pbo"
            let (opt, ref) = try pair(clip, look: look, transfer: transfer, tag: "smooth10")
            XCTAssertLessThanOrEqual(try maxDifference(opt, ref, tenBit: false), 1, "\(look), smooth 10-bit, \(transfer)")
        }
    }

    /// A real 8-bit clip, unscaled and scaled: at least 50 dB.
    func testEveryLookOnARealClip() throws {
        let clip = try realClip("h264_aac_360p_rooftop_17s.mp4", frames: 3, scale: "scale=320:180")
        for (n, look) in try looks.enumerated() {
            let transfer = n % 2 == 0 ? "pbo" : "client"
            let (opt, ref) = try pair(clip, look: look, transfer: transfer, tag: "real")
            XCTAssertGreaterThanOrEqual(try Oracle.psnr(opt, ref), 50, "\(look), real clip, \(transfer)")
            let (sOpt, sRef) = try pair(clip, look: look, extra: ["--height", "120"], transfer: transfer == "pbo" ? "client" : "pbo", tag: "reals")
            XCTAssertGreaterThanOrEqual(try Oracle.psnr(sOpt, sRef), 50, "\(look), real clip scaled")
        }
    }

    /// HLG (a real phone clip, rotated 90 degrees as it was filmed): tone-mapped to SDR, and kept
    /// (10-bit out, compared at 10 bits): at least 50 dB.
    func testEveryLookOnHDR() throws {
        // Its first frames as coded (landscape), small, lossless, still HLG and still rotated.
        let clip = scratch("hlg.mp4")
        try ffmpeg(["-noautorotate", "-i", try Paths.media("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4").path, "-frames:v", "3", "-an",
                    "-vf", "scale=192:108", "-c:v", "libx265", "-x265-params", "lossless=1:log-level=error", "-pix_fmt", "yuv420p10le",
                    "-color_trc", "arib-std-b67", "-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-metadata:s:v:0", "rotate=90", clip.path])
        for (n, look) in try looks.enumerated() {
            let transfer = n % 2 == 0 ? "client" : "pbo"
            let (opt, ref) = try pair(clip, look: look, transfer: transfer, tag: "hlg")
            XCTAssertGreaterThanOrEqual(try Oracle.psnr(opt, ref), 50, "\(look), HLG to SDR, \(transfer)")
            let (kOpt, kRef) = try pair(clip, look: look, extra: ["--hdr", "keep", "--codec", "h264"],
                                        transfer: transfer == "pbo" ? "client" : "pbo", tag: "keep")
            XCTAssertGreaterThanOrEqual(try Oracle.psnr(kOpt, kRef), 50, "\(look), HLG kept")
        }
    }
}
