import Foundation
import XCTest

/// How frames move through the pipeline must not change a byte. Two schedules: decode, GPU and
/// encode on three threads, and one frame at a time on one thread (`--deterministic`); two GPU
/// transfer paths, forced with GPUENCODE_TRANSFER: pixel buffer objects (the hardware default, each
/// frame's readback finishing while the next one is drawn) and client memory with glReadPixels
/// (llvmpipe's). The pixel buffers themselves two ways: persistently mapped (the default) or mapped
/// per transfer with two frames in flight, and the single pass and NV12 conversion as fragment
/// shaders (llvmpipe's default) or as compute shaders writing into the read buffer (hardware GPUs'
/// default, forced with GPUENCODE_COMPUTE). All must write the same file: byte for byte in MP4; packet for packet in
/// Matroska, whose muxer writes a random segment UID. ffprobe/ffmpeg judge the rest: every input
/// frame is there, and the audio is the input's, packet for packet. Where the plan runs on the CPU
/// kernels (llvmpipe's choice for sepia and the blur) there is no transfer: those runs are kept off
/// the kernels (GPUENCODE_CPU_KERNELS=0), and the kernels' own two schedules must agree as well.
final class DeterminismTests: GPUEncodeTestCase {
    private struct Variant {
        var transfer: String
        var deterministic: Bool
        /// More of the environment the CLI reads (TransferOptions).
        var more: [String: String] = [:]
        /// The CPU kernels allowed (compared with the other such runs only).
        var cpu = false
        var name: String {
            "\(cpu ? "cpu" : transfer)-\(deterministic ? "deterministic" : "pipelined")" + more.sorted { $0.key < $1.key }.map { "-\($0.value)" }.joined()
        }
    }

    private static let variants = [Variant(transfer: "client", deterministic: false), Variant(transfer: "client", deterministic: true),
                                   Variant(transfer: "pbo", deterministic: false), Variant(transfer: "pbo", deterministic: true),
                                   Variant(transfer: "pbo", deterministic: false, more: ["GPUENCODE_COMPUTE": "1"]),
                                   Variant(transfer: "pbo", deterministic: false,
                                           more: ["GPUENCODE_COMPUTE": "1", "GPUENCODE_MAPPING": "mapped", "GPUENCODE_DEPTH": "2"]),
                                   Variant(transfer: "client", deterministic: false, cpu: true), Variant(transfer: "client", deterministic: true, cpu: true)]

    /// Two seconds of testsrc2 with AAC audio and B-frames (so decode order is not display order).
    private func clipWithAudio() throws -> URL {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 2, videoArguments: ["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-pix_fmt", "yuv420p"])
        return input
    }

    /// `input` through `preset` once per variant; the outputs and what each run printed.
    private func runVariants(_ input: URL, preset: String, ext: String, extra: [String] = [],
                             file: StaticString = #filePath, line: UInt = #line) throws -> [(variant: Variant, output: URL, stdout: String)] {
        try Self.variants.map { variant in
            let output = scratch("\(URL(fileURLWithPath: preset).deletingPathExtension().lastPathComponent)-\(variant.name).\(ext)")
            var arguments = [input.path, output.path, "--preset", preset, "--x264-preset", "veryfast"] + extra
            if variant.deterministic { arguments.append("--deterministic") }
            let settings = ["GPUENCODE_TRANSFER": variant.transfer, "GPUENCODE_CPU_KERNELS": variant.cpu ? "1" : "0"]
            let result = try gpuencode(arguments, environment: variant.more.merging(settings) { $1 })
            XCTAssertEqual(result.status, 0, "\(preset) \(variant.name): \(result.summary)", file: file, line: line)
            return (variant, output, result.stdout)
        }
    }

    /// The run `run` is held to: the first of the runs with the CPU kernels allowed as in `run`.
    private func reference(_ runs: [(variant: Variant, output: URL, stdout: String)], for run: (variant: Variant, output: URL, stdout: String))
        -> (variant: Variant, output: URL, stdout: String) {
        runs.first { $0.variant.cpu == run.variant.cpu }!
    }

    /// Every packet of every stream with its timestamps, as ffmpeg's framemd5 lists them.
    private func packets(_ file: URL) throws -> String {
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"])
            .stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
    }

    /// The output has every frame of the input and its audio packets, unchanged.
    private func assertKeepsFramesAndAudio(_ output: URL, of input: URL, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try Oracle.frameTimes(output).count, try Oracle.frameTimes(input).count, "\(what): frames", file: file, line: line)
        XCTAssertEqual(try Oracle.audioMD5(output, index: 0), try Oracle.audioMD5(input, index: 0), "\(what): audio", file: file, line: line)
    }

    /// sepia: the fused single pass, which writes NV12 (the path pixel buffers serve); heavyblur:
    /// the plane blur's passes ending in the NV12 writer; both also on the CPU kernels.
    func testSchedulesAndTransferPathsWriteTheSameMP4() throws {
        let input = try clipWithAudio()
        for preset in ["sepia", "heavyblur"] {
            let runs = try runVariants(input, preset: preset, ext: "mp4")
            XCTAssertGreaterThan(try Data(contentsOf: runs[0].output).count, 10_000)
            for run in runs.dropFirst() {
                let first = reference(runs, for: run)
                let (data, expected) = (try Data(contentsOf: run.output), try Data(contentsOf: first.output))
                XCTAssertTrue(data == expected, "\(preset): \(run.variant.name) (\(data.count) bytes) differs from \(first.variant.name) (\(expected.count) bytes)")
            }
            try assertKeepsFramesAndAudio(runs[0].output, of: input, preset)
        }
    }

    func testSchedulesAndTransferPathsWriteTheSamePacketsInMatroska() throws {
        let input = try clipWithAudio()
        for preset in ["sepia", "heavyblur"] {
            let runs = try runVariants(input, preset: preset, ext: "mkv")
            XCTAssertGreaterThan(try packets(runs[0].output).split(separator: "\n").count, 100, "\(preset): video and audio packets")
            for run in runs.dropFirst() {
                let first = reference(runs, for: run)
                XCTAssertEqual(try packets(run.output), try packets(first.output), "\(preset): \(run.variant.name) against \(first.variant.name)")
            }
            try assertKeepsFramesAndAudio(runs[0].output, of: input, preset)
        }
    }

    /// A rotated phone clip takes the three-plane path (a luma and a chroma pass, read back
    /// synchronously whatever the transfer setting) and keeps its audio: the schedules still agree.
    func testRotatedClipIsTheSameOnEveryPath() throws {
        let input = try Paths.media("iphone4s_h264_aac_rot90_2s.mov")
        let runs = try runVariants(input, preset: "grayscale", ext: "mp4")
        for run in runs.dropFirst() {
            let first = reference(runs, for: run)
            XCTAssertTrue(try Data(contentsOf: run.output) == (try Data(contentsOf: first.output)), "\(run.variant.name) differs from \(first.variant.name)")
        }
        try assertKeepsFramesAndAudio(runs[0].output, of: input, "rotated")
    }

    /// `--stats` prints the same measurements, one line per frame in frame order, whichever path
    /// and schedule (the pixel-buffer path finishes a frame one frame late, with its own numbers),
    /// and the video is the same too.
    func testStatsAreTheSameOnEveryPath() throws {
        let input = try clipWithAudio()
        let preset = scratch("measure.json")
        try Data(#"{"version": 1, "name": "measure", "filters": [{"filter": "averageColor"}, {"filter": "sepia"}]}"#.utf8).write(to: preset)
        let runs = try runVariants(input, preset: preset.path, ext: "mp4", extra: ["--stats"])
        let frames = try Oracle.frameTimes(input).count
        let lines = runs[0].stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, frames, runs[0].stdout)
        for (i, line) in lines.enumerated() { XCTAssertTrue(line.hasPrefix("frame=\(i) time="), String(line)) }
        // testsrc2 moves, so the measurements change along the clip: a line out of place shows.
        XCTAssertGreaterThan(Set(lines.map { $0.split(separator: " ").last! }).count, 5)
        for run in runs.dropFirst() {
            XCTAssertEqual(run.stdout, runs[0].stdout, "\(run.variant.name) printed other measurements")
            XCTAssertTrue(try Data(contentsOf: run.output) == (try Data(contentsOf: reference(runs, for: run).output)), "\(run.variant.name) wrote another file")
        }
    }
}
