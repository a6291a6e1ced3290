import Foundation
import XCTest

/// The identity preset against the untouched input, plane by plane: at least as transparent as ffmpeg's own
/// round trip through RGB (`format=gbrp` and back, default swscale flags, BT.709 both ways), on synthetic
/// colour patterns and real clips. The reference is ffmpeg twice: with its default (centred) chroma siting
/// and told the clips' left siting; each plane must reach the better of the two within 0.5 dB (Cb, Cr) or
/// the worse of the two within 0.5 dB (Y, which the chroma filters do not touch: it moves only where an
/// out-of-gamut colour is clamped in RGB). Above 60 dB a plane counts as transparent (a handful of pixels
/// one code value off).
///
/// Before (bilinear up, [1/4 1/2 1/4] x [1/2 1/2] down): testsrc2 Cb/Cr 34.7/31.6 dB against ffmpeg's
/// 36.8/33.4; the colour edges 30.6/29.1 against 34.4/33.3.
final class ChromaFidelityTests: GPUEncodeTestCase {
    private static let tags = ["-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"]
    /// Left-sited 4:2:0 (H.264's default), as real cameras write it: swscale told so when making the clips.
    private static let leftSited = "scale=out_color_matrix=bt709:out_range=tv:out_h_chr_pos=0:out_v_chr_pos=128,format=yuv420p"

    func testSMPTEBars() throws {
        let clip = scratch("bars.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "smptehdbars=size=640x360:rate=25", "-t", "0.2", "-vf", "format=gbrp," + Self.leftSited,
                    "-chroma_sample_location", "left"] + Self.tags + ["-c:v", "ffv1", clip.path])
        try checkIdentity(clip, name: "smptehdbars")
    }

    func testColourEdges() throws {
        let clip = scratch("edges.mkv")
        let pattern = "geq=r='if(lt(mod(X+Y/2,37),18),255,20)':g='if(lt(mod(X*1.3,29),14),230,10)':b='if(lt(mod(Y,23),11),240,30)'"
        try ffmpeg(["-f", "lavfi", "-i", "color=red:size=320x240:rate=25", "-t", "0.2", "-vf", pattern + "," + Self.leftSited,
                    "-chroma_sample_location", "left"] + Self.tags + ["-c:v", "ffv1", clip.path])
        try checkIdentity(clip, name: "colour edges")
    }

    func testTestsrc2() throws {
        // testsrc2 draws 4:2:0 itself (no swscale, so no siting of its own).
        let clip = scratch("testsrc2.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "0.2", "-pix_fmt", "yuv420p"] + Self.tags + ["-c:v", "ffv1", clip.path])
        try checkIdentity(clip, name: "testsrc2")
    }

    func testRealClips() throws {
        for (name, frames) in [("h264_aac_480p_cup_8s.mp4", 6), ("h264_aac_1080p_deer_1s.mp4", 3)] {
            let clip = scratch("\(name).mkv")
            try ffmpeg(["-i", try Paths.media(name).path, "-frames:v", String(frames), "-an", "-pix_fmt", "yuv420p"] + Self.tags
                       + ["-c:v", "ffv1", clip.path])
            try checkIdentity(clip, name: name)
        }
    }

    // MARK: - Helpers

    private func ffmpeg(_ arguments: [String]) throws {
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// Y, Cb, Cr PSNR of `a` against `b`, frame by frame (Oracle.planePSNR).
    private func planes(_ a: URL, _ b: URL) throws -> [Double] { try Oracle.planePSNR(a, b) }

    /// Runs identity on the direct path (pixel buffers and client memory: the packed single pass) and the RGBA
    /// path, losslessly, and scores each against the input beside ffmpeg's two round trips. The per-plane
    /// passes are FormatTests' (4:2:2, 4:4:4) and PixelTests'.
    private func checkIdentity(_ clip: URL, name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let tag = clip.deletingPathExtension().lastPathComponent
        let ffmpegDefault = scratch("\(tag)-ffmpeg-default.mkv"), ffmpegLeft = scratch("\(tag)-ffmpeg-left.mkv")
        try ffmpeg(["-i", clip.path, "-vf", "format=gbrp,scale=out_color_matrix=bt709,format=yuv420p", "-c:v", "ffv1", ffmpegDefault.path])
        try ffmpeg(["-i", clip.path, "-vf", "scale=in_h_chr_pos=0:in_v_chr_pos=128,format=gbrp,"
                    + "scale=out_color_matrix=bt709:out_h_chr_pos=0:out_v_chr_pos=128,format=yuv420p", "-c:v", "ffv1", ffmpegLeft.path])
        let references = [try planes(ffmpegDefault, clip), try planes(ffmpegLeft, clip)]
        let runs: [(path: String, transfer: String)] = [("direct", "pbo"), ("direct", "client"), ("rgba", "client")]
        var direct: [Double]? = nil
        for run in runs {
            let output = scratch("\(tag)-identity-\(run.path)-\(run.transfer).mkv")
            let result = try gpuencode([clip.path, output.path, "--preset", "identity", "--crf", "0", "--x264-preset", "ultrafast",
                                        "--render-path", run.path],
                                       environment: ProcessInfo.processInfo.environment.merging(["GPUENCODE_TRANSFER": run.transfer]) { $1 })
            XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
            guard result.status == ExitCode.ok else { continue }
            let ours = try planes(output, clip)
            func f(_ v: [Double]) -> String { v.map { String(format: "%.2f", $0) }.joined(separator: "/") }
            let report = "\(name) \(run.path)/\(run.transfer): Y/Cb/Cr \(f(ours)) dB; ffmpeg gbrp round trip \(f(references[0])) (default siting), \(f(references[1])) (told left)"
            print(report)
            if run.path == "rgba", let direct {
                // The RGBA path (chains that sample, and the reference for direct) reads 8-bit chroma
                // through the GPU's bilinear filtering, whose 8-bit weights cost it up to 1 dB here.
                for plane in 0..<3 {
                    XCTAssertGreaterThanOrEqual(ours[plane], min(direct[plane] - 1.5, 60), "\(["Y", "Cb", "Cr"][plane]) against direct: \(report)",
                                                file: file, line: line)
                }
                continue
            }
            direct = ours
            for plane in 0..<3 {
                let bar = plane == 0 ? min(references[0][0], references[1][0]) : max(references[0][plane], references[1][plane])
                XCTAssertGreaterThanOrEqual(ours[plane], min(bar - 0.5, 60), "\(["Y", "Cb", "Cr"][plane]): \(report)", file: file, line: line)
            }
        }
    }
}
