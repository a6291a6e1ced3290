import Foundation
import XCTest

/// The block passes run by the CPU kernels (`RunOnCPU`: `PlaneNativeKernel`, `ReferenceBlockKernel`),
/// which the cost model picks on llvmpipe for chains of colour maps and curves, against the same pass drawn by the
/// renderer (`GPUENCODE_CPU_KERNELS=0`) and against the reference plan (`--no-optimize`). Outputs
/// are lossless and decoded by ffmpeg. The two implementations of one pass agree within 1 code
/// value everywhere. Where the exact result is half a code value the two round their own
/// single-precision sums: that is rare (no more than 1 sample in 1000) except for maps that move
/// 8-bit values by exact halves, as `faded`'s contrast of 0.8 does every fifth code (the shader
/// computes (c - 0.5) * 0.8 + 0.5, the kernel 0.8 c + 0.1: 1.4-6.2% of samples, 1 code each).
/// Against the reference the bar is the optimized plans' (OptimizedPlanTests, PlaneNativeTests).
final class CPUPlanTests: GPUEncodeTestCase {
    /// Plane-native (sepia, grayscale, identity) and the reference's blocks (faded, 1977, chrome,
    /// process, fade: three rounding filters, gains above 1, curves, hue turns, a screen of a solid colour).
    static let looks = ["sepia", "grayscale", "faded", "identity", "1977", "chrome", "process", "fade"]

    private func ffmpeg(_ arguments: [String]) throws {
        _ = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// `input` through `look`, losslessly, with the CPU kernels allowed or not; the output and `-v`'s lines.
    private func render(_ input: URL, look: String, kernels: Bool, extra: [String] = [], tag: String = "",
                        file: StaticString = #filePath, line: UInt = #line) throws -> (URL, String) {
        let name = URL(fileURLWithPath: look).deletingPathExtension().lastPathComponent
        let output = scratch("\(input.deletingPathExtension().lastPathComponent)-\(name)-\(kernels ? "cpu" : "gl")\(tag).mkv")
        let environment = ProcessInfo.processInfo.environment.merging(["GPUENCODE_CPU_KERNELS": kernels ? "1" : "0"]) { $1 }
        let result = try gpuencode([input.path, output.path, "-y", "-v", "--crf", "0", "--x264-preset", "ultrafast"]
                                   + ["--preset", look] + extra, environment: environment)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        return (output, result.stderr)
    }

    /// The largest per-sample difference of two lossless 8-bit outputs, and the share of samples that differ.
    private func compare(_ a: URL, _ b: URL) throws -> (worst: Int, share: Double) {
        let decode = { (f: URL) in
            try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", f.path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        }
        let (x, y) = (try decode(a), try decode(b))
        XCTAssertEqual(x.count, y.count)
        XCTAssertGreaterThan(x.count, 0)
        var worst = 0, differing = 0
        for i in 0..<min(x.count, y.count) where x[i] != y[i] {
            worst = max(worst, abs(Int(x[i]) - Int(y[i])))
            differing += 1
        }
        return (worst, Double(differing) / Double(max(x.count, 1)))
    }

    private func checkAgreement(_ input: URL, looks: [String] = CPUPlanTests.looks, extra: [String] = [], tag: String = "") throws {
        for look in looks {
            let (cpu, cpuLog) = try render(input, look: look, kernels: true, extra: extra, tag: tag)
            let (gl, glLog) = try render(input, look: look, kernels: false, extra: extra, tag: tag)
            XCTAssertTrue(cpuLog.contains("GPU: none made (the plan runs on the CPU"), "\(look): \(cpuLog)")
            XCTAssertTrue(cpuLog.contains("on the CPU: source"), "\(look): \(cpuLog)")
            XCTAssertTrue(glLog.contains("GPU: llvmpipe") && !glLog.contains("on the CPU: source"), "\(look): \(glLog)")
            let (worst, share) = try compare(cpu, gl)
            print("\(input.lastPathComponent) \(look)\(tag): CPU against the renderer's pass: max \(worst), \(share * 100)% of samples differ")
            XCTAssertLessThanOrEqual(worst, 1, "\(input.lastPathComponent) \(look)\(tag)")
            XCTAssertLessThanOrEqual(share, look == "faded" ? 0.1 : 0.001, "\(input.lastPathComponent) \(look)\(tag)")
        }
    }

    /// Sharp content (testsrc2's edges, text and saturated bars) and a size whose rows and chroma
    /// rows are no multiple of the kernel's eight lanes (202 x 118: 101 chroma samples a row).
    func testSameBytesAsTheRenderersPassOnGeneratedClips() throws {
        for (w, h) in [(320, 240), (202, 118)] {
            let clip = scratch("testsrc2-\(w)x\(h).mkv")
            try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(w)x\(h):rate=25", "-frames:v", "5", "-pix_fmt", "yuv420p",
                        "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv", "-c:v", "ffv1", clip.path])
            try checkAgreement(clip)
        }
    }

    /// A real phone clip (the 360p rooftop, half a second).
    func testSameBytesAsTheRenderersPassOnARealClip() throws {
        try checkAgreement(try Paths.media("h264_aac_360p_rooftop_17s.mp4"), looks: ["sepia", "faded", "1977"], extra: ["-t", "0.5"])
    }

    /// A keyframed value: the CPU's maps are rebuilt at each frame's time. Against the renderer's
    /// pass and against the reference plan on a smooth picture (within 1 code value).
    func testKeyframedIntensity() throws {
        let preset = scratch("fading-sepia.json")
        try #"{"version": 2, "name": "fading-sepia", "filters": [{"filter": "sepia", "intensity": {"keyframes": [[0, 0], [0.4, 1]], "easing": "linear"}}]}"#
            .write(to: preset, atomically: true, encoding: .utf8)
        let clip = scratch("smooth.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "color=black:size=192x108:rate=25", "-frames:v", "12", "-vf",
                    "format=gbrp,geq=r='30+190*X/W':g='40+150*Y/H+20*sin(X/37)':b='200-150*X/W*Y/H',scale=out_color_matrix=bt709:out_range=tv:out_h_chr_pos=0:out_v_chr_pos=128,format=yuv420p",
                    "-chroma_sample_location", "left", "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709",
                    "-color_range", "tv", "-c:v", "ffv1", clip.path])
        try checkAgreement(clip, looks: [preset.path])
        let (cpu, _) = try render(clip, look: preset.path, kernels: true, tag: "-again")
        let (reference, _) = try render(clip, look: preset.path, kernels: true, extra: ["--no-optimize"], tag: "-reference")
        XCTAssertLessThanOrEqual(try compare(cpu, reference).worst, 1)
        let (still, _) = try render(clip, look: "sepia", kernels: true, tag: "-still")
        XCTAssertGreaterThan(try compare(cpu, still).worst, 20, "the first frames are not full sepia")
    }

    /// A stream that turns interlaced after ten progressive frames, deinterlaced by auto: the CPU
    /// plan runs until the first flagged frame, then the plan is made again on the renderer (the
    /// deinterlacer's frames are on the GPU). Same bytes as a run on the renderer throughout.
    func testPlanMadeAgainForTheDeinterlacer() throws {
        let source = scratch("mix-50p.mkv"), a = scratch("mix-a.ts"), b = scratch("mix-b.ts"), mix = scratch("mix.ts")
        let tags = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50", "-frames:v", "40", "-vf",
                    "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p", "-c:v", "ffv1"] + tags + [source.path])
        try ffmpeg(["-i", source.path, "-vf", "select='lt(n,10)',setpts=N/25/TB", "-r", "25", "-c:v", "libx264", "-qp", "0", "-bf", "0"] + tags + [a.path])
        try ffmpeg(["-i", source.path, "-vf", "select='gte(n,20)',tinterlace=mode=interleave_top,setfield=tff,setpts=N/25/TB", "-r", "25",
                    "-c:v", "libx264", "-qp", "0", "-bf", "0", "-flags", "+ildct+ilme", "-x264-params", "tff=1"] + tags + [b.path])
        try ffmpeg(["-i", "concat:\(a.path)|\(b.path)", "-c", "copy", mix.path])
        let (cpu, log) = try render(mix, look: "sepia", kernels: true)
        let (gl, _) = try render(mix, look: "sepia", kernels: false)
        XCTAssertTrue(log.contains("GPU: none made"), log)
        XCTAssertTrue(log.contains("for the deinterlacer"), log)
        XCTAssertEqual(try Oracle.frameTimes(cpu).count, 20)
        XCTAssertLessThanOrEqual(try compare(cpu, gl).worst, 1)
    }

    /// `--json` says where the frames were filtered.
    func testReportSaysTheCPU() throws {
        let clip = scratch("report.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=192x108:rate=25", "-frames:v", "2", "-pix_fmt", "yuv420p", "-c:v", "ffv1", clip.path])
        let result = try gpuencode([clip.path, scratch("report-out.mp4").path, "--preset", "sepia", "--json"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let gpu = try XCTUnwrap(doc["gpu"] as? [String: Any], "\(doc)")
        XCTAssertEqual(gpu["renderer"] as? String, "CPU kernels")
        XCTAssertEqual(gpu["transfer"] as? String, "none")
        XCTAssertTrue((gpu["passes"] as? [String] ?? []).contains { $0.hasPrefix("on the CPU: source, sepia") }, "\(gpu)")
    }

    /// What the kernels do not take stays on the renderer: a 10-bit source, a look neither affine
    /// nor a table per channel (amatorka's 3D lookup), and frames a deinterlacer hands over from the start.
    func testOtherPlansKeepTheRenderer() throws {
        let ten = scratch("ten.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=192x108:rate=25", "-frames:v", "2", "-pix_fmt", "yuv420p10le", "-c:v", "ffv1", ten.path])
        let (_, tenLog) = try render(ten, look: "sepia", kernels: true, extra: ["--codec", "hevc", "--x265-params", "lossless=1"])
        XCTAssertTrue(tenLog.contains("GPU: llvmpipe") && !tenLog.contains("on the CPU: source"), tenLog)
        let eight = scratch("eight.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=192x108:rate=25", "-frames:v", "2", "-pix_fmt", "yuv420p", "-c:v", "ffv1", eight.path])
        let (_, lookLog) = try render(eight, look: "amatorka", kernels: true)
        XCTAssertTrue(lookLog.contains("GPU: llvmpipe") && !lookLog.contains("on the CPU: source"), lookLog)
        let (_, fieldLog) = try render(eight, look: "sepia", kernels: true, extra: ["--deinterlace", "frame"])
        XCTAssertTrue(fieldLog.contains("GPU: llvmpipe") && !fieldLog.contains("on the CPU: source"), fieldLog)
    }
}
