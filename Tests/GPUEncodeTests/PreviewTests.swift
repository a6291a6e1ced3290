import Foundation
import XCTest

/// `gpuencode preview`: one frame, the right one, through the same path as a transcode.
final class PreviewTests: GPUEncodeTestCase {
    /// The picture of a frame as packed RGB24, decoded by ffmpeg.
    private func rgb(_ file: URL, frame: Int = 0, extra: String = "") throws -> [UInt8] {
        let vf = "select=eq(n\\,\(frame))\(extra),scale=in_color_matrix=bt709:in_range=tv:out_range=pc,format=rgb24"
        let result = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-vf", vf, "-frames:v", "1", "-f", "rawvideo", "-"])
        return [UInt8](result)
    }

    private func meanAbsoluteDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var sum = 0
        for i in 0..<a.count { sum += abs(Int(a[i]) - Int(b[i])) }
        return Double(sum) / Double(a.count)
    }

    func testPreviewIsTheFrameAtTheTimeAsTheTranscodeRendersIt() throws {
        let clip = scratch("clip.mp4")
        try Oracle.makeClip(clip, seconds: 1, size: "320x240", rate: 25, audio: false,
                            videoArguments: ["-c:v", "libx264", "-crf", "0", "-pix_fmt", "yuv420p", "-colorspace", "bt709"])
        let movie = scratch("sepia.mkv")
        XCTAssertEqual(try gpuencode([clip.path, movie.path, "--preset", "sepia", "--crf", "0", "--x264-preset", "ultrafast"]).status, 0)
        let png = scratch("frame.png")
        let result = try gpuencode(["preview", clip.path, "--preset", "sepia", "--at", "0.4", "-o", png.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let still = try rgb(png, extra: "")
        // Frame 10 is at 0.4 s; its neighbours differ (testsrc2 moves), so the wrong frame shows.
        let right = meanAbsoluteDifference(still, try rgb(movie, frame: 10))
        let wrong = meanAbsoluteDifference(still, try rgb(movie, frame: 11))
        XCTAssertLessThan(right, 3, "preview vs the transcode's frame 10 (the movie is 4:2:0, the preview full-resolution colour)")
        XCTAssertLessThan(right * 2, wrong, "frame 11 should be further off than frame 10")
    }

    func testStillImageInAndOut() throws {
        let src = scratch("in.png")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", src.path])
        let preset = scratch("invert.json")
        try Data(#"{"version": 1, "name": "invert", "filters": [{"filter": "colorInvert"}]}"#.utf8).write(to: preset)
        let out = scratch("out.png")
        XCTAssertEqual(try gpuencode(["preview", src.path, "--preset", preset.path, "-o", out.path]).status, 0)
        let a = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", src.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let b = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", out.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(a.count, 96 * 64 * 3)
        XCTAssertEqual(a.count, b.count)
        XCTAssertTrue(zip(a, b).allSatisfy { Int($0) + Int($1) == 255 }, "colorInvert of a PNG is exact")
    }

    func testPreviewErrors() throws {
        let clip = scratch("short.mp4")
        try Oracle.makeClip(clip, seconds: 0.4, audio: false)
        let png = scratch("f.png")
        let late = try gpuencode(["preview", clip.path, "--at", "5", "-o", png.path])
        assertCleanFailure(late, exitCodes: [ExitCode.usage], mentioning: [clip.path, "5"])
        XCTAssertEqual(try gpuencode(["preview", clip.path, "-o", png.path]).status, 0)
        let again = try gpuencode(["preview", clip.path, "-o", png.path])
        assertCleanFailure(again, exitCodes: [ExitCode.cannotCreate], mentioning: [png.path, "-y"])
        XCTAssertEqual(try gpuencode(["preview", clip.path, "-o", png.path, "-y"]).status, 0)
    }
}

/// Every shipped preset renders a real frame, and visibly changes it (a preset that does nothing is a bug).
final class ShippedPresetTests: GPUEncodeTestCase {
    func testEveryPresetRendersARealFrameAndChangesIt() throws {
        let media = try Paths.requireMedia()
        let clip = media.appendingPathComponent("h264_aac_1080p_deer_1s.mp4")
        let listing = try gpuencode(["--list-presets"])
        XCTAssertEqual(listing.status, 0)
        let names = listing.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        XCTAssertGreaterThanOrEqual(names.count, 20, "built-in looks are missing: \(names)")
        for required in ["sepia", "grayscale", "chrome", "fade", "instant", "mono", "noir", "process", "tonal", "transfer",
                         "nashville", "clarendon", "1977", "toaster", "amatorka", "sketch", "toon", "vignette", "pixellate", "tiltshift"] {
            XCTAssertTrue(names.contains(required), "no built-in preset \(required)")
        }
        func picture(_ preset: String) throws -> Data {
            let png = scratch("\(preset).png")
            let result = try gpuencode(["preview", clip.path, "--preset", preset, "--at", "0.5", "-o", png.path, "-y"])
            XCTAssertEqual(result.status, 0, "\(preset): \(result.stderr)")
            return try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", png.path, "-vf", "scale=480:-2", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        }
        let original = try picture("identity")
        for name in names where name != "identity" && name != "none" {
            let filtered = try picture(name)
            XCTAssertEqual(filtered.count, original.count, name)
            var sum = 0
            for (a, b) in zip(original, filtered) { sum += abs(Int(a) - Int(b)) }
            let mean = Double(sum) / Double(max(original.count, 1))
            XCTAssertGreaterThan(mean, 2, "\(name) barely changes the picture (mean difference \(mean) code values)")
        }
    }
}

/// Keyframes in a transcode: a look that fades in follows the frames' own times.
final class KeyframeTranscodeTests: GPUEncodeTestCase {
    func testSepiaFadesInOverTheClip() throws {
        let clip = scratch("clip.mp4")
        try Oracle.makeClip(clip, seconds: 1, size: "160x120", rate: 10, audio: false,
                            videoArguments: ["-c:v", "libx264", "-crf", "0", "-pix_fmt", "yuv420p", "-colorspace", "bt709"])
        let preset = scratch("fade.json")
        try Data(#"{"version": 1, "name": "fade-in", "filters": [{"filter": "sepia", "intensity": {"keyframes": [[0, 0], [0.9, 1]]}}]}"#.utf8).write(to: preset)
        let out = scratch("out.mkv")
        let result = try gpuencode([clip.path, out.path, "--preset", preset.path, "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, 0, result.stderr)
        // Frame 0 (t = 0) is sepia at intensity 0, frame 9 (t = 0.9) full sepia: compare with transcodes of
        // each look held still. (Not the identity preset: identity is transparent and keeps colours
        // outside R'G'B', which any real filter clamps.)
        let still0 = scratch("sepia0.json")
        try Data(#"{"version": 1, "name": "sepia0", "filters": [{"filter": "sepia", "intensity": 0}]}"#.utf8).write(to: still0)
        func frame(_ file: URL, _ n: Int) throws -> Data {
            try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-vf",
                "select=eq(n\\,\(n)),format=yuv444p", "-frames:v", "1", "-f", "rawvideo", "-"])
        }
        for (n, look) in [(0, still0.path), (9, "sepia")] {
            let reference = scratch("\(n).mkv")
            XCTAssertEqual(try gpuencode([clip.path, reference.path, "--preset", look, "--crf", "0", "--x264-preset", "ultrafast"]).status, 0)
            let still = try frame(reference, n)
            let video = try frame(out, n)
            XCTAssertEqual(still.count, video.count)
            var sum = 0
            for (a, b) in zip(still, video) { sum += abs(Int(a) - Int(b)) }
            XCTAssertLessThan(Double(sum) / Double(max(still.count, 1)), 0.5, "frame \(n) should look like \(look)")
        }
    }
}

/// Pictures are outputs of the transcode command too: a still image or a movie's first frame.
final class PictureOutputTests: GPUEncodeTestCase {
    func testStillAndFirstFrameToPicture() throws {
        let clip = scratch("clip.mp4")
        try Oracle.makeClip(clip, seconds: 0.4, size: "160x120", audio: false)
        let first = scratch("first.png")
        let r1 = try gpuencode([clip.path, first.path, "--preset", "grayscale"])
        XCTAssertEqual(r1.status, 0, r1.stderr)
        // Against ffmpeg: the first frame decoded with BT.601 (the clip is untagged), then GPUImage's
        // grayscale weights with colorchannelmixer.
        let g = ".2125:.7154:.0721:0"
        let reference = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", clip.path, "-frames:v", "1", "-vf",
            "scale=in_color_matrix=bt601:in_range=tv:out_range=pc:flags=bicubic+accurate_rnd+full_chroma_int,format=rgb24,colorchannelmixer=\(g):\(g):\(g)",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let picture = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", first.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(reference.count, picture.count)
        var squared = 0.0
        for (a, b) in zip(reference, picture) { squared += Double((Int(a) - Int(b)) * (Int(a) - Int(b))) }
        let psnr = 10 * log10(255 * 255 / max(squared / Double(max(reference.count, 1)), 1e-9))
        XCTAssertGreaterThan(psnr, 35, "the first frame in grey against ffmpeg's")
        let jpeg = scratch("again.jpg")
        let r2 = try gpuencode([first.path, jpeg.path, "--preset", "sepia"])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        let info = try Oracle.runChecked("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", jpeg.path])
        XCTAssertEqual(info.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "mjpeg,160,120")
        let again = try gpuencode([first.path, jpeg.path, "--preset", "sepia"])
        assertCleanFailure(again, exitCodes: [ExitCode.cannotCreate], mentioning: [jpeg.path])
        let same = try gpuencode([first.path, first.path, "--preset", "sepia", "-y"])
        assertCleanFailure(same, exitCodes: [ExitCode.usage], mentioning: [first.path])
    }
}

/// `gpuencode lut identity` makes a lookup image that leaves pictures unchanged (within 1/255).
final class LutCommandTests: GPUEncodeTestCase {
    func testIdentityLookupLeavesAPictureUnchanged() throws {
        let lut = scratch("identity.png")
        XCTAssertEqual(try gpuencode(["lut", "identity", lut.path]).status, 0)
        let info = try Oracle.runChecked("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", lut.path])
        XCTAssertEqual(info.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "512,512")
        let picture = scratch("in.png")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=128x96", "-frames:v", "1", picture.path])
        let preset = scratch("lut.json")
        try Data(#"{"version": 1, "name": "lut", "filters": [{"filter": "lookup", "image": "identity.png"}]}"#.utf8).write(to: preset)
        let out = scratch("out.png")
        let result = try gpuencode([picture.path, out.path, "--preset", preset.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let a = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", picture.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let b = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", out.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(a.count, b.count)
        let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 255
        XCTAssertLessThanOrEqual(worst, 1)
        XCTAssertEqual(try gpuencode(["lut", "identity", lut.path]).status, ExitCode.cannotCreate, "no overwrite without -y")
    }
}
