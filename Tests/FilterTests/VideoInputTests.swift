import Foundation
@testable import GPUEncodeKit
import XCTest

/// The `video` generator: overlay clips made here with the ffmpeg CLI (lossless RGB FFV1, so solid
/// colours come back exact), rendered through ImageRenderer at chosen times.
final class VideoInputTests: FilterTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpuencode-video-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
        try super.tearDownWithError()
    }

    static let red = RGBA(1, 0, 0, 1), green = RGBA(0, 1, 0, 1), blue = RGBA(0, 0, 1, 1), white = RGBA(1, 1, 1, 1)
    static let clear = RGBA(0, 0, 0, 0)

    /// Runs ffmpeg with `arguments` writing `name` in the scratch directory; returns its path.
    private func ffmpeg(_ name: String, _ arguments: [String]) throws -> String {
        let path = directory + "/" + name
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments + [path]
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw XCTSkip("ffmpeg could not make \(name)") }
        return path
    }

    /// Solid colours, `seconds` each at `rate` frames per second, 160x120, lossless RGB.
    private func segments(_ colors: [String], seconds: Double = 0.5, rate: Int = 4, name: String = "segments.mkv",
                          codec: [String] = ["-c:v", "ffv1"], format: String = "bgr0") throws -> String {
        var graph = colors.enumerated().map { "color=c=\($1):s=160x120:r=\(rate):d=\(seconds)[s\($0)]" }.joined(separator: ";")
        graph += ";" + colors.indices.map { "[s\($0)]" }.joined() + "concat=n=\(colors.count):v=1:a=0,format=\(format)"
        return try ffmpeg(name, ["-filter_complex", graph] + codec)
    }

    private func video(_ file: String, _ values: [String: ParameterValue] = [:]) throws -> FilterInstance {
        try filter("video", ["file": .string(file)].merging(values) { a, _ in a })
    }

    /// One renderer for several times, as a transcode uses it (forward decoding and seeks back).
    private func assertColors(_ f: FilterInstance, _ expected: [(time: Double, color: RGBA)], _ what: String,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let renderer = try ImageRenderer(width: TestImages.width, height: TestImages.height, filters: [f])
        for (time, color) in expected {
            let out = try renderer.render(TestImages.pattern, time: time)
            assertMatches(out, tolerance: 1, "\(what) at \(time) s", file: file, line: line) { _, _ in color }
        }
    }

    func testShowsTheFrameWhoseIntervalHoldsTheTime() throws {
        let clip = try segments(["red", "lime", "blue"])
        try assertColors(try video(clip), [
            (0, Self.red), (0.49, Self.red), (0.5, Self.green), (0.74, Self.green), (0.99, Self.green),
            (1.0, Self.blue), (1.49, Self.blue),
            // Looping: the clip is 1.5 s long (six frames of 0.25 s).
            (1.5, Self.red), (2.0, Self.green), (3.1, Self.red), (4.4, Self.blue),
            // Back in time (a preview): sought.
            (0.6, Self.green), (0.1, Self.red),
        ], "loop")
    }

    /// The renderer uploads again only when the serial changes: equal within a frame's interval.
    func testSerialChangesOnlyWithTheFrame() throws {
        let decoder = try OverlayDecoder(path: try segments(["red", "lime", "blue"]), offset: 0.5)
        let serials = [0.0, 0.3, 0.5, 0.6, 0.74, 0.75, 1.0, 2.0, 2.1].map { decoder.frame(at: $0).serial }
        XCTAssertEqual(serials[0], serials[1], "transparent before the offset")
        XCTAssertNotEqual(serials[1], serials[2])
        XCTAssertEqual(serials[2], serials[3])
        XCTAssertEqual(serials[3], serials[4])
        XCTAssertNotEqual(serials[4], serials[5])
        XCTAssertEqual(serials[7], serials[8], "looped: the first frame again")
        XCTAssertEqual(serials[2], serials[7])
        XCTAssertEqual(decoder.length, 1.5)
    }

    func testHoldsTheLastFrameWithoutLoop() throws {
        let clip = try segments(["red", "lime", "blue"])
        try assertColors(try video(clip, ["loop": .bool(false)]), [
            (0.2, Self.red), (1.2, Self.blue), (1.5, Self.blue), (7, Self.blue), (0.7, Self.green),
        ], "hold")
    }

    func testOffsetDelaysTheOverlayAndIsTransparentBefore() throws {
        let clip = try segments(["red", "lime", "blue"])
        try assertColors(try video(clip, ["offset": .float(1)]), [
            (0, Self.clear), (0.99, Self.clear), (1.0, Self.red), (1.6, Self.green), (2.1, Self.blue), (2.5, Self.red),
        ], "offset 1 s")
        try assertColors(try video(clip, ["offset": .float(2), "loop": .bool(false)]), [
            (1, Self.clear), (2.3, Self.red), (9, Self.blue),
        ], "offset 2 s, hold")
    }

    /// Frames at 0, 0.1, 0.55 and 0.6 s (the last lasting 1 s): picked by timestamp, not by count.
    func testVariableFrameRateOverlay() throws {
        let clip = try ffmpeg("vfr.mkv", [
            "-filter_complex",
            "color=c=red:s=160x120:r=1:d=1[a];color=c=lime:s=160x120:r=1:d=1[b];color=c=blue:s=160x120:r=1:d=1[c];color=c=white:s=160x120:r=1:d=1[d];"
                + "[a][b][c][d]concat=n=4:v=1:a=0,settb=1/1000,setpts='(0.1*eq(N\\,1)+0.55*eq(N\\,2)+0.6*eq(N\\,3))/TB',format=bgr0",
            "-fps_mode", "passthrough", "-enc_time_base", "1:1000", "-c:v", "ffv1",
        ])
        // Output frames at 25 fps: by count the second overlay frame would show at 0.04 s.
        try assertColors(try video(clip), [
            (0, Self.red), (0.04, Self.red), (0.08, Self.red), (0.12, Self.green), (0.52, Self.green), (0.56, Self.blue),
            (0.6, Self.white), (1.2, Self.white), (1.6, Self.red), (1.72, Self.green),
        ], "vfr")
    }

    /// A red top half over a blue bottom half, placed on a 2:1 frame (the overlay is 4:3).
    func testFitFillAndStretchPlacement() throws {
        let clip = try ffmpeg("halves.mkv", [
            "-filter_complex", "color=c=red:s=160x60:r=4:d=0.5,format=bgr0[a];color=c=blue:s=160x60:r=4:d=0.5,format=bgr0[b];[a][b]vstack",
            "-c:v", "ffv1",
        ])
        let wide = RGBAImage(width: 96, height: 48) { _, _ in (128, 128, 128, 255) }
        func check(_ fill: String, _ reference: @escaping (Int, Int) -> RGBA?) throws {
            let out = try ImageRenderer(width: 96, height: 48, filters: [try video(clip, ["fill": .string(fill)])]).render(wide, time: 0.1)
            // Pixels on a boundary mix two colours; every other one is exact.
            assertMatches(out, tolerance: 1, fill) { x, y in reference(x, y) ?? TestImages.color(out, x, y) }
        }
        // fit: 64x48 centred (scale 0.4), transparent beside it; the halves meet at row 24.
        try check("fit") { x, y in
            if x == 15 || x == 16 || x == 79 || x == 80 || y == 23 || y == 24 { return nil }
            if x < 16 || x >= 80 { return Self.clear }
            return y < 24 ? Self.red : Self.blue
        }
        // fill: 96x72 (scale 0.6), cropped top and bottom: overlay rows 20..100 show, the halves
        // meet at (60 - 20) * 0.6 = 24.
        try check("fill") { _, y in
            if y == 23 || y == 24 { return nil }
            return y < 24 ? Self.red : Self.blue
        }
        // stretch: the whole overlay, halves at row 24.
        try check("stretch") { _, y in
            if y == 23 || y == 24 { return nil }
            return y < 24 ? Self.red : Self.blue
        }
    }

    func testOpacityAndBlendWithMovieOverlay() throws {
        let clip = try segments(["red", "lime", "blue"])
        let overlay = try video(clip, ["opacity": .float(0.5)])
        let renderer = try ImageRenderer(width: TestImages.width, height: TestImages.height,
                                         filters: [try filter("normal", with: overlay)])
        for (time, color) in [(0.2, Self.red), (0.7, Self.green), (1.2, Self.blue)] {
            let out = try renderer.render(TestImages.pattern, time: time)
            assertMatches(out, tolerance: 2, "normal blend at \(time)") { x, y in
                let c = TestImages.color(TestImages.pattern, x, y)
                return RGBA(c.rgb * 0.5 + color.rgb * 0.5, 1)
            }
        }
    }

    /// An H.264 4:2:0 MP4 (untagged, so BT.601 limited range): the colours within compression error.
    func testLossyMP4Overlay() throws {
        let clip = try segments(["red", "blue"], name: "lossy.mp4", codec: ["-c:v", "libx264", "-preset", "ultrafast", "-qp", "0"],
                                format: "yuv420p")
        let renderer = try ImageRenderer(width: TestImages.width, height: TestImages.height, filters: [try video(clip)])
        for (time, color) in [(0.1, Self.red), (0.6, Self.blue), (1.1, Self.red)] {
            assertMatches(try renderer.render(TestImages.pattern, time: time), tolerance: 4, "mp4 at \(time)") { _, _ in color }
        }
    }

    func testPresetShorthandAndErrors() throws {
        _ = try segments(["red", "lime"], name: "clip.mov", codec: ["-c:v", "png"], format: "rgb24")
        let dir = directory!
        let preset = try Preset.parse(json: """
        {"version": 1, "name": "v", "filters": [
          {"filter": "screen", "with": "clip.mov"},
          {"filter": "multiply", "with": {"filter": "video", "file": "clip.mov", "fill": "fit", "loop": false}}
        ]}
        """, origin: dir + "/v.json")
        XCTAssertEqual(preset.filters.map { $0.overlay.first?.declaration.name }, ["video", "video"])
        XCTAssertEqual(preset.filters[1].overlay.first?["loop"], .bool(false))

        func assertError(_ json: String, _ parts: [String], line: UInt = #line) {
            XCTAssertThrowsError(try Preset.parse(json: json, origin: dir + "/bad.json"), line: line) { error in
                guard let e = error as? GPUEncodeError else { return XCTFail("\(error)", line: line) }
                XCTAssertEqual(e.exitCode, 67, line: line)
                for part in parts { XCTAssertTrue(e.description.contains(part), "\(e.description) lacks \(part)", line: line) }
            }
        }
        assertError("""
        {"version": 1, "name": "v", "filters": [
          {"filter": "screen", "with": "missing.mp4"}
        ]}
        """, ["bad.json: 2:", "missing.mp4", "no such file"])
        try "not a movie".write(toFile: dir + "/text.mkv", atomically: true, encoding: .utf8)
        assertError("""
        {"version": 1, "name": "v", "filters": [

          {"filter": "video", "file": "text.mkv"}
        ]}
        """, ["bad.json: 3:", "text.mkv"])
        _ = try ffmpeg("tone.mkv", ["-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "flac"])
        assertError("""
        {"version": 1, "name": "v", "filters": [{"filter": "overlay", "with": {"filter": "video", "file": "tone.mkv"}}]}
        """, ["bad.json: 1:", "tone.mkv", "no video stream"])
        assertError("""
        {"version": 1, "name": "v", "filters": [{"filter": "video"}]}
        """, ["bad.json: 1:", "file"])
    }
}
