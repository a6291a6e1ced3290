import Foundation
import GPUEncodeKit
import XCTest

/// Geometry filters: exact pixel moves (crop, flip, quarter turns) must be exact; resampling
/// ones are checked against bilinear / box references, and resize's layout (output size, where
/// the picture lands, the black bars) pixel by pixel.
final class GeometryTests: FilterTestCase {
    let source = Picture(TestImages.pattern)
    let black = RGBA(0, 0, 0, 1)

    func size(_ image: RGBAImage) -> [Int] { [image.width, image.height] }

    /// The mean of source pixels [x0, x0 + w) x [y0, y0 + h): a box filter's output.
    func boxMean(_ x0: Int, _ y0: Int, _ w: Int, _ h: Int) -> RGBA {
        var s = RGBA()
        for y in y0..<(y0 + h) { for x in x0..<(x0 + w) { s += source[x, y] } }
        return s / Double(w * h)
    }

    func testCropKeepsTheRegionExactly() throws {
        // 0.25 x 64 = 16, 0.25 x 48 = 12: pixel-aligned.
        let out = try render([try filter("crop", ["x": .float(0.25), "y": .float(0.25), "width": .float(0.5), "height": .float(0.5)])])
        XCTAssertEqual(size(out), [32, 24])
        assertMatches(out, tolerance: 0) { x, y in self.source[16 + x, 12 + y] }
        // 0.1 x 64 = 6.4 -> 6, 0.3 x 64 = 19.2 -> 19; 0.5 x 48 = 24, 0.45 x 48 = 21.6 -> 22.
        let rounded = try render([try filter("crop", ["x": .float(0.1), "y": .float(0.5), "width": .float(0.3), "height": .float(0.45)])])
        XCTAssertEqual(size(rounded), [19, 22])
        assertMatches(rounded, tolerance: 0) { x, y in self.source[6 + x, 24 + y] }
        // The default keeps everything; a region past the edge is refused.
        XCTAssertEqual(try render([try filter("crop")]), TestImages.pattern)
        let bad = FilterInstance(CropFilter.declaration, values: ["x": .float(0.6), "width": .float(0.5)])
        XCTAssertNotNil(CropFilter.declaration.check?(bad))
    }

    func testFlipMirrorsExactly() throws {
        let w = TestImages.width, h = TestImages.height
        let horizontal = try render([try filter("flip")])
        assertMatches(horizontal, tolerance: 0, "horizontal") { x, y in self.source[w - 1 - x, y] }
        let vertical = try render([try filter("flip", ["horizontal": .bool(false), "vertical": .bool(true)])])
        assertMatches(vertical, tolerance: 0, "vertical") { x, y in self.source[x, h - 1 - y] }
        let both = try render([try filter("flip", ["vertical": .bool(true)])])
        assertMatches(both, tolerance: 0, "both") { x, y in self.source[w - 1 - x, h - 1 - y] }
    }

    func testRotate90TurnsClockwiseAndSwapsTheSize() throws {
        let w = TestImages.width, h = TestImages.height
        let one = try render([try filter("rotate90")])
        XCTAssertEqual(size(one), [h, w])
        // Clockwise: the source's left column becomes the top row, read bottom to top.
        assertMatches(one, tolerance: 0, "90") { x, y in self.source[y, h - 1 - x] }
        let two = try render([try filter("rotate90", ["turns": .int(2)])])
        XCTAssertEqual(size(two), [w, h])
        assertMatches(two, tolerance: 0, "180") { x, y in self.source[w - 1 - x, h - 1 - y] }
        let three = try render([try filter("rotate90", ["turns": .int(3)])])
        XCTAssertEqual(size(three), [h, w])
        assertMatches(three, tolerance: 0, "270") { x, y in self.source[w - 1 - y, x] }
        // Four quarter turns are the identity.
        XCTAssertEqual(try render([try filter("rotate90"), try filter("rotate90", ["turns": .int(3)])]), TestImages.pattern)
    }

    /// The affine map's inverse by its definition: output = centre + translation + R(S(input - centre)).
    func transformReference(rotation: Double, scale: [Double], translation: [Double], outside: RGBA?) -> (Int, Int) -> RGBA {
        let w = Double(TestImages.width), h = Double(TestImages.height)
        let a = rotation * .pi / 180
        return { x, y in
            let dx = Double(x) + 0.5 - w / 2 - translation[0] * w, dy = Double(y) + 0.5 - h / 2 - translation[1] * h
            // R turns clockwise on a y-down picture; its inverse is its transpose.
            let rx = cos(a) * dx + sin(a) * dy, ry = -sin(a) * dx + cos(a) * dy
            let px = w / 2 + rx / scale[0], py = h / 2 + ry / scale[1]
            if let outside, px < 0 || py < 0 || px >= w || py >= h { return outside }
            return self.source.bilinear(px - 0.5, py - 0.5)
        }
    }

    func testTransformMovesAboutTheCentre() throws {
        XCTAssertEqual(try render([try filter("transform")]), TestImages.pattern)
        // A quarter of the width to the right: a whole-pixel shift with black on the left.
        let shifted = try render([try filter("transform", ["translation": .vector([0.25, 0])])])
        assertMatches(shifted, tolerance: 0, "shift") { x, y in x < 16 ? self.black : self.source[x - 16, y] }
        let cases: [(String, RGBA?)] = [("black", black), ("transparent", RGBA(0, 0, 0, 0)), ("edge", nil)]
        for (fill, outside) in cases {
            let values: [String: ParameterValue] = ["rotation": .float(30), "scale": .vector([1.5, 0.8]),
                                                    "translation": .vector([0.1, -0.05]), "fill": .string(fill)]
            let out = try render([try filter("transform", values)])
            XCTAssertEqual(size(out), [TestImages.width, TestImages.height])
            assertMatches(out, tolerance: 3, fill, reference: transformReference(rotation: 30, scale: [1.5, 0.8], translation: [0.1, -0.05], outside: outside))
        }
        // 90 degrees clockwise: the picture's top edge now runs down its right side.
        let turned = try render([try filter("transform", ["rotation": .float(90), "fill": .string("edge")])])
        assertMatches(turned, tolerance: 3, "90", reference: transformReference(rotation: 90, scale: [1, 1], translation: [0, 0], outside: nil))
    }

    func testResizeFitLetterboxesWithBlack() throws {
        // 64x48 into 32x32: scale 0.5, the picture is 32x24 with 4-pixel bars above and below.
        let out = try render([try filter("resize", ["width": .int(32), "height": .int(32)])])
        XCTAssertEqual(size(out), [32, 32])
        // A 2x reduction samples between 4 pixels: their mean. Tolerance 1.5: 0.5 for the output's
        // rounding and 1 for the GPU's fixed-point bilinear arithmetic summed over several taps.
        assertMatches(out, tolerance: 1.5) { x, y in
            y < 4 || y >= 28 ? self.black : self.boxMean(2 * x, 2 * (y - 4), 2, 2)
        }
        // Pillarbox: 64x48 into 48x24 is 32x24 with 8-pixel bars left and right.
        let pillar = try render([try filter("resize", ["width": .int(48), "height": .int(24), "mode": .string("fit")])])
        XCTAssertEqual(size(pillar), [48, 24])
        assertMatches(pillar, tolerance: 1.5) { x, y in
            x < 8 || x >= 40 ? self.black : self.boxMean(2 * (x - 8), 2 * y, 2, 2)
        }
    }

    func testResizeFillCropsAndStretchDistorts() throws {
        // Fill 24x24: scale 0.5 (height decides), 32x24 centred, 4 columns cut each side.
        let fill = try render([try filter("resize", ["width": .int(24), "height": .int(24), "mode": .string("fill")])])
        XCTAssertEqual(size(fill), [24, 24])
        assertMatches(fill, tolerance: 1.5, "fill") { x, y in self.boxMean(2 * (x + 4), 2 * y, 2, 2) }
        // Stretch 32x12: 2x across, 4x down, so two taps down cover each 2x4 block.
        let stretch = try render([try filter("resize", ["width": .int(32), "height": .int(12), "mode": .string("stretch")])])
        XCTAssertEqual(size(stretch), [32, 12])
        assertMatches(stretch, tolerance: 1.5, "stretch") { x, y in self.boxMean(2 * x, 4 * y, 2, 4) }
    }

    func testResizeKeepsTheAspectAndAveragesLargeReductions() throws {
        // Height only: the width follows the aspect.
        let half = try render([try filter("resize", ["height": .int(24)])])
        XCTAssertEqual(size(half), [32, 24])
        assertMatches(half, tolerance: 1.5) { x, y in self.boxMean(2 * x, 2 * y, 2, 2) }
        // 8x smaller: 4 x 4 bilinear taps make it the mean of each 8x8 block, not a sample of it.
        let small = try render([try filter("resize", ["width": .int(8)])])
        XCTAssertEqual(size(small), [8, 6])
        assertMatches(small, tolerance: 1.5, "8x") { x, y in self.boxMean(8 * x, 8 * y, 8, 8) }
        // Enlarging is bilinear.
        let big = try render([try filter("resize", ["width": .int(100), "height": .int(70), "mode": .string("stretch")])])
        XCTAssertEqual(size(big), [100, 70])
        assertMatches(big, tolerance: 3, "enlarge") { x, y in
            TestImages.sample(TestImages.pattern, (Double(x) + 0.5) / 100, (Double(y) + 0.5) / 70)
        }
    }

    func testFiltersAfterAGeometryFilterSeeTheNewSize() throws {
        // A blur and a point filter after a crop work on the 32x24 picture, its edges clamped there.
        let out = try render([try filter("crop", ["x": .float(0.25), "y": .float(0.25), "width": .float(0.5), "height": .float(0.5)]),
                              try filter("boxBlur", ["radius": .int(1)]), try filter("grayscale")])
        XCTAssertEqual(size(out), [32, 24])
        let cropped = Picture(width: 32, height: 24) { x, y in self.source[16 + x, 12 + y] }
        let blurred = separable(cropped, [1.0 / 3, 1.0 / 3, 1.0 / 3])
        assertMatches(out, tolerance: 3) { x, y in
            let c = round8(blurred[x, y])
            return RGBA(SIMD3(repeating: luminance709(c)), c.w)
        }
    }

    /// The encoder writes what crop and resize make (even sizes for 4:2:0).
    func testCLICropAndResizeChangeTheVideoSize() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/debug/gpuencode").path
        guard FileManager.default.isExecutableFile(atPath: binary), FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else {
            throw XCTSkip("needs .build/debug/gpuencode and ffmpeg")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("geometry-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        @discardableResult
        func run(_ tool: String, _ args: [String]) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = args
            let pipe = Pipe()
            p.standardOutput = pipe
            p.standardError = pipe
            try p.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, 0, "\(tool) \(args.joined(separator: " ")): \(text)")
            return text
        }

        let input = dir.appendingPathComponent("in.mp4").path
        try run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "0.4",
                                    "-pix_fmt", "yuv420p", "-c:v", "libx264", "-y", input])
        // Crop 0.5 x 0.45 -> 160x108; then resize to width 200 keeping the aspect -> 200x135, made even: 200x134.
        let cases: [(String, String)] = [
            (#"{"filter": "crop", "x": 0.25, "y": 0.1, "width": 0.5, "height": 0.45}"#, "160x108"),
            (#"{"filter": "crop", "width": 0.5, "height": 0.45}, {"filter": "resize", "width": 200}"#, "200x134"),
        ]
        for (i, (filters, expected)) in cases.enumerated() {
            let preset = dir.appendingPathComponent("p\(i).json")
            try #"{"version": 1, "name": "geometry", "filters": [\#(filters)]}"#.write(to: preset, atomically: true, encoding: .utf8)
            let output = dir.appendingPathComponent("out\(i).mp4").path
            try run(binary, [input, output, "--preset", preset.path, "-y"])
            let probed = try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                                      "-of", "csv=s=x:p=0", output])
            XCTAssertEqual(probed.trimmingCharacters(in: .whitespacesAndNewlines), expected, filters)
        }
    }
}
