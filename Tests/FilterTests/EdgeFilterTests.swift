import GPUEncodeKit
import XCTest

// References for GPUImage's 3x3 edge filters from their definitions: the Sobel operator on the
// Rec. 709 luminance (GPUImage's greyscale weights), GPUImage's emboss kernel, and its toon recipe
// (outline where the Sobel magnitude reaches the threshold, posterized colour elsewhere).

final class EdgeFilterTests: FilterTestCase {
    /// The Sobel gradient magnitude of the luminance at (x, y), edges clamped.
    static func sobel(_ image: RGBAImage, _ x: Int, _ y: Int) -> Double {
        func l(_ dx: Int, _ dy: Int) -> Double { luminance709(TestImages.pixel(image, x + dx, y + dy)) }
        let gx = (l(1, -1) + 2 * l(1, 0) + l(1, 1)) - (l(-1, -1) + 2 * l(-1, 0) + l(-1, 1))
        let gy = (l(-1, 1) + 2 * l(0, 1) + l(1, 1)) - (l(-1, -1) + 2 * l(0, -1) + l(1, -1))
        return (gx * gx + gy * gy).squareRoot()
    }

    func testSobelEdgeDetectionIsTheLuminanceGradientMagnitude() throws {
        for strength in [1.0, 0.3, 2.5] {
            let image = TestImages.pattern
            let out = try render([try filter("sobelEdgeDetection", strength == 1 ? [:] : ["edgeStrength": .float(strength)])], image)
            assertMatches(out, tolerance: 3, "edgeStrength \(strength)") { x, y in
                let m = EdgeFilterTests.sobel(image, x, y) * strength
                return RGBA(m, m, m, 1)
            }
        }
    }

    func testSketchIsTheInvertedSobel() throws {
        for strength in [1.0, 0.4] {
            let image = TestImages.pattern
            let out = try render([try filter("sketch", strength == 1 ? [:] : ["edgeStrength": .float(strength)])], image)
            assertMatches(out, tolerance: 3, "edgeStrength \(strength)") { x, y in
                let m = 1 - EdgeFilterTests.sobel(image, x, y) * strength
                return RGBA(m, m, m, 1)
            }
        }
    }

    /// GPUImage's toon recipe on `image`: black where the Sobel magnitude reaches `threshold`,
    /// otherwise each channel rounded to `levels` steps; alpha kept.
    static func toon(_ image: RGBAImage, _ x: Int, _ y: Int, threshold: Double, levels: Double) -> RGBA {
        let c = TestImages.pixel(image, x, y)
        if sobel(image, x, y) >= threshold { return RGBA(0, 0, 0, c.w) }
        return RGBA(((c.rgb * levels) + 0.5).rounded(.down) / levels, c.w)
    }

    func testToonOutlinesEdgesAndPosterizes() throws {
        for (threshold, levels) in [(0.2, 10.0), (0.5, 4.0)] {
            let image = TestImages.pattern
            let values: [String: ParameterValue] = threshold == 0.2 ? [:] : ["threshold": .float(threshold), "quantizationLevels": .float(levels)]
            let out = try render([try filter("toon", values)], image)
            // A magnitude within float rounding of the threshold flips a pixel between outline and
            // colour (posterizing has no ties on 8-bit input: see the posterize test): bounded count.
            assertMostlyMatches(out, tolerance: 3, maxFraction: 0.01, "toon \(threshold) \(levels)") { x, y in
                EdgeFilterTests.toon(image, x, y, threshold: threshold, levels: levels)
            }
        }
    }

    /// GPUImage's Gaussian for blurRadiusInPixels `sigma`: taps out to where the weight falls below
    /// 1/256 of the peak of a unit-area Gaussian, the radius rounded up to even, normalised weights.
    static func gpuImageGaussian(_ image: RGBAImage, sigma: Double) -> RGBAImage {
        var radius = Int((-2 * sigma * sigma * log(1.0 / 256 * (2 * Double.pi * sigma * sigma).squareRoot())).squareRoot().rounded(.down))
        radius += radius % 2
        var w = (0...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        w = w.map { $0 / total }
        func pass(_ from: RGBAImage, dx: Int, dy: Int) -> RGBAImage {
            RGBAImage(width: from.width, height: from.height) { x, y in
                var s = RGBA()
                for i in -radius...radius { s += TestImages.pixel(from, x + i * dx, y + i * dy) * w[abs(i)] }
                // Each pass is stored in an 8-bit texture.
                let b = (simd_clamp01(s) * 255).rounded(.toNearestOrEven)
                return (UInt8(b.x), UInt8(b.y), UInt8(b.z), UInt8(b.w))
            }
        }
        return pass(pass(image, dx: 1, dy: 0), dx: 0, dy: 1)
    }

    func testSmoothToonIsToonOfTheGaussianBlur() throws {
        for (sigma, threshold, levels) in [(2.0, 0.2, 10.0), (3.0, 0.1, 6.0)] {
            let image = TestImages.pattern
            let values: [String: ParameterValue] = sigma == 2 ? [:] : ["blurRadiusInPixels": .float(sigma), "threshold": .float(threshold), "quantizationLevels": .float(levels)]
            let out = try render([try filter("smoothToon", values)], image)
            let blurred = EdgeFilterTests.gpuImageGaussian(image, sigma: sigma)
            // The blurred picture differs from the GPU's by up to a code value (bilinear-merged taps),
            // which can cross a posterize step (a whole level) or the outline threshold; such
            // pixels lie on step and threshold boundaries of the smooth picture (a few in 3072 when
            // written): bounded count.
            assertMostlyMatches(out, tolerance: 3, maxFraction: 0.01, "smoothToon \(sigma) \(threshold) \(levels)") { x, y in
                EdgeFilterTests.toon(blurred, x, y, threshold: threshold, levels: levels)
            }
        }
    }

    func testEmbossAppliesGPUImageKernel() throws {
        for intensity in [1.0, 0.5, 2.5] {
            let image = TestImages.pattern
            let out = try render([try filter("emboss", intensity == 1 ? [:] : ["intensity": .float(intensity)])], image)
            // Row 0 is the row above the pixel, column 0 the one to its left.
            let k = [[-2 * intensity, -intensity, 0], [-intensity, 1, intensity], [0, intensity, 2 * intensity]]
            assertMatches(out, tolerance: 3, "intensity \(intensity)") { x, y in
                var s = SIMD3<Double>()
                for r in 0..<3 { for c in 0..<3 { s += TestImages.pixel(image, x + c - 1, y + r - 1).rgb * k[r][c] } }
                return RGBA(s, TestImages.color(image, x, y).w)
            }
        }
    }

    func testEdgeFiltersAreSamplingFilters() throws {
        for name in ["sobelEdgeDetection", "sketch", "toon", "smoothToon", "emboss"] {
            XCTAssertFalse(try filter(name).declaration.isPoint, name)
        }
    }
}
