import Foundation
import XCTest

/// Compares what the GPU filters produce with the same filter computed by ffmpeg on the CPU.
final class PixelTests: GPUEncodeTestCase {
    /// GPUImage's sepia matrix; ffmpeg applies it to full-range RGB, as the shader does.
    private static let sepiaMixer = "colorchannelmixer=rr=0.3588:rg=0.7044:rb=0.1368:gr=0.2990:gg=0.5870:gb=0.1140:br=0.2392:bg=0.4696:bb=0.0912"

    /// Below this, the output is visibly different from the reference; above it, only rounding and
    /// chroma-resampling differences remain.
    private static let minimumPSNR = 40.0

    func testIdentityOnBigBuckBunny() throws {
        try checkIdentity(input: try Paths.media("vp9_opus_180p_bbb_5s.webm"))
    }

    func testSepiaOnBigBuckBunny() throws {
        try compareWithReference(input: try Paths.media("vp9_opus_180p_bbb_5s.webm"), preset: "sepia", filter: Self.sepiaMixer)
    }

    func testIdentityOnTestPattern() throws {
        try checkIdentity(input: try makeTestPattern())
    }

    func testSepiaOnTestPattern() throws {
        try compareWithReference(input: try makeTestPattern(), preset: "sepia", filter: Self.sepiaMixer)
    }

    func testGrayscaleHasNeutralChroma() throws {
        let output = scratch("gray.mkv")
        let result = try gpuencode([try makeTestPattern().path, output.path, "--preset", "grayscale",
                                    "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }

        let frames = try Oracle.signalStats(output)
        XCTAssertFalse(frames.isEmpty, "no frames decoded from \(output.path)")
        for (n, stats) in frames.enumerated() {
            let uAverage = try XCTUnwrap(stats["UAVG"]), vAverage = try XCTUnwrap(stats["VAVG"])
            XCTAssertTrue((127...129).contains(uAverage), "frame \(n): UAVG \(uAverage)")
            XCTAssertTrue((127...129).contains(vAverage), "frame \(n): VAVG \(vAverage)")
            // The colourful test pattern averages near 128 too; only the peak saturation proves that no
            // pixel kept its colour.
            let saturation = try XCTUnwrap(stats["SATMAX"])
            XCTAssertLessThanOrEqual(saturation, 3, "frame \(n): SATMAX")
            // A grey picture, not a blank one.
            let lumaSpread = try XCTUnwrap(stats["YMAX"]) - XCTUnwrap(stats["YMIN"])
            XCTAssertGreaterThanOrEqual(lumaSpread, 100, "frame \(n): luma range")
        }
    }

    // MARK: - Helpers

    /// testsrc2 has saturated colours and sharp edges, which the real clip lacks.
    private func makeTestPattern() throws -> URL {
        let file = scratch("pattern.mp4")
        try Oracle.makeClip(file, seconds: 2, audio: false, videoArguments: [
            "-vf", "format=yuv420p",
            "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv",
            "-c:v", "libx264", "-crf", "12",
        ])
        return file
    }

    /// Identity is transparent (no clamp to the R'G'B' cube, DESIGN.md), so its reference is the untouched
    /// input, not ffmpeg's round trip through 8-bit RGB (which clips testsrc2's out-of-gamut colours: our
    /// output scored 34.6 dB against that clipped rendition). It must be at least as close to the input as
    /// ffmpeg's own gbrp round trip (BT.709 both ways), less 0.5 dB, and above `minimumPSNR`.
    private func checkIdentity(input: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let ours = scratch("ours.mkv")
        let result = try gpuencode([input.path, ours.path, "--preset", "identity", "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return }
        let roundTrip = scratch("round-trip.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-map", "0:v:0", "-vf",
                                         "scale=in_color_matrix=bt709:in_range=tv,format=gbrp,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p",
                                         "-fps_mode", "passthrough", "-c:v", "ffv1", roundTrip.path])
        XCTAssertEqual(try Oracle.frameTimes(ours).count, try Oracle.frameTimes(input).count, "frame count", file: file, line: line)
        let score = try Oracle.psnr(ours, input), reference = try Oracle.psnr(roundTrip, input)
        let report = "identity on \(input.lastPathComponent): \(score) dB against the input; ffmpeg's gbrp round trip \(reference) dB"
        print(report)
        XCTAssertGreaterThanOrEqual(score, max(Self.minimumPSNR, min(reference - 0.5, 60)), report, file: file, line: line)
    }

    /// Runs the preset losslessly (crf 0), so the score measures the filter alone, and scores it against
    /// ffmpeg's rendering of `filter` with the BT.709 matrix named explicitly: ffmpeg would otherwise
    /// convert with BT.601 and the reference itself would be wrong.
    private func compareWithReference(input: URL, preset: String, filter: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let ours = scratch("ours.mkv")
        let result = try gpuencode([input.path, ours.path, "--preset", preset, "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return }

        let reference = scratch("reference.mkv")
        let chain = "scale=in_color_matrix=bt709:in_range=tv,format=gbrp,\(filter),"
            + "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p"
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-map", "0:v:0",
                                         "-vf", chain, "-fps_mode", "passthrough", "-c:v", "ffv1", reference.path])

        // PSNR pairs frames by index, which is only meaningful when both have the same frames.
        XCTAssertEqual(try Oracle.frameTimes(ours).count, try Oracle.frameTimes(reference).count,
                       "frame count", file: file, line: line)
        let score = try Oracle.psnr(ours, reference)
        print("PSNR \(preset) on \(input.lastPathComponent): \(score) dB")
        XCTAssertGreaterThanOrEqual(score, Self.minimumPSNR, "\(preset) on \(input.lastPathComponent)", file: file, line: line)
    }
}
