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
        let result = try gpuencode(["preview", input.path, "--preset", "identity", "-o", png.path])
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

    // MARK: - Helpers

    /// Y ramps across (40..220 in 8-bit terms, every 10-bit code's fraction appears), Cb down and Cr
    /// across (124..132): smooth and in gamut, so the only change is the rounding to 8 bits. Through 8
    /// bits first (swscale, then RGB rounded to 8 bits between filters) Y was up to 0.75 codes off
    /// (rms 0.383); kept deep it is within half a code, plus on the RGBA path the half-float
    /// intermediates' step (2^-11, a sixteenth of a code above mid-grey: 12-bit measured 0.5625).
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
            print("\(format) \(run.path)/\(run.transfer): Y max error \(worst), rms \(rms); Cb/Cr max error \(chromaWorst) (8-bit codes)")
            XCTAssertLessThanOrEqual(worst, 0.57, "\(format) \(run.path)/\(run.transfer): Y max error \(worst) codes (rms \(rms))", file: file, line: line)
            XCTAssertLessThanOrEqual(rms, 0.32, "\(format) \(run.path)/\(run.transfer): Y rms error \(rms) codes", file: file, line: line)
            XCTAssertLessThanOrEqual(chromaWorst, 0.75, "\(format) \(run.path)/\(run.transfer): chroma max error \(chromaWorst)", file: file, line: line)
        }
    }
}
