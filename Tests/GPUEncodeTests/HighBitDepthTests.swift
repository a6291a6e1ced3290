import Foundation
import XCTest

/// 10- and 12-bit sources reach the GPU as 16-bit textures (no swscale to 8 bits first). The oracle is
/// the source itself: a smooth, in-gamut picture written sample by sample here, whose exact 8-bit value
/// is code / 2^(bits-8) (the identity preset leaves in-gamut Y'CbCr as it is, up to rounding).
final class HighBitDepthTests: GPUEncodeTestCase {
    /// Render paths and transfers each case runs on: the packed 4:2:0 single pass (pixel buffer
    /// objects and client memory), the per-plane passes (4:2:2 direct), and the RGBA chain.
    private static let runs: [(path: String, transfer: String)] = [("direct", "pbo"), ("direct", "client"), ("rgba", "client"), ("rgba", "pbo")]

    func testTenBit420KeepsItsPrecision() throws {
        try checkRamp(format: "yuv420p10le", bits: 10, chroma: (2, 2))
    }

    func testTenBit422KeepsItsPrecision() throws {
        try checkRamp(format: "yuv422p10le", bits: 10, chroma: (2, 1))
    }

    func testTenBit444KeepsItsPrecision() throws {
        try checkRamp(format: "yuv444p10le", bits: 10, chroma: (1, 1))
    }

    func testTwelveBit420KeepsItsPrecision() throws {
        try checkRamp(format: "yuv420p12le", bits: 12, chroma: (2, 2))
    }

    /// A preview of a 10-bit source goes through the half-float chain and is read back as floats:
    /// it matches zimg's (zscale) RGB rendering of the same frame. Reading the half-float texture as
    /// bytes was a GL error (0x502) before.
    func testPreviewOfTenBitSource() throws {
        let input = scratch("ten.mkv")
        try Oracle.makeClip(input, seconds: 0.2, audio: false, videoArguments: [
            "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv444p10le", "-colorspace", "bt709", "-color_range", "tv",
            "-color_primaries", "bt709", "-color_trc", "bt709", "-c:v", "ffv1"])
        let png = scratch("ten.png")
        // --at 0: the reference is the first frame (the default is 10% in).
        let result = try gpuencode(["preview", input.path, "--preset", "identity", "--at", "0", "-o", png.path])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }
        let reference = scratch("ref.png")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-frames:v", "1", "-vf",
                                         "zscale=matrixin=709:rangein=limited:filter=bilinear,format=gbrpf32le,zscale,format=rgb24", reference.path])
        // Oracle.psnr reads Y'CbCr summaries; these are RGB pictures, scored in RGB.
        let run = try Oracle.runChecked("ffmpeg", ["-nostdin", "-hide_banner", "-i", png.path, "-i", reference.path,
                                                   "-lavfi", "[0:v]format=gbrp[a];[1:v]format=gbrp[b];[a][b]psnr", "-f", "null", "-"])
        let line = try XCTUnwrap(run.stderr.split(whereSeparator: \.isNewline).last { $0.contains("PSNR r:") }, run.stderr)
        let figure = line[try XCTUnwrap(line.range(of: "average:")).upperBound...].prefix { !$0.isWhitespace }
        let score = try XCTUnwrap(Double(figure), String(line))
        print("preview of 10-bit 4:4:4 against zscale: \(score) dB")
        XCTAssertGreaterThanOrEqual(score, 45, "preview of a 10-bit source against zscale: \(score) dB")
    }

    /// A 10-bit ramp 4 code values of 8 bits wide per 256 pixels (Y 100..116 over 960 pixels) written as 8
    /// bits: undithered it is 17 flat bands 60 pixels wide, each up to 0.45 codes off on average; ffmpeg's
    /// conversion (`format=yuv420p`: swscale's ordered dither, the same with `sws_dither=ed` or `auto`) keeps
    /// every 8x8 mean within 0.03 and flat runs to 46 pixels. Ours must do as well: measured 8x8 mean error
    /// rms 0.016 (ffmpeg 0.016; RGBA path 0.034), longest flat run 32 (46); without the dither 0.45 and 60
    /// (sws_dither=none).
    /// Pipelined and --deterministic runs are byte for byte the same (the pattern depends on position only).
    func testTenBitRampDoesNotBand() throws {
        let (width, height) = (960, 128)
        let code = { (x: Int) -> Int in Int((400 + 64 * Double(x) / Double(width - 1)).rounded()) }
        var frame = Data()
        for _ in 0..<height { for x in 0..<width { let v = code(x); frame.append(UInt8(v & 0xff)); frame.append(UInt8(v >> 8)) } }
        for _ in 0..<(height / 2 * width / 2 * 2) { frame.append(0); frame.append(2) }  // Cb = Cr = 512
        let raw = scratch("band.raw")
        try (frame + frame).write(to: raw)
        let input = scratch("band.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-s", "\(width)x\(height)",
                                         "-r", "25", "-i", raw.path, "-colorspace", "bt709", "-color_range", "tv", "-c:v", "ffv1", input.path])
        func lumaOf(_ file: URL) throws -> Data {
            try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        }
        func longestRun(_ d: Data) -> Int {
            var longest = 0
            for r in 8..<(height - 8) {
                var run = 1
                for x in 1..<width {
                    run = d[r * width + x] == d[r * width + x - 1] ? run + 1 : 1
                    longest = max(longest, run)
                }
            }
            return longest
        }
        let reference = scratch("band-ffmpeg.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-vf", "scale=sws_dither=ed,format=yuv420p", "-c:v", "ffv1", reference.path])
        let theirs = try lumaOf(reference)
        let theirError = Self.localMeanError(theirs, width: width, height: height) { x, _ in Double(code(x)) / 4 }
        var outputs: [Data] = []
        for (path, deterministic) in [("direct", false), ("direct", true), ("rgba", false)] {
            let output = scratch("band-\(path)-\(deterministic).mkv")
            let result = try gpuencode([input.path, output.path, "--crf", "0", "--x264-preset", "ultrafast", "--render-path", path]
                                       + (deterministic ? ["--deterministic"] : []))
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            guard result.status == ExitCode.ok else { continue }
            let ours = try lumaOf(output)
            let error = Self.localMeanError(ours, width: width, height: height) { x, _ in Double(code(x)) / 4 }
            let run = longestRun(ours)
            print("10-bit ramp \(path)\(deterministic ? " --deterministic" : ""): 8x8 mean error rms \(error) codes, longest flat run \(run) px; ffmpeg \(theirError), \(longestRun(theirs)) px")
            // A tenth of the undithered 0.45; the RGBA path's half-float intermediates measure 0.034.
            XCTAssertLessThanOrEqual(error, max(theirError, 0.016) + 0.03, "banding: 8x8 mean error \(error) against ffmpeg's \(theirError)")
            XCTAssertLessThanOrEqual(run, longestRun(theirs), "banding: flat runs of \(run) pixels against ffmpeg's \(longestRun(theirs))")
            if path == "direct" { outputs.append(ours) }
        }
        XCTAssertEqual(outputs.count, 2)
        XCTAssertTrue(outputs.count == 2 && outputs[0] == outputs[1], "pipelined and --deterministic differ")
    }

    // MARK: - Helpers

    /// The rms difference between 8x8 box means of the output's Y (first plane of `decoded`) and of the
    /// exact values: what banding shows as, and what a dither keeps.
    static func localMeanError(_ decoded: Data, width: Int, height: Int, exact: (Int, Int) -> Double) -> Double {
        var squares = 0.0, count = 0
        for by in stride(from: 0, to: height - 7, by: 4) {
            for bx in stride(from: 0, to: width - 7, by: 4) {
                var sum = 0.0, want = 0.0
                for r in by..<(by + 8) { for x in bx..<(bx + 8) { sum += Double(decoded[r * width + x]); want += exact(x, r) } }
                let d = (sum - want) / 64
                squares += d * d
                count += 1
            }
        }
        return (squares / Double(count)).squareRoot()
    }

    /// Y ramps across (40..220 in 8-bit terms, every 10-bit code's fraction appears), Cb down and Cr
    /// across (124..132): smooth and in gamut, so the only change is the rounding to 8 bits, dithered.
    /// Through 8 bits first (swscale, then RGB rounded to 8 bits between filters) Y was up to 0.75
    /// codes off (rms 0.383) and the 8x8 means 0.13 off; kept deep and rounded (no dither) within
    /// half a code (plus the RGBA path's half-float step, 12-bit 0.5625); dithered, single pixels
    /// within 0.75 code (RGBA path 1.06: its half-float intermediates step by 1/8 code above mid-grey)
    /// and the 8x8 means within 0.038 (RGBA path 0.053).
    private func checkRamp(format: String, bits: Int, chroma: (Int, Int), file: StaticString = #filePath, line: UInt = #line) throws {
        let (width, height) = (256, 64)
        let k = Double(1 << (bits - 8))
        let (cw, ch) = (width / chroma.0, height / chroma.1)
        func y(_ x: Int, _ r: Int) -> UInt16 { UInt16((40 * k + 180 * k * Double(x) / Double(width - 1)).rounded()) }
        func cb(_ x: Int, _ r: Int) -> UInt16 { UInt16((124 * k + 8 * k * Double(r) / Double(ch - 1)).rounded()) }
        func cr(_ x: Int, _ r: Int) -> UInt16 { UInt16((124 * k + 8 * k * Double(x) / Double(cw - 1)).rounded()) }
        var frame = Data()
        for (f, w, h) in [(y, width, height), (cb, cw, ch), (cr, cw, ch)] as [((Int, Int) -> UInt16, Int, Int)] {
            for r in 0..<h { for x in 0..<w { let v = f(x, r); frame.append(UInt8(v & 0xff)); frame.append(UInt8(v >> 8)) } }
        }
        let raw = scratch("ramp.raw")
        try (0..<3).reduce(Data()) { d, _ in d + frame }.write(to: raw)
        let input = scratch("ramp-\(format).mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", format, "-s", "\(width)x\(height)",
                                         "-r", "25", "-i", raw.path, "-c:v", "ffv1", "-color_primaries", "bt709", "-color_trc", "bt709",
                                         "-colorspace", "bt709", "-color_range", "tv", input.path])
        for run in Self.runs {
            let output = scratch("out-\(run.path)-\(run.transfer).mkv")
            let result = try gpuencode([input.path, output.path, "--crf", "0", "--x264-preset", "ultrafast", "--render-path", run.path],
                                       environment: ProcessInfo.processInfo.environment.merging(["GPUENCODE_TRANSFER": run.transfer]) { $1 })
            XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
            guard result.status == ExitCode.ok else { continue }
            let decoded = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-frames:v", "1",
                                                               "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
            XCTAssertEqual(decoded.count, width * height * 3 / 2, file: file, line: line)
            guard decoded.count == width * height * 3 / 2 else { continue }
            var worst = 0.0, squares = 0.0
            for r in 0..<height {
                for x in 0..<width {
                    let e = Double(decoded[r * width + x]) - Double(y(x, r)) / k
                    worst = max(worst, abs(e))
                    squares += e * e
                }
            }
            // 4:2:0 chroma of smooth content: the output's sample (left-sited, centred rows) against the
            // source's chroma at the same place, interpolated in float64.
            var chromaWorst = 0.0
            let plane = width * height, cw2 = width / 2
            for r in 1..<(height / 2 - 1) {
                for x in 1..<(cw2 - 1) {
                    // Output chroma (x, r) sits at luma column 2x (left-sited) and row 2r + 0.5; source
                    // chroma column i at luma i * chroma.0, row j at (j + 0.5) * chroma.1 - 0.5.
                    let sx = Double(2 * x) / Double(chroma.0)
                    let sy = (Double(2 * r) + 1) / Double(chroma.1) - 0.5
                    let expectCb = (124 * k + 8 * k * sy / Double(ch - 1)) / k
                    let expectCr = (124 * k + 8 * k * sx / Double(cw - 1)) / k
                    chromaWorst = max(chromaWorst, abs(Double(decoded[plane + r * cw2 + x]) - expectCb),
                                      abs(Double(decoded[plane + plane / 4 + r * cw2 + x]) - expectCr))
                }
            }
            let rms = (squares / Double(width * height)).squareRoot()
            // The ordered dither moves single pixels by up to a code value; what it keeps is the local mean.
            let localMean = Self.localMeanError(decoded, width: width, height: height) { x, r in Double(y(x, r)) / k }
            print("\(format) \(run.path)/\(run.transfer): Y max error \(worst), rms \(rms), 8x8 mean error \(localMean); Cb/Cr max error \(chromaWorst) (8-bit codes)")
            XCTAssertLessThanOrEqual(worst, 1.1, "\(format) \(run.path)/\(run.transfer): Y max error \(worst) codes (rms \(rms))", file: file, line: line)
            XCTAssertLessThanOrEqual(localMean, 0.06, "\(format) \(run.path)/\(run.transfer): Y 8x8 mean error \(localMean) codes", file: file, line: line)
            XCTAssertLessThanOrEqual(chromaWorst, 1.1, "\(format) \(run.path)/\(run.transfer): chroma max error \(chromaWorst)", file: file, line: line)
        }
    }
}
