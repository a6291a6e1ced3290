import Foundation
import XCTest

/// The sigma-8 Gaussian (`--preset heavyblur`) through the video renderer, against an independent
/// exact Gaussian in numpy: the decoded source planes converted to R'G'B' with the published BT.709
/// equations (chroma interpolated at its MPEG-2 sites: left horizontally, centred vertically;
/// clamped to 0...1 as the renderer's source is), convolved with the discrete Gaussian (sigma 8,
/// radius 24, normalised) clamped to the edge in float64, and converted back to BT.709 limited
/// Y'CbCr (chroma taken at its sites). The output is lossless x264 (crf 0), so what is compared is
/// the renderer's own output. The target of issue 15: within 3 code values everywhere, borders included.
final class BlurVideoTests: GPUEncodeTestCase {
    /// Largest |ours - exact| over every sample of the first frame: Y, Cb, Cr, and Y within 24
    /// pixels (3 sigma) of a border.
    struct Errors: CustomStringConvertible {
        var y: Double, cb: Double, cr: Double, border: Double
        var worst: Double { max(y, cb, cr) }
        var description: String { String(format: "Y %.2f, Cb %.2f, Cr %.2f, Y within 24 px of a border %.2f code values", y, cb, cr, border) }
    }

    static let oracle = #"""
    import sys, json, numpy as np
    src, out, w, h, bits = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    cw, ch = w // 2, h // 2
    dt = np.uint16 if bits > 8 else np.uint8
    raw = np.fromfile(src, dtype=dt, count=w * h + 2 * cw * ch).astype(np.float64)
    scale = 1.0 / (1 << (bits - 8))
    Y = raw[:w * h].reshape(h, w) * scale
    U = raw[w * h:w * h + cw * ch].reshape(ch, cw) * scale
    V = raw[w * h + cw * ch:].reshape(ch, cw) * scale
    def interp(p, x, y):
        # bilinear at chroma-texel coordinates x (columns), y (rows), clamped to the edge
        x = np.clip(x, 0, p.shape[1] - 1); y = np.clip(y, 0, p.shape[0] - 1)
        x0 = np.floor(x).astype(int); y0 = np.floor(y).astype(int)
        x1 = np.minimum(x0 + 1, p.shape[1] - 1); y1 = np.minimum(y0 + 1, p.shape[0] - 1)
        fx = x - x0; fy = y - y0
        top = p[y0][:, x0] * (1 - fx) + p[y0][:, x1] * fx
        bottom = p[y1][:, x0] * (1 - fx) + p[y1][:, x1] * fx
        return top * (1 - fy)[:, None] + bottom * fy[:, None]
    xs = np.arange(w) / 2.0
    ys = (np.arange(h) + 0.5) / 2.0 - 0.5
    Cb = (interp(U, xs, ys) - 128) / 224; Cr = (interp(V, xs, ys) - 128) / 224
    L = (Y - 16) / 219
    rgb = np.stack([L + 1.5748 * Cr, L - 0.18732 * Cb - 0.46812 * Cr, L + 1.8556 * Cb])
    rgb = np.clip(rgb, 0, 1)
    sigma, r = 8.0, 24
    k = np.exp(-np.arange(-r, r + 1) ** 2 / (2 * sigma * sigma)); k /= k.sum()
    def blur(a, axis):
        pad = [(0, 0)] * 3; pad[axis] = (r, r)
        p = np.pad(a, pad, mode='edge'); o = np.zeros_like(a)
        n = a.shape[axis]
        for i in range(2 * r + 1):
            o += k[i] * (p[:, i:i + n, :] if axis == 1 else p[:, :, i:i + n])
        return o
    g = blur(blur(rgb, 2), 1)
    Ly = 0.2126 * g[0] + 0.7152 * g[1] + 0.0722 * g[2]
    refY = 16 + 219 * Ly
    refCb = 128 + 224 * (g[2] - Ly) / 1.8556
    refCr = 128 + 224 * (g[0] - Ly) / 1.5748
    # chroma sites: even columns, between rows 2j and 2j + 1
    sCb = (refCb[0::2, 0::2] + refCb[1::2, 0::2]) / 2; sCr = (refCr[0::2, 0::2] + refCr[1::2, 0::2]) / 2
    o = np.fromfile(out, dtype=np.uint8, count=w * h + 2 * cw * ch).astype(np.float64)
    oY = o[:w * h].reshape(h, w); oU = o[w * h:w * h + cw * ch].reshape(ch, cw); oV = o[w * h + cw * ch:].reshape(ch, cw)
    dY = np.abs(oY - refY)
    m = np.zeros((h, w), bool); m[:24, :] = m[-24:, :] = True; m[:, :24] = m[:, -24:] = True
    print(json.dumps({"y": dY.max(), "cb": np.abs(oU - sCb).max(), "cr": np.abs(oV - sCr).max(), "border": dY[m].max()}))
    """#

    /// Frame 0 of `input` and of gpuencode's heavyblur output, compared by the oracle.
    func errors(_ input: URL, width: Int, height: Int, bits: Int, arguments: [String] = [],
                environment: [String: String] = [:], name: String) throws -> Errors {
        let output = scratch("\(name).mkv")
        let result = try gpuencode([input.path, output.path, "--preset", "heavyblur", "--crf", "0", "--to", "0.1", "-y"] + arguments,
                                   environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
        let source = scratch("\(name).src.yuv"), ours = scratch("\(name).out.yuv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-frames:v", "1", "-f", "rawvideo",
                                         "-pix_fmt", bits > 8 ? "yuv420p10le" : "yuv420p", source.path])
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", output.path, "-frames:v", "1", "-f", "rawvideo",
                                         "-pix_fmt", "yuv420p", ours.path])
        let json = try Oracle.runChecked("python3", ["-c", BlurVideoTests.oracle, source.path, ours.path, "\(width)", "\(height)", "\(bits)"]).stdout
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Double],
              let y = object["y"], let cb = object["cb"], let cr = object["cr"], let border = object["border"] else {
            throw OracleError("unreadable oracle output: \(json)")
        }
        let e = Errors(y: y, cb: cb, cr: cr, border: border)
        print("heavyblur \(name): \(e)")
        return e
    }

    func requireNumpy() throws {
        guard (try? Oracle.run("python3", ["-c", "import numpy"]))?.status == 0 else { throw XCTSkip("needs python3 with numpy") }
    }

    /// A sharp synthetic pattern (testsrc2: hard edges, saturated colours, edges on every border),
    /// 8-bit and 10-bit, on every render path and both transfers.
    func testHeavyblurIsWithin3CodeValuesOfExactGaussianOnASharpPattern() throws {
        try requireNumpy()
        let tags = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
        let eight = scratch("pattern8.mkv"), ten = scratch("pattern10.mkv")
        try Oracle.makeClip(eight, seconds: 0.2, size: "322x242", audio: false, videoArguments: ["-c:v", "ffv1", "-pix_fmt", "yuv420p"] + tags)
        try Oracle.makeClip(ten, seconds: 0.2, size: "322x242", audio: false, videoArguments: ["-c:v", "ffv1", "-pix_fmt", "yuv420p10le"] + tags)
        let runs: [(String, URL, Int, [String], [String: String])] = [
            ("8-bit direct pbo", eight, 8, [], ["GPUENCODE_TRANSFER": "pbo"]),
            ("8-bit direct client", eight, 8, [], ["GPUENCODE_TRANSFER": "client"]),
            ("8-bit rgba", eight, 8, ["--render-path", "rgba"], [:]),
            ("8-bit unfused", eight, 8, ["--render-path", "unfused"], [:]),
            ("10-bit direct pbo", ten, 10, [], ["GPUENCODE_TRANSFER": "pbo"]),
            ("10-bit direct client", ten, 10, [], ["GPUENCODE_TRANSFER": "client"]),
            ("10-bit rgba", ten, 10, ["--render-path", "rgba"], [:]),
        ]
        for (name, input, bits, arguments, environment) in runs {
            let e = try errors(input, width: 322, height: 242, bits: bits, arguments: arguments, environment: environment,
                               name: name.replacingOccurrences(of: " ", with: "-"))
            XCTAssertLessThanOrEqual(e.worst, 3, "\(name): \(e)")
        }
    }

    /// A real camera frame (the 360p rooftop clip), both transfers.
    func testHeavyblurIsWithin3CodeValuesOfExactGaussianOnARealClip() throws {
        try requireNumpy()
        let clip = try Paths.media("h264_aac_360p_rooftop_17s.mp4")
        for transfer in ["pbo", "client"] {
            let e = try errors(clip, width: 640, height: 360, bits: 8, environment: ["GPUENCODE_TRANSFER": transfer], name: "rooftop-\(transfer)")
            XCTAssertLessThanOrEqual(e.worst, 3, "rooftop 360p, \(transfer): \(e)")
        }
    }
}
