import Foundation
import GPUEncodeKit
import XCTest

/// The `image` generator: a PNG/JPEG written here, placed by fill (cover, centred, cropped), fit
/// (whole, centred, transparent borders) or stretch, checked against the placement computed in
/// picture pixels; resampling is bilinear on premultiplied colour when enlarging and the box
/// average of the covered pixels when shrinking by a whole factor.
final class GeneratorTests: FilterTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpuencode-image-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
        try super.tearDownWithError()
    }

    /// Writes `picture` as `name` (PNG or JPEG by extension) in the test's directory; returns its path.
    func write(_ picture: RGBAImage, _ name: String) throws -> String {
        let path = directory + "/" + name
        try Data(ImageIO.encode(picture, forPath: path)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A small picture with hard edges, smooth ramps, and transparent and translucent parts.
    static func picture(_ w: Int, _ h: Int) -> RGBAImage {
        RGBAImage(width: w, height: h) { x, y in
            let r = UInt8(x * 255 / max(w - 1, 1)), g = UInt8(y * 255 / max(h - 1, 1))
            let b: UInt8 = (x / 2 + y / 3) % 2 == 0 ? 230 : 20
            let a: UInt8 = x < w / 4 && y < h / 4 ? 0 : (y > 3 * h / 4 ? 100 : 255)
            return (r, g, b, a)
        }
    }

    static func premultiplied(_ p: RGBAImage, _ x: Int, _ y: Int) -> RGBA {
        let c = TestImages.pixel(p, x, y)
        return RGBA(c.rgb * c.w, c.w)
    }

    static func straight(_ p: RGBA) -> RGBA { p.w > 0 ? RGBA(p.rgb / p.w, p.w) : RGBA() }

    /// The picture as placed on a `width` x `height` frame, at output pixel (x, y).
    static func placed(_ p: RGBAImage, _ fill: String, width: Int = TestImages.width, height: Int = TestImages.height) -> (Int, Int) -> RGBA {
        let w = Double(p.width), h = Double(p.height)
        let sx = Double(width) / w, sy = Double(height) / h
        let (scaleX, scaleY) = fill == "stretch" ? (sx, sy) : fill == "fit" ? (min(sx, sy), min(sx, sy)) : (max(sx, sy), max(sx, sy))
        // The picture's top-left corner on the frame, in output pixels: centred.
        let ox = (Double(width) - w * scaleX) / 2, oy = (Double(height) - h * scaleY) / 2
        return { x, y in
            let px = (Double(x) + 0.5 - ox) / scaleX, py = (Double(y) + 0.5 - oy) / scaleY
            if px < 0 || px > w || py < 0 || py > h { return RGBA() }
            if scaleX < 1 || scaleY < 1 {
                // Shrinking: the mean of the picture pixels under the output pixel (tests use whole ratios).
                let edges = [(Double(x) - ox) / scaleX, (Double(x) + 1 - ox) / scaleX, (Double(y) - oy) / scaleY, (Double(y) + 1 - oy) / scaleY]
                precondition(edges.allSatisfy { abs($0 - $0.rounded()) < 1e-9 }, "whole ratios only")
                let (x0, x1, y0, y1) = (edges[0].rounded(), edges[1].rounded(), edges[2].rounded(), edges[3].rounded())
                var sum = RGBA()
                for j in Int(y0)..<Int(y1) { for i in Int(x0)..<Int(x1) { sum += premultiplied(p, i, j) } }
                return straight(sum / ((x1 - x0) * (y1 - y0)))
            }
            // Enlarging: bilinear between the four nearest pixel centres, clamped at the edges.
            let fx = px - 0.5, fy = py - 0.5
            let i = Int(fx.rounded(.down)), j = Int(fy.rounded(.down))
            let tx = fx - Double(i), ty = fy - Double(j)
            let top = premultiplied(p, i, j) * (1 - tx) + premultiplied(p, i + 1, j) * tx
            let bottom = premultiplied(p, i, j + 1) * (1 - tx) + premultiplied(p, i + 1, j + 1) * tx
            return straight(top * (1 - ty) + bottom * ty)
        }
    }

    func image(_ path: String, _ fill: String? = nil) throws -> FilterInstance {
        try filter("image", ["file": .string(path)].merging(fill.map { ["fill": .string($0)] } ?? [:]) { a, _ in a })
    }

    func testEnlargedPictureIsPlacedByFitFillAndStretch() throws {
        // 16 x 16 on 64 x 48: fill scales by 4 and crops 8 rows top and bottom, fit scales by 3
        // and leaves 8 transparent columns each side, stretch scales by 4 and 3.
        let p = GeneratorTests.picture(16, 16)
        let path = try write(p, "square.png")
        for fill in [nil, "fill", "fit", "stretch"] {
            let out = try render([try image(path, fill)])
            assertMatches(out, "fill \(fill ?? "default")", reference: GeneratorTests.placed(p, fill ?? "fill"))
        }
        // Fit's borders are transparent; fill covers the frame.
        let fit = try render([try image(path, "fit")])
        XCTAssertEqual(fit[7, 20].3, 0)
        XCTAssertEqual(fit[56, 20].3, 0)
        XCTAssertEqual(fit[8, 20].3, 255)
    }

    func testWidePictureEnlargedByFitLeavesBandsTopAndBottom() throws {
        // 20 x 5 on 64 x 48: fit scales by 3.2 (bands of 16 rows), fill by 9.6 (crops the sides).
        let p = GeneratorTests.picture(20, 5)
        let path = try write(p, "wide.png")
        for fill in ["fit", "fill", "stretch"] {
            assertMatches(try render([try image(path, fill)]), "wide, \(fill)", reference: GeneratorTests.placed(p, fill))
        }
    }

    func testShrunkPictureAveragesThePixelsUnderEachOutputPixel() throws {
        // 256 x 96 by fill: scale 1/2, 2 x 2 pixels per output pixel, 64 columns cropped each side.
        // 192 x 144 stretched: 3 x 3 pixels per output pixel. 96 x 144 by fit: scale 1/3, 16
        // transparent columns each side.
        for (w, h, fill) in [(256, 96, "fill"), (192, 144, "stretch"), (96, 144, "fit")] {
            let p = GeneratorTests.picture(w, h)
            let path = try write(p, "large-\(w)x\(h).png")
            assertMatches(try render([try image(path, fill)]), "\(w)x\(h) \(fill)", reference: GeneratorTests.placed(p, fill))
        }
    }

    func testJPEGIsOpaqueAndClose() throws {
        let p = RGBAImage(width: 32, height: 24) { x, y in (UInt8(x * 8), UInt8(y * 10), 128, 255) }
        let path = try write(p, "ramp.jpg")
        // 32 x 24 on 64 x 48 is an exact doubling. Tolerance 6: JPEG is lossy (quality ~95, 4:4:4).
        let opaque = RGBAImage(width: p.width, height: p.height, pixels: p.pixels)
        assertMatches(try render([try image(path, "stretch")]), tolerance: 6, "jpeg", reference: GeneratorTests.placed(opaque, "stretch"))
    }

    func testImageOverlayBlendsOverTheBase() throws {
        let p = GeneratorTests.picture(16, 16)
        let path = try write(p, "overlay.png")
        let overlay = GeneratorTests.placed(p, "fit")
        for mode in ["normal", "multiply"] {
            try assertPointFilter([try filter(mode, ["opacity": .float(0.8)], with: try image(path, "fit"))], "\(mode) with a picture") { c, uv in
                let x = Int(uv.x * Double(TestImages.width)), y = Int(uv.y * Double(TestImages.height))
                let o = overlay(x, y)
                return ISO32000.composite(mode, base: c, overlay: o, opacity: 0.8)
            }
        }
    }

    func testPresetWithAPictureFile() throws {
        let p = GeneratorTests.picture(16, 16)
        let path = try write(p, "logo.png")
        let preset = try Preset.parse(json: """
        {"version": 1, "name": "t", "filters": [
          {"filter": "normal", "with": "\(path)"},
          {"filter": "screen", "with": "logo.png", "opacity": 0.5},
          {"filter": "multiply", "with": {"filter": "image", "file": "logo.png", "fill": "stretch"}}
        ]}
        """, origin: directory + "/preset.json")
        XCTAssertEqual(preset.filters.count, 3)
        for f in preset.filters { XCTAssertEqual(f.overlay.first?.declaration.name, "image") }
        XCTAssertEqual(preset.filters[0].overlay.first?.string("file"), path)
        XCTAssertEqual(preset.filters[0].overlay.first?.string("fill"), "fill")
        XCTAssertEqual(preset.filters[2].overlay.first?.string("fill"), "stretch")

        // The first filter alone: the picture (cover) over the pattern.
        let overlay = GeneratorTests.placed(p, "fill")
        let out = try render([preset.filters[0]])
        assertMatches(out, "preset normal with \(path)") { x, y in
            ISO32000.composite("normal", base: TestImages.color(TestImages.pattern, x, y), overlay: overlay(x, y), opacity: 1)
        }
        _ = try render(preset.filters)
    }

    func testBadPictureFilesAreReportedWithTheirPlaceInThePreset() throws {
        let garbage = directory + "/bad.png"
        try Data([1, 2, 3, 4, 5]).write(to: URL(fileURLWithPath: garbage))
        let cases = [("missing.png", "cannot read"), ("bad.png", "not a PNG or JPEG")]
        for (name, expected) in cases {
            XCTAssertThrowsError(try Preset.parse(json: """
            {"version": 1, "name": "t", "filters": [
              {"filter": "normal", "with": "\(name)"}
            ]}
            """, origin: directory + "/preset.json")) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(expected), message)
                XCTAssertTrue(message.contains("preset.json") && message.contains("2:"), message)
            }
        }
        XCTAssertThrowsError(try Preset.parse(json: """
        {"version": 1, "name": "t", "filters": [{"filter": "image"}]}
        """, origin: "t.json")) { error in XCTAssertTrue("\(error)".contains("file"), "\(error)") }
    }
}
