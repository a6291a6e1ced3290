import GPUEncodeKit
import XCTest

/// ColorThresholdFilters.swift: luminanceThreshold and adaptiveThreshold (GPUImage's). Their
/// output jumps from black to white, so a pixel whose luminance is within rounding of the threshold
/// may land on either side: instead of a tolerance these tests require every pixel away from the
/// threshold to be exactly right, and bound the number of flips next to it.
final class ColorThresholdTests: FilterTestCase {
    /// `expected(x, y)` gives the reference's answer and how far the pixel is from the threshold
    /// (in luminance); pixels closer than `margin` may flip, at most `maxFlips` of them.
    private func assertThreshold(_ out: RGBAImage, margin: Double, maxFlips: Int, alpha: UInt8? = nil, _ what: String,
                                 file: StaticString = #filePath, line: UInt = #line,
                                 expected: (Int, Int) -> (white: Bool, distance: Double)) {
        var flips = 0, wrong: [String] = []
        for y in 0..<out.height {
            for x in 0..<out.width {
                let p = out[x, y]
                let (white, distance) = expected(x, y)
                let want: UInt8 = white ? 255 : 0
                let got = (p.0, p.1, p.2)
                if let alpha, p.3 != alpha { wrong.append("(\(x), \(y)) alpha \(p.3)") }
                if got == (want, want, want) { continue }
                if abs(distance) < margin && (got == (255 - want, 255 - want, 255 - want)) { flips += 1; continue }
                wrong.append("(\(x), \(y)) got \(got) want \(want) at distance \(distance)")
            }
        }
        XCTAssertTrue(wrong.isEmpty, "\(what): \(wrong.count) wrong pixels, first \(wrong.prefix(5))", file: file, line: line)
        XCTAssertLessThanOrEqual(flips, maxFlips, "\(what): flips next to the threshold", file: file, line: line)
    }

    func testLuminanceThreshold() throws {
        let image = TestImages.pattern
        for t in [0.5, 0.3, 0.85] {
            let f = t == 0.5 ? try filter("luminanceThreshold") : try filter("luminanceThreshold", ["threshold": .float(t)])
            let out = try render([f], image)
            // GPUImageLuminanceThresholdFilter: step(threshold, Rec. 709 luminance). Only float
            // rounding separates a pixel from its reference, hence the tiny margin.
            assertThreshold(out, margin: 1e-5, maxFlips: 4, alpha: 255, "threshold \(t)") { x, y in
                let l = luminance709(TestImages.color(image, x, y))
                return (l >= t, l - t)
            }
        }
    }

    /// GPUImageAdaptiveThresholdFilter: luminance (Rec. 709) box-blurred over 2r + 1 pixels across
    /// then down (r = the radius rounded to an even number; clamped at the edges; each pass stored
    /// in 8 bits), then white where luminance >= blurred - 0.05.
    private func adaptiveReference(_ image: RGBAImage, radius r: Int) -> (Int, Int) -> (white: Bool, distance: Double) {
        let w = image.width, h = image.height
        let lum = (0..<(w * h)).map { luminance709(TestImages.color(image, $0 % w, $0 / w)) }
        func rounded8(_ v: Double) -> Double { (v * 255).rounded(.toNearestOrEven) / 255 }
        let n = Double(2 * r + 1)
        var across = [Double](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var s = 0.0
                for i in -r...r { s += lum[y * w + min(max(x + i, 0), w - 1)] }
                across[y * w + x] = rounded8(s / n)
            }
        }
        var blurred = [Double](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var s = 0.0
                for i in -r...r { s += across[min(max(y + i, 0), h - 1) * w + x] }
                blurred[y * w + x] = rounded8(s / n)
            }
        }
        return { x, y in
            let d = lum[y * w + x] - (blurred[y * w + x] - 0.05)
            return (d >= 0, d)
        }
    }

    func testAdaptiveThresholdAgainstBoxBlurredLuminance() throws {
        let image = TestImages.pattern
        // (parameter, GPUImage's even radius)
        for (given, radius) in [(4.0, 4), (7.0, 8), (2.4, 2), (1.0, 2)] {
            XCTAssertEqual(AdaptiveThresholdFilter.radius(given), radius)
            let f = given == 4 ? try filter("adaptiveThreshold") : try filter("adaptiveThreshold", ["blurRadiusInPixels": .float(given)])
            let out = try render([f], image)
            // The blurred luminance goes through two 8-bit textures on either side (GPU and
            // reference), and the GPU's sum of bilinear taps may round to the neighbouring code
            // value: a pixel within 1.5 code values of the threshold may flip (none do on llvmpipe). At most 0.5% of the picture.
            assertThreshold(out, margin: 1.5 / 255, maxFlips: image.width * image.height / 200, alpha: 255,
                            "blurRadiusInPixels \(given)", expected: adaptiveReference(image, radius: radius))
        }
    }

    func testAdaptiveThresholdFollowsAPointFilterBeforeIt() throws {
        // A point filter before it runs in the source pass; adaptiveThreshold must see its output.
        let image = TestImages.pattern
        let out = try render([try filter("colorInvert"), try filter("adaptiveThreshold")], image)
        let inverted = RGBAImage(width: image.width, height: image.height) { x, y in
            let p = image[x, y]
            return (255 - p.0, 255 - p.1, 255 - p.2, p.3)
        }
        assertThreshold(out, margin: 1.5 / 255, maxFlips: image.width * image.height / 200, alpha: 255,
                        "after colorInvert", expected: adaptiveReference(inverted, radius: 4))
    }
}
