import Foundation
import XCTest

/// HEVC pictures 16 to 49 pixels wide: libx265's lookahead wrote past its buffers there (its
/// CU-tree pass, X265NarrowPicture), and glibc aborted the run with "corrupted size vs. prev_size"
/// in most runs, after the output had been renamed into place. The runs here go under glibc's
/// malloc check (libc_malloc_debug.so with glibc.malloc.check=3: a guard byte after every block,
/// checked when it is freed), which turns such an overrun into an abort every time instead of
/// whenever the heap layout happens to expose it; .ci/asan runs the same cases under
/// AddressSanitizer. Outputs are judged with ffprobe: codec, size, pixel format, decoded frames.
final class NarrowPictureTests: GPUEncodeTestCase {
    private static let mallocDebug = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"

    /// The environment of a run under glibc's malloc check; skips where the library is missing.
    private func mallocChecked() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: Self.mallocDebug) else { throw XCTSkip("\(Self.mallocDebug) not found") }
        return ProcessInfo.processInfo.environment.merging(["LD_PRELOAD": Self.mallocDebug, "GLIBC_TUNABLES": "glibc.malloc.check=3"]) { $1 }
    }

    /// Runs `arguments` under the malloc check and holds the output to `size`, `pixelFormat` and `frames`.
    private func encode(_ arguments: [String], output: URL, size: [Int], pixelFormat: String, frames: Int,
                        environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try gpuencode(arguments + [output.path, "-y"], environment: try mallocChecked().merging(environment) { $1 })
        XCTAssertFalse(result.signalled, result.summary, file: file, line: line)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return }
        let video = try XCTUnwrap(Oracle.streams(output).first { $0.codecType == "video" }, file: file, line: line)
        XCTAssertEqual(video.codecName, "hevc", file: file, line: line)
        XCTAssertEqual([video.width, video.height], size, file: file, line: line)
        XCTAssertEqual(video.pixelFormat, pixelFormat, file: file, line: line)
        XCTAssertEqual(try Oracle.frameTimes(output).count, frames, file: file, line: line)
    }

    /// The reported case: the 4-frame HLG iPhone clip (1280x720 turned upright: 720x1280) kept HDR
    /// at --height 64, so 36x64 Main 10. Today's code aborted under the malloc check in every run
    /// (6 of 6), and without it in 4 of 6. Twice, and on both transfer paths.
    func testPortraitHDRAtHeight64() throws {
        let clip = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        for transfer in ["client", "pbo", "client"] {
            try encode([clip.path, "--height", "64", "--hdr", "keep"], output: scratch("portrait-\(transfer).mp4"),
                       size: [36, 64], pixelFormat: "yuv420p10le", frames: 4, environment: ["GPUENCODE_TRANSFER": transfer])
        }
    }

    /// The class: every width whose lookahead row is 1, 2 or 3 blocks (16 ... 48 here; x265 refuses
    /// narrower), at 8 bits from an 8-bit clip, scaled or not, and the first width past it (50).
    /// The ffmpeg CLI aborts on 16, 34 and 48 under the malloc check too (not on 50).
    func testNarrowWidths() throws {
        // 1:4, so that --width W makes W x 4W (x265 also refuses pictures under 16 rows).
        let clip = scratch("testsrc2.mp4")
        try Oracle.makeClip(clip, seconds: 0.4, size: "128x512", audio: false)
        for width in [16, 18, 34, 48, 50] {
            try encode([clip.path, "--codec", "hevc", "--width", "\(width)", "--speed", "ultrafast"], output: scratch("w\(width).mp4"),
                       size: [width, 4 * width], pixelFormat: "yuv420p", frames: 10)
        }
        // Unscaled: a clip that is narrow itself (no scaler); a 4K portrait one turned upright and scaled.
        let narrow = scratch("narrow.mp4")
        try Oracle.makeClip(narrow, seconds: 0.4, size: "48x96", audio: false)
        try encode([narrow.path, "--codec", "hevc", "--preset", "none"], output: scratch("narrow-out.mp4"), size: [48, 96], pixelFormat: "yuv420p", frames: 10)
        let rotated = try Paths.media("phone_4k60_h264_aac_rot90_0.3s.mp4")
        try encode([rotated.path, "--codec", "hevc", "--height", "64"], output: scratch("rotated-out.mp4"), size: [36, 64],
                   pixelFormat: "yuv420p", frames: try Oracle.frameTimes(rotated).count)
    }

    /// A user's `cutree=1` does not bring the overrun back: the encoder's own setting comes last.
    func testUserCutreeIsOverridden() throws {
        let clip = scratch("testsrc2-user.mp4")
        try Oracle.makeClip(clip, seconds: 0.4, size: "128x512", audio: false)
        try encode([clip.path, "--codec", "hevc", "--width", "36", "--x265-params", "cutree=1"], output: scratch("user.mp4"),
                   size: [36, 144], pixelFormat: "yuv420p", frames: 10)
    }
}
