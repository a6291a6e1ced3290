import Foundation
import XCTest

/// The optimized plan's large Gaussian (`--preset heavyblur`, sigma 8: PlaneBlur, on the Y'CbCr
/// planes at a quarter grid) against an independent exact Gaussian in numpy float64 on the same
/// decoded planes, computed per plane as the plan defines it: Y blurred with sigma 8 (radius 24),
/// Cb and Cr with sigma 4 (radius 12) at chroma resolution, normalised, clamped to the edge; BT.709
/// limited in and out, so the output's planes are those blurred planes. Within 3 code values
/// everywhere, borders included; against `--no-optimize` (the reference) >= 50 dB on a real clip.
/// Outputs are lossless x264 (crf 0), so what is compared is the renderer's own output. Each check
/// runs the plane blur as the renderer draws it (pbo and client transfers, the CPU kernels kept
/// off) and as the CPU kernel computes it (`GridBlurKernel`, which the cost model picks on llvmpipe).
final class FastBlurTests: GPUEncodeTestCase {
    /// The renderer's two transfers, and the CPU kernel.
    static let runs = ["pbo", "client", "cpu"]

    static let oracle = #"""
    import sys, json, numpy as np
    src, out, w, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    cw, ch = w // 2, h // 2
    def planes(path):
        raw = np.fromfile(path, dtype=np.uint8, count=w * h + 2 * cw * ch).astype(np.float64)
        return raw[:w * h].reshape(h, w), raw[w * h:w * h + cw * ch].reshape(ch, cw), raw[w * h + cw * ch:].reshape(ch, cw)
    def blur(a, sigma, r):
        k = np.exp(-np.arange(-r, r + 1) ** 2 / (2 * sigma * sigma)); k /= k.sum()
        for axis in (0, 1):
            pad = [(0, 0), (0, 0)]; pad[axis] = (r, r)
            p = np.pad(a, pad, mode='edge'); o = np.zeros_like(a); n = a.shape[axis]
            for i in range(2 * r + 1):
                o += k[i] * (p[i:i + n, :] if axis == 0 else p[:, i:i + n])
            a = o
        return a
    Y, U, V = planes(src)
    oY, oU, oV = planes(out)
    print(json.dumps({"y": np.abs(oY - blur(Y, 8.0, 24)).max(), "cb": np.abs(oU - blur(U, 4.0, 12)).max(),
                      "cr": np.abs(oV - blur(V, 4.0, 12)).max()}))
    """#

    func requireNumpy() throws {
        guard (try? Oracle.run("python3", ["-c", "import numpy"]))?.status == 0 else { throw XCTSkip("needs python3 with numpy") }
    }

    /// heavyblur of `input`'s first frame (`--to 0.1`) into `name`.mkv, losslessly; `transfer` one of
    /// `runs` ("cpu": the CPU kernels allowed, else kept off).
    func heavyblur(_ input: URL, _ name: String, arguments: [String] = [], transfer: String = "pbo") throws -> (URL, ProcessResult) {
        let output = scratch("\(name).mkv")
        let settings = ["GPUENCODE_TRANSFER": transfer == "cpu" ? "client" : transfer, "GPUENCODE_CPU_KERNELS": transfer == "cpu" ? "1" : "0"]
        let result = try gpuencode([input.path, output.path, "--preset", "heavyblur", "--crf", "0", "--to", "0.1", "-y", "-v"] + arguments,
                                   environment: ProcessInfo.processInfo.environment.merging(settings) { $1 })
        XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
        return (output, result)
    }

    /// Whether the run drew the plane blur (its first pass's line) or the CPU kernel computed it.
    func ranPlaneBlur(_ result: ProcessResult, transfer: String) -> Bool {
        transfer == "cpu" ? result.stderr.contains("on the CPU: source Y'CbCr, gaussianBlur (sigma 8; chroma 4) on a grid")
            && result.stderr.contains("GPU: none made") : result.stderr.contains("plane-native")
    }

    /// Largest |ours - exact| per plane (Y, Cb, Cr) over the first frame.
    func errors(_ input: URL, _ output: URL, width: Int, height: Int) throws -> [Double] {
        let source = scratch("src.yuv"), ours = scratch("out.yuv")
        for (file, raw) in [(input, source), (output, ours)] {
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file.path, "-frames:v", "1", "-f", "rawvideo",
                                             "-pix_fmt", "yuv420p", raw.path])
        }
        let json = try Oracle.runChecked("python3", ["-c", FastBlurTests.oracle, source.path, ours.path, "\(width)", "\(height)"]).stdout
        guard let o = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Double],
              let y = o["y"], let cb = o["cb"], let cr = o["cr"] else { throw OracleError("unreadable oracle output: \(json)") }
        return [y, cb, cr]
    }

    /// testsrc2 (hard edges, saturated bars, edges on every border) at 360p, 648x364 and 1080p, both
    /// transfers and the CPU kernel: the plane blur runs (its passes printed) and is within 3 codes of the exact Gaussian.
    func testPlaneBlurIsWithin3CodeValuesOfExactGaussianOnASharpPattern() throws {
        try requireNumpy()
        let tags = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
        // (648: rows of 20 steps of 32 columns and 8 more, chroma rows of 324: the kernels' tails.)
        for (width, height) in [(640, 360), (648, 364), (1920, 1080)] {
            let input = scratch("pattern\(height).mkv")
            try Oracle.makeClip(input, seconds: 0.12, size: "\(width)x\(height)", audio: false,
                                videoArguments: ["-c:v", "ffv1", "-pix_fmt", "yuv420p"] + tags)
            for transfer in FastBlurTests.runs {
                let (output, result) = try heavyblur(input, "pattern\(height)-\(transfer)", transfer: transfer)
                XCTAssertTrue(ranPlaneBlur(result, transfer: transfer), "\(height)p \(transfer): the plane blur did not run: \(result.stderr)")
                let e = try errors(input, output, width: width, height: height)
                print("plane blur testsrc2 \(height)p \(transfer): Y \(e[0]), Cb \(e[1]), Cr \(e[2])")
                XCTAssertLessThanOrEqual(e.max()!, 3, "\(height)p \(transfer): Y, Cb, Cr \(e)")
            }
        }
    }

    /// The real 360p clip: within 3 codes of the exact Gaussian, and >= 50 dB against the reference
    /// plan (`--no-optimize`, the R'G'B' blur), over its first frames.
    func testPlaneBlurOnARealClipMatchesTheExactGaussianAndTheReference() throws {
        try requireNumpy()
        let clip = try Paths.media("h264_aac_360p_rooftop_17s.mp4")
        for transfer in FastBlurTests.runs {
            let (output, result) = try heavyblur(clip, "rooftop-\(transfer)", transfer: transfer)
            XCTAssertTrue(ranPlaneBlur(result, transfer: transfer), "\(transfer): the plane blur did not run")
            let e = try errors(clip, output, width: 640, height: 360)
            print("plane blur rooftop \(transfer): Y \(e[0]), Cb \(e[1]), Cr \(e[2])")
            XCTAssertLessThanOrEqual(e.max()!, 3, "rooftop \(transfer): Y, Cb, Cr \(e)")
        }
        let (reference, referenceRun) = try heavyblur(clip, "rooftop-reference", arguments: ["--to", "1", "--no-optimize"])
        XCTAssertFalse(referenceRun.stderr.contains("plane-native"), "--no-optimize must keep the R'G'B' blur")
        for transfer in ["pbo", "cpu"] {
            let (fast, _) = try heavyblur(clip, "rooftop-fast-\(transfer)", arguments: ["--to", "1"], transfer: transfer)
            let psnr = try Oracle.psnr(fast, reference)
            print("plane blur rooftop (\(transfer)) against --no-optimize: \(psnr) dB")
            XCTAssertGreaterThanOrEqual(psnr, 50, transfer)
        }
    }

    /// Sources the plane blur does not take keep the reference plan, byte for byte: 10-bit (it
    /// reads 8-bit planes), a width not a multiple of 8, a sigma below 8.
    func testOtherSourcesKeepTheReferencePlan() throws {
        let ten = scratch("ten.mkv"), narrow = scratch("narrow.mkv")
        try Oracle.makeClip(ten, seconds: 0.12, size: "640x360", audio: false, videoArguments: ["-c:v", "ffv1", "-pix_fmt", "yuv420p10le"])
        try Oracle.makeClip(narrow, seconds: 0.12, size: "644x360", audio: false, videoArguments: ["-c:v", "ffv1", "-pix_fmt", "yuv420p"])
        for (input, name) in [(ten, "ten"), (narrow, "narrow")] {
            let (fast, run) = try heavyblur(input, "\(name)-fast", transfer: "cpu")
            XCTAssertFalse(run.stderr.contains("plane-native") || run.stderr.contains("on the CPU: source"), "\(name): \(run.stderr)")
            let (reference, _) = try heavyblur(input, "\(name)-reference", arguments: ["--no-optimize"])
            XCTAssertEqual(try Oracle.planePSNR(fast, reference), [99, 99, 99], name)
        }
    }
}
