import Foundation
import XCTest

/// The plane-native writers of the fused direct path (one chain evaluation per luma pixel and per
/// chroma sample) against the reference plan (`--no-optimize`: the chain on full-resolution R'G'B',
/// then decimated). Both are encoded losslessly and decoded by ffmpeg, and compared sample by
/// sample here (max difference) and by ffmpeg's psnr filter: within 1 code value on smooth content,
/// at least 50 dB per plane on real clips, on every transfer path, 8- and 10-bit sources. Looks the
/// plan leaves out, and HDR sources (tone-mapped or kept), must come out as the reference, byte for byte.
final class PlaneNativeTests: GPUEncodeTestCase {
    /// Looks the plane-native writers run (`PlaneNativeShaders.applies`), and some it leaves to the reference.
    static let planeNativeLooks = ["identity", "sepia", "grayscale"]
    /// (faded: three filters rounding to 8 bits reached 2 code values on a gradient of random direction.)
    static let referenceLooks = ["1977", "clarendon", "toaster", "fade", "amatorka", "faded"]
    /// The real clips take longer: the looks that came closest to the bar there (360p rooftop:
    /// sepia Cr 50.7 dB over half a second, vignette 53.7 dB).
    static let realClipLooks = ["sepia", "grayscale"]

    /// A colour matrix the bar admits by what it is (`PlaneNativeShaders.staysClose`: no negative
    /// share, no colour difference stretched), not a built-in: a warm tint, then contrast 0.9.
    private func warmMatrixPreset() throws -> String {
        let file = scratch("warm-matrix.json")
        try Data(#"{"version": 2, "name": "warm-matrix", "filters": [{"filter": "colorMatrix", "matrix": [[0.9, 0.1, 0, 0], [0.05, 0.9, 0.05, 0], [0, 0.1, 0.8, 0], [0, 0, 0, 1]]}, {"filter": "contrast", "contrast": 0.9}]}"#.utf8).write(to: file)
        return file.path
    }
    /// The transfer paths: pixel buffers, client memory, and the packed pass as a compute shader
    /// writing into the pixel buffers (`TransferOptions.computePass`, off by default on llvmpipe),
    /// all with the pass drawn by the renderer; and `cpu`, the same pass run by the CPU kernels
    /// (`RunOnCPU`, which the cost model picks on llvmpipe where it can).
    static let transfers = ["pbo", "client", "compute", "cpu"]

    /// A smooth 4:2:0 picture (four-colour gradient) as a lossless clip of `format`.
    private func gradient(_ format: String) throws -> URL {
        let clip = scratch("gradient-\(format).mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                         "gradients=s=320x240:c0=0x102060:c1=0xd0a040:c2=0x40c0a0:c3=0xa04080:nb_colors=4:speed=0.01:d=0.2:r=10",
                                         "-pix_fmt", format, "-c:v", "ffv1", "-colorspace", "bt709", "-color_primaries", "bt709",
                                         "-color_trc", "bt709", "-color_range", "tv", clip.path])
        return clip
    }

    /// `input` through `preset` with and without the optional passes, both lossless.
    private func renders(_ input: URL, preset: String, transfer: String, extra: [String] = [], tenBit: Bool = false,
                         file: StaticString = #filePath, line: UInt = #line) throws -> (reference: URL, optimized: URL)? {
        let encode = tenBit ? ["--codec", "hevc", "--x265-params", "lossless=1"] : ["--crf", "0", "--x264-preset", "ultrafast"]
        var settings = transfer == "compute" ? ["GPUENCODE_TRANSFER": "pbo", "GPUENCODE_COMPUTE": "1"] : ["GPUENCODE_TRANSFER": transfer, "GPUENCODE_COMPUTE": "0"]
        settings["GPUENCODE_CPU_KERNELS"] = transfer == "cpu" ? "1" : "0"
        if transfer == "cpu" { settings["GPUENCODE_TRANSFER"] = "client" }
        let environment = ProcessInfo.processInfo.environment.merging(settings) { $1 }
        var outputs: [URL] = []
        for optimize in [false, true] {
            let look = URL(fileURLWithPath: preset).deletingPathExtension().lastPathComponent
            let output = scratch("\(input.deletingPathExtension().lastPathComponent)-\(look)-\(transfer)-\(optimize).mkv")
            let result = try gpuencode([input.path, output.path, "-y", "--preset", preset, "-t", "0.5"] + encode + extra
                                       + (optimize ? [] : ["--no-optimize"]), environment: environment)
            XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
            guard result.status == ExitCode.ok else { return nil }
            outputs.append(output)
        }
        return (outputs[0], outputs[1])
    }

    /// The largest per-sample difference of the decoded planes (all frames), in the output's code values.
    private func maxDifference(_ a: URL, _ b: URL, tenBit: Bool) throws -> Int {
        let format = tenBit ? "yuv420p10le" : "yuv420p"
        let decode = { (f: URL) in try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", f.path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", format, "-"]) }
        let (x, y) = (try decode(a), try decode(b))
        XCTAssertEqual(x.count, y.count)
        var worst = 0
        if tenBit {
            for i in stride(from: 0, to: min(x.count, y.count) - 1, by: 2) {
                worst = max(worst, abs((Int(x[i]) | Int(x[i + 1]) << 8) - (Int(y[i]) | Int(y[i + 1]) << 8)))
            }
        } else {
            for i in 0..<min(x.count, y.count) { worst = max(worst, abs(Int(x[i]) - Int(y[i]))) }
        }
        return worst
    }

    private func checkSmooth(_ format: String) throws {
        let input = try gradient(format)
        for preset in Self.planeNativeLooks + [try warmMatrixPreset()] {
            for transfer in Self.transfers {
                guard let pair = try renders(input, preset: preset, transfer: transfer) else { continue }
                let (reference, optimized) = pair
                let worst = try maxDifference(reference, optimized, tenBit: false)
                print("smooth \(format) \(preset) \(transfer): max difference \(worst)")
                XCTAssertLessThanOrEqual(worst, 1, "smooth \(format) \(preset) \(transfer): \(worst) code values from the reference")
            }
        }
    }

    func testSmoothGradientWithinOneCodeValue() throws {
        try checkSmooth("yuv420p")
    }

    func testTenBitSmoothGradientWithinOneCodeValue() throws {
        try checkSmooth("yuv420p10le")
    }

    /// Real footage: edges are where the chain's curvature shows; every plane at least 50 dB.
    func testRealClipsAtLeast50dB() throws {
        let clips = [try Paths.media("h264_aac_360p_rooftop_17s.mp4"), try Paths.media("h264_aac_720p_bframes_editlist_1s.mp4"),
                     try Paths.media("vp9_10bit_240p_video_only.webm")]
        for clip in clips {
            for preset in Self.realClipLooks + [try warmMatrixPreset()] {
                for transfer in Self.transfers {
                    guard let pair = try renders(clip, preset: preset, transfer: transfer) else { continue }
                    let (reference, optimized) = pair
                    let scores = try Oracle.planePSNR(optimized, reference)
                    print("\(clip.lastPathComponent) \(preset) \(transfer): PSNR Y/Cb/Cr \(scores)")
                    XCTAssertGreaterThanOrEqual(scores.min() ?? 0, 50, "\(clip.lastPathComponent) \(preset) \(transfer): \(scores) dB")
                }
            }
        }
    }

    /// HLG tone-mapped to SDR is left to the reference (the tone curve over an edge's neighbourhood
    /// cost sepia's Cr 47.1 dB): rotated (the per-plane passes) and upright (the packed pass, a
    /// turned copy made here) come out as `--no-optimize` does.
    func testHDRToSDRIsTheReference() throws {
        let rotated = try Paths.media("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4")
        let upright = scratch("hlg-upright.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", rotated.path, "-t", "0.4", "-an", "-vf", "scale=360:-2",
                                         "-c:v", "libx265", "-x265-params", "lossless=1:log-level=error", "-pix_fmt", "yuv420p10le",
                                         "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", upright.path])
        for clip in [upright, rotated] {
            guard let pair = try renders(clip, preset: "sepia", transfer: "client") else { continue }
            let (reference, optimized) = pair
            XCTAssertEqual(try maxDifference(reference, optimized, tenBit: false), 0, "HDR to SDR \(clip.lastPathComponent) differs from the reference")
        }
    }

    /// `--hdr keep` (10-bit output planes in the source's own matrix) is left to the reference too:
    /// the wide-gamut R'G'B' clips at saturated edges (sepia's Cr measured 48.6 dB plane-native).
    func testHDRKeepIsTheReference() throws {
        let clip = try Paths.media("hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4")
        let upright = scratch("hlg-keep-upright.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", clip.path, "-t", "0.4", "-an", "-vf", "scale=360:-2",
                                         "-c:v", "libx265", "-x265-params", "lossless=1:log-level=error", "-pix_fmt", "yuv420p10le",
                                         "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", upright.path])
        for transfer in ["pbo", "client"] {
            guard let pair = try renders(upright, preset: "sepia", transfer: transfer, extra: ["--hdr", "keep"], tenBit: true) else { continue }
            let (reference, optimized) = pair
            XCTAssertEqual(try maxDifference(reference, optimized, tenBit: true), 0, "--hdr keep sepia \(transfer) differs from the reference")
        }
    }

    /// Looks the plan leaves out run the reference's writers: the same output with or without it.
    func testExcludedLooksAreTheReference() throws {
        let clip = try Paths.media("h264_aac_360p_rooftop_17s.mp4")
        for preset in Self.referenceLooks {
            guard let pair = try renders(clip, preset: preset, transfer: "client") else { continue }
            let (reference, optimized) = pair
            XCTAssertEqual(try maxDifference(reference, optimized, tenBit: false), 0, "\(preset) left out of the plan differs from the reference")
        }
    }
}
