import Foundation
import GPUEncodeKit
import XCTest

/// --hwaccel and --encoder on a machine without NVIDIA's driver (CI, Mesa): `auto` falls back
/// (silently for decoding, with a warning for encoding), `cuda` and `nvenc` fail cleanly with 69.
/// The NVDEC path itself runs on the GPU machine through bench/hwaccel.sh.
final class HardwareOptionTests: GPUEncodeTestCase {
    /// NVIDIA's driver is loaded here: the fall-back expectations do not hold.
    private func skipWhereNVIDIA() throws {
        if FileManager.default.fileExists(atPath: "/dev/nvidiactl") {
            throw XCTSkip("an NVIDIA driver is present; these tests check the fall back without one")
        }
    }

    private func videoFrameMD5(_ file: URL) throws -> [String] {
        let text = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v", "-f", "framemd5", "-"]).stdout
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    func testHWAccelAutoMatchesSoftwareDecoding() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 1)
        let common = ["--preset", "sepia", "--x264-preset", "ultrafast", "--crf", "0", "--deterministic"]
        let plain = scratch("plain.mp4")
        let auto = scratch("auto.mp4")
        let viaEnv = scratch("env.mp4")
        XCTAssertEqual(try gpuencode([input.path, plain.path] + common).status, 0)
        let autoRun = try gpuencode([input.path, auto.path, "--hwaccel", "auto", "-q"] + common)
        XCTAssertEqual(autoRun.status, 0, autoRun.summary)
        XCTAssertEqual(autoRun.stderrLines, [], "auto falls back silently without -v")
        XCTAssertEqual(try gpuencode([input.path, viaEnv.path] + common, environment: ["GPUENCODE_HWACCEL": "auto"]).status, 0)
        let reference = try videoFrameMD5(plain)
        XCTAssertEqual(reference.count, 25)
        XCTAssertEqual(try videoFrameMD5(auto), reference)
        XCTAssertEqual(try videoFrameMD5(viaEnv), reference)
        // No GPU stage either.
        let none1 = scratch("none1.mp4")
        let none2 = scratch("none2.mp4")
        XCTAssertEqual(try gpuencode([input.path, none1.path, "--preset", "none", "--x264-preset", "ultrafast", "--crf", "0", "--deterministic"]).status, 0)
        XCTAssertEqual(try gpuencode([input.path, none2.path, "--preset", "none", "--x264-preset", "ultrafast", "--crf", "0", "--deterministic", "--hwaccel", "auto"]).status, 0)
        XCTAssertEqual(try videoFrameMD5(none1), try videoFrameMD5(none2))
    }

    /// NVDEC frames come down as NV12; the conversion to the working format must not touch a
    /// pixel, so NVDEC and software decoding give the same output. Emulated here with NV12 video.
    func testNV12FramesGiveTheSamePixelsAsPlanar() throws {
        let planar = scratch("planar.nut")
        let nv12 = scratch("nv12.nut")
        try Oracle.makeClip(planar, seconds: 1, audio: false, videoArguments: ["-c:v", "rawvideo", "-pix_fmt", "yuv420p"])
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", planar.path, "-c:v", "rawvideo", "-pix_fmt", "nv12", nv12.path])
        for preset in ["none", "sepia"] {
            var digests: [[String]] = []
            for input in [planar, nv12] {
                let output = scratch("\(preset)-\(input.deletingPathExtension().lastPathComponent).mp4")
                XCTAssertEqual(try gpuencode([input.path, output.path, "--preset", preset, "--x264-preset", "ultrafast", "--crf", "0", "--deterministic"]).status, 0)
                digests.append(try videoFrameMD5(output))
            }
            XCTAssertEqual(digests[0].count, 25)
            XCTAssertEqual(digests[0], digests[1], "preset \(preset): NV12 input differs from yuv420p")
        }
    }

    /// A batch's jobs share one CUDA device (`CUDADevice`): without NVIDIA there is none, and every
    /// job decodes in software, with the same frames as a batch without --hwaccel.
    func testBatchHWAccelAutoSharesTheDeviceAndFallsBack() throws {
        try skipWhereNVIDIA()
        let inputs = scratch("in")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        for i in 1...3 { try Oracle.makeClip(inputs.appendingPathComponent("c\(i).mp4"), seconds: 0.4) }
        let common = ["--preset", "sepia", "--x264-preset", "ultrafast", "--crf", "0", "--jobs", "2"]
        let plain = try gpuencode(["batch", inputs.path, "--out-dir", scratch("plain").path, "-q"] + common)
        XCTAssertEqual(plain.status, 0, plain.summary)
        let auto = try gpuencode(["batch", inputs.path, "--out-dir", scratch("auto").path, "--hwaccel", "auto", "-q"] + common)
        XCTAssertEqual(auto.status, 0, auto.summary)
        XCTAssertEqual(auto.stderrLines, [], "auto falls back silently")
        for i in 1...3 {
            let reference = try videoFrameMD5(scratch("plain").appendingPathComponent("c\(i).mp4"))
            XCTAssertEqual(reference.count, 10)
            XCTAssertEqual(try videoFrameMD5(scratch("auto").appendingPathComponent("c\(i).mp4")), reference)
        }
        // No device here: no reference, and FFmpeg's error code to report.
        let (reference, code) = CUDADevice().reference()
        XCTAssertNil(reference)
        XCTAssertLessThan(code, 0)
    }

    func testVerboseSaysWhichDecoderAndEncoderRun() throws {
        try skipWhereNVIDIA()
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        let result = try gpuencode([input.path, scratch("v.mp4").path, "--hwaccel", "auto", "--x264-preset", "ultrafast", "-v"])
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertTrue(result.stderr.contains("NVDEC not used: no CUDA device"), result.stderr)
        XCTAssertTrue(result.stderr.contains("decoder: h264 in software"), result.stderr)
        XCTAssertTrue(result.stderr.contains("encoder: libx264 (speed ultrafast, crf 23"), result.stderr)
        let plain = try gpuencode([input.path, scratch("p.mp4").path, "--x264-preset", "ultrafast", "-v"])
        XCTAssertTrue(plain.stderr.contains("decoder: h264 in software"), plain.stderr)
        XCTAssertFalse(plain.stderr.contains("NVDEC"), plain.stderr)
    }

    func testHWAccelCudaWithoutNVIDIAFailsCleanly() throws {
        try skipWhereNVIDIA()
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        let outDir = scratch("out")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        let result = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path, "--hwaccel", "cuda"])
        assertCleanFailure(result, exitCodes: [ExitCode.gpuUnavailable], mentioning: ["--hwaccel cuda", "no CUDA device"], outputDirectory: outDir)
        let viaEnv = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path], environment: ["GPUENCODE_HWACCEL": "cuda"])
        assertCleanFailure(viaEnv, exitCodes: [ExitCode.gpuUnavailable], mentioning: ["--hwaccel cuda"], outputDirectory: outDir)
        // --hwaccel none overrides the environment.
        XCTAssertEqual(try gpuencode([input.path, outDir.appendingPathComponent("n.mp4").path, "--hwaccel", "none", "--x264-preset", "ultrafast"],
                                     environment: ["GPUENCODE_HWACCEL": "cuda"]).status, 0)
    }

    func testEncoderAutoFallsBackToX264WithAWarning() throws {
        try skipWhereNVIDIA()
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 1)
        let output = scratch("auto.mp4")
        let result = try gpuencode([input.path, output.path, "--encoder", "auto", "--preset", "sepia", "--x264-preset", "ultrafast", "-q"])
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        let warning = result.stderrLines.first ?? ""
        XCTAssertTrue(warning.hasPrefix("gpuencode: warning: ") && warning.contains("h264_nvenc") && warning.contains("encoding with libx264"), warning)
        let video = try XCTUnwrap(try Oracle.streams(output).first { $0.codecType == "video" })
        XCTAssertEqual(video.codecName, "h264")
        XCTAssertEqual(video.colorSpace, "bt709")
        XCTAssertEqual(video.colorPrimaries, "bt709")
        XCTAssertEqual(video.colorTransfer, "bt709")
        XCTAssertEqual(video.colorRange, "tv")
        XCTAssertEqual(try videoFrameMD5(output).count, 25)
        // The same bytes as asking for libx264 outright.
        let x264 = scratch("x264.mp4")
        XCTAssertEqual(try gpuencode([input.path, x264.path, "--encoder", "libx264", "--preset", "sepia", "--x264-preset", "ultrafast", "--deterministic"]).status, 0)
        let auto2 = scratch("auto2.mp4")
        XCTAssertEqual(try gpuencode([input.path, auto2.path, "--encoder", "auto", "--preset", "sepia", "--x264-preset", "ultrafast", "--deterministic"]).status, 0)
        XCTAssertEqual(try Oracle.sha256(auto2), try Oracle.sha256(x264))
    }

    func testEncoderNVENCWithoutEngineFailsCleanly() throws {
        try skipWhereNVIDIA()
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        for preset in ["sepia", "none"] {
            let outDir = scratch("out-\(preset)")
            try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
            let result = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path, "--encoder", "nvenc", "--preset", preset])
            assertCleanFailure(result, exitCodes: [ExitCode.gpuUnavailable], mentioning: ["h264_nvenc", "o.mp4"], outputDirectory: outDir)
        }
        // An existing output is left as it was.
        let existing = scratch("existing.mp4")
        try Data("keep".utf8).write(to: existing)
        let result = try gpuencode([input.path, existing.path, "--encoder", "nvenc", "-y"])
        XCTAssertEqual(result.status, ExitCode.gpuUnavailable, result.summary)
        XCTAssertEqual(try String(contentsOf: existing, encoding: .utf8), "keep")
        XCTAssertEqual(listing(workDirectory).filter { $0.hasSuffix(".partial") }, [])
    }

    func testBadHardwareOptionsAreUsageErrors() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2)
        for (bad, culprit) in [(["--hwaccel", "nvdec"], "--hwaccel"), (["--encoder", "h264_nvenc"], "--encoder"),
                               (["--hwaccel"], "--hwaccel"), (["--encoder"], "--encoder")] {
            let outDir = scratch("out-\(bad.joined())")
            try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
            let result = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path] + bad)
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: [culprit], outputDirectory: outDir)
        }
        let outDir = scratch("out-env")
        try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        let result = try gpuencode([input.path, outDir.appendingPathComponent("o.mp4").path], environment: ["GPUENCODE_HWACCEL": "yes"])
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["GPUENCODE_HWACCEL=yes"], outputDirectory: outDir)
    }

    func testX264PresetsMapToNVENCPresets() {
        let mapped = EncoderSettings.x264Presets.map { EncoderSettings.nvencPreset(forX264: $0) }
        XCTAssertEqual(mapped, ["p1", "p1", "p2", "p3", "p3", "p4", "p5", "p6", "p7", "p7"])
        XCTAssertEqual(EncoderSettings().encoder, .software, "the default stays reproducible")
    }
}
