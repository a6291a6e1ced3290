import GPUEncodeKit
import XCTest

// References from GPUImage's definitions of posterize, the pixellations, crosshatch, Kuwahara and
// vignette, in Double on the CPU. Helpers shared with EdgeFilterTests and DistortionFilterTests
// are at the end of this file.

final class StylizeFilterTests: FilterTestCase {
    // MARK: posterize

    func testPosterizeRoundsToLevels() throws {
        // Exact per pixel: an 8-bit input k/255 is never on a rounding tie, since k/255 * L + 0.5 = n
        // would need 2kL = 255(2n - 1), even against odd. The nearest tie is 1/510 of a level away,
        // far beyond float rounding.
        for levels in [10, 3, 1] {
            try assertPointFilter([try filter("posterize", levels == 10 ? [:] : ["colorLevels": .int(levels)])], "levels \(levels)") { c, _ in
                let l = Double(levels)
                return RGBA(((c.rgb * l) + 0.5).rounded(.down) / l, c.w)
            }
        }
    }

    // MARK: pixellate, polar pixellate, polka dot, halftone

    /// GPUImage's square cell grid: `fraction` of the width on both axes, at least one pixel.
    private func cellCentre(_ uv: SIMD2<Double>, _ fraction: Double) -> (centre: SIMD2<Double>, width: Double) {
        let w = max(fraction, 1 / Double(TestImages.width))
        let d = SIMD2(w, w * Double(TestImages.width) / Double(TestImages.height))
        return (uv - glslMod(uv, d) + 0.5 * d, w)
    }

    /// Distance in fractions of the width (y scaled by height / width, GPUImage's aspectRatio).
    private func widthDistance(_ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
        let d = SIMD2(a.x - b.x, (a.y - b.y) * Double(TestImages.height) / Double(TestImages.width))
        return (d * d).sum().squareRoot()
    }

    func testPixellateSamplesEachCellAtItsCentre() throws {
        // Cells of 3.2 and 6.4 pixels: no pixel centre lies within 0.1 pixel of a cell boundary, so
        // float rounding cannot move a pixel to another cell and every pixel must match.
        for fraction in [0.05, 0.1] {
            let image = TestImages.pattern
            let out = try render([try filter("pixellate", fraction == 0.05 ? [:] : ["fractionalWidthOfAPixel": .float(fraction)])], image)
            assertMatches(out, tolerance: 3, "fraction \(fraction)") { x, y in
                let c = cellCentre(pixelUV(x, y), fraction).centre
                return TestImages.sample(image, c.x, c.y)
            }
        }
    }

    func testPolarPixellateSnapsRadiusAndAngle() throws {
        let settings: [(center: [Double], size: [Double])] = [([0.5, 0.5], [0.05, 0.05]), ([0.3, 0.6], [0.12, 0.4])]
        for s in settings {
            let image = TestImages.pattern
            let out = try render([try filter("polarPixellate", ["center": .vector(s.center), "pixelSize": .vector(s.size)])], image)
            // A pixel whose radius or angle is within float rounding of a ring or sector boundary
            // may land in the neighbouring cell and take a wholly different colour; such pixels are
            // rare, hence the 1% bound rather than a per-pixel match.
            assertMostlyMatches(out, tolerance: 3, maxFraction: 0.01, "polarPixellate \(s)") { x, y in
                let uv = pixelUV(x, y)
                let n = 2 * (uv - SIMD2(s.center[0], s.center[1]))
                var r = (n * n).sum().squareRoot()
                var phi = atan2(n.y, n.x)
                r = r - glslMod(r, s.size[0]) + 0.03
                phi = phi - glslMod(phi, s.size[1])
                return TestImages.sample(image, 0.5 * r * cos(phi) + s.center[0], 0.5 * r * sin(phi) + s.center[1])
            }
        }
    }

    func testPolkaDotDrawsCellColouredDots() throws {
        for (fraction, scaling) in [(0.05, 0.9), (0.125, 0.6)] {
            let image = TestImages.pattern
            let values: [String: ParameterValue] = fraction == 0.05 ? [:] : ["fractionalWidthOfAPixel": .float(fraction), "dotScaling": .float(scaling)]
            let out = try render([try filter("polkaDot", values)], image)
            // Pixels on a dot's rim flip between dot and black under float rounding: bounded count.
            assertMostlyMatches(out, tolerance: 3, maxFraction: 0.01, "polkaDot \(fraction) \(scaling)") { x, y in
                let uv = pixelUV(x, y)
                let (centre, w) = cellCentre(uv, fraction)
                let c = TestImages.sample(image, centre.x, centre.y)
                let inside: Double = widthDistance(uv, centre) <= 0.5 * w * scaling ? 1 : 0
                return RGBA(c.rgb * inside, c.w)
            }
        }
    }

    func testHalftoneDotsGrowWithDarkness() throws {
        // The default, 0.01, is under one pixel of the 64-pixel-wide pattern, so cells would be one
        // pixel each and every pixel sits at its own dot's centre (black unless exactly white): no
        // test of anything. Checked as declared, then rendered at sizes of 3.2 and 6.4 pixels.
        XCTAssertEqual(try filter("halftone").double("fractionalWidthOfAPixel"), 0.01)
        for fraction in [0.05, 0.1] {
            let image = TestImages.pattern
            let out = try render([try filter("halftone", ["fractionalWidthOfAPixel": .float(fraction)])], image)
            // Dot rims flip under float rounding: bounded count, as for polka dots.
            assertMostlyMatches(out, tolerance: 3, maxFraction: 0.01, "halftone \(fraction)") { x, y in
                let uv = pixelUV(x, y)
                let (centre, w) = cellCentre(uv, fraction)
                let dark = 1 - luminance709(TestImages.sample(image, centre.x, centre.y))
                let v: Double = widthDistance(uv, centre) <= 0.5 * w * dark ? 0 : 1
                return RGBA(v, v, v, 1)
            }
        }
    }

    // MARK: crosshatch

    func testCrosshatchAddsLineSetsAsLuminanceFalls() throws {
        for (spacing, width) in [(0.03, 0.003), (0.1, 0.02)] {
            let values: [String: ParameterValue] = spacing == 0.03 ? [:] : ["crossHatchSpacing": .float(spacing), "lineWidth": .float(width)]
            let image = TestImages.pattern
            let out = try render([try filter("crosshatch", values)], image)
            var black = 0
            // A line is a band of mod(u +- v, spacing) <= width: pixels on the band's border, and
            // white pixels whose luminance sums to 1 within float rounding, may flip; bounded count.
            assertMostlyMatches(out, tolerance: 2, maxFraction: 0.01, "crosshatch \(spacing) \(width)") { x, y in
                let uv = pixelUV(x, y)
                let l = luminance709(TestImages.color(image, x, y))
                let s = max(spacing, 1 / Double(TestImages.width))
                let line = (l < 1 && glslMod(uv.x + uv.y, s) <= width)
                    || (l < 0.75 && glslMod(uv.x - uv.y, s) <= width)
                    || (l < 0.5 && glslMod(uv.x + uv.y - s / 2, s) <= width)
                    || (l < 0.3 && glslMod(uv.x - uv.y - s / 2, s) <= width)
                if line { black += 1 }
                return line ? RGBA(0, 0, 0, 1) : RGBA(1, 1, 1, 1)
            }
            XCTAssertGreaterThan(black, 100, "the reference draws lines")
        }
    }

    func testCrosshatchFusesAsAPointFilter() throws {
        XCTAssertTrue(try filter("crosshatch").declaration.isPoint)
        XCTAssertTrue(try filter("posterize").declaration.isPoint)
        XCTAssertTrue(try filter("vignette").declaration.isPoint)
    }

    // MARK: Kuwahara

    func testKuwaharaTakesTheMeanOfTheLeastVariedQuadrant() throws {
        for radius in [3, 1, 5] {
            let image = TestImages.pattern
            let out = try render([try filter("kuwahara", radius == 3 ? [:] : ["radius": .int(radius)])], image)
            var ties = 0
            // Quadrants of equal variance (flat areas, symmetric gradients) tie, and which one float
            // rounding picks is arbitrary: any quadrant within 1e-6 of the least variance is accepted.
            assertAcceptable(out, "radius \(radius)") { x, y, got in
                var candidates: [(variance: Double, mean: SIMD3<Double>)] = []
                // Top left, top right, bottom right, bottom left (y down).
                for (sx, sy) in [(-1, -1), (1, -1), (1, 1), (-1, 1)] {
                    var m = SIMD3<Double>(), s = SIMD3<Double>()
                    for j in 0...radius {
                        for i in 0...radius {
                            let c = TestImages.pixel(image, x + sx * i, y + sy * j).rgb
                            m += c
                            s += c * c
                        }
                    }
                    let n = Double((radius + 1) * (radius + 1))
                    m /= n
                    let v = s / n - m * m
                    candidates.append((abs(v.x) + abs(v.y) + abs(v.z), m))
                }
                let least = candidates.map(\.variance).min()!
                let accepted = candidates.filter { $0.variance <= least + 1e-6 }
                let spread = accepted.flatMap { a in accepted.map { b in (0..<3).map { abs(a.mean[$0] - b.mean[$0]) }.max()! } }.max()!
                if spread * 255 > 3 { ties += 1 }
                return accepted.contains { c in
                    (0..<3).allSatisfy { abs(c.mean[$0] * 255 - got[$0] * 255) <= 3 } && abs(got.w - 1) < 1e-9
                }
            }
            // The test must still decide most pixels: ties between visibly different means come
            // from the gradient band (half the picture), where neighbouring quadrants hold the same
            // steps; the bars and checkerboard decide.
            XCTAssertLessThan(ties, TestImages.width * TestImages.height / 2, "radius \(radius): too many ties to be a test")
        }
    }

    // MARK: vignette

    func testVignetteFadesToColourBetweenStartAndEnd() throws {
        func smoothstep(_ a: Double, _ b: Double, _ x: Double) -> Double {
            let t = min(max((x - a) / (b - a), 0), 1)
            return t * t * (3 - 2 * t)
        }
        try assertPointFilter([try filter("vignette")], "defaults") { c, uv in
            let d = ((uv.x - 0.5) * (uv.x - 0.5) + (uv.y - 0.5) * (uv.y - 0.5)).squareRoot()
            let t = smoothstep(0.3, 0.75, d)
            return RGBA(c.rgb * (1 - t), c.w)
        }
        let colour = SIMD3(1.0, 0.5, 0.25)
        let f = try filter("vignette", ["center": .vector([0.3, 0.6]), "color": .vector([1, 0.5, 0.25, 0.8]),
                                        "start": .float(0.1), "end": .float(0.5)])
        try assertPointFilter([f], "centre, colour with alpha, start and end") { c, uv in
            let d = ((uv.x - 0.3) * (uv.x - 0.3) + (uv.y - 0.6) * (uv.y - 0.6)).squareRoot()
            let t = smoothstep(0.1, 0.5, d) * 0.8
            return RGBA(c.rgb * (1 - t) + colour * t, c.w)
        }
    }
}

// MARK: - Helpers shared by the stylize, edge and distortion tests

/// The texture coordinate of pixel (x, y)'s centre in the test pattern, GPUImage's
/// `textureCoordinate`: (0, 0) at the top-left corner.
func pixelUV(_ x: Int, _ y: Int) -> SIMD2<Double> {
    SIMD2((Double(x) + 0.5) / Double(TestImages.width), (Double(y) + 0.5) / Double(TestImages.height))
}

/// GLSL's mod: x - y * floor(x / y) (the result takes y's sign).
func glslMod(_ x: Double, _ y: Double) -> Double { x - y * (x / y).rounded(.down) }
func glslMod(_ x: SIMD2<Double>, _ y: SIMD2<Double>) -> SIMD2<Double> { SIMD2(glslMod(x.x, y.x), glslMod(x.y, y.y)) }

extension FilterTestCase {
    /// For references with hard thresholds (cell edges, quantisation): fails when more than
    /// `maxFraction` of the pixels are further than `tolerance` code values from the reference.
    func assertMostlyMatches(_ output: RGBAImage, tolerance: Double, maxFraction: Double, _ what: String,
                             file: StaticString = #filePath, line: UInt = #line, reference: (Int, Int) -> RGBA) {
        var bad = 0
        var first = ""
        for y in 0..<output.height {
            for x in 0..<output.width {
                let expected = simd_clamp01(reference(x, y)) * 255
                let got = TestImages.color(output, x, y) * 255
                if (0..<4).contains(where: { abs(expected[$0] - got[$0]) > tolerance }) {
                    if bad == 0 { first = "(\(x), \(y)): expected \(expected), got \(got)" }
                    bad += 1
                }
            }
        }
        let allowed = Int(maxFraction * Double(output.width * output.height))
        XCTAssertLessThanOrEqual(bad, allowed, "\(what): \(bad) pixels differ, first at \(first)", file: file, line: line)
    }

    /// Fails when any pixel's colour (RGBA, 0...1) is not accepted by `accepts(x, y, colour)`.
    func assertAcceptable(_ output: RGBAImage, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                          accepts: (Int, Int, RGBA) -> Bool) {
        var bad = 0
        var first = ""
        for y in 0..<output.height {
            for x in 0..<output.width where !accepts(x, y, TestImages.color(output, x, y)) {
                if bad == 0 { first = "(\(x), \(y)): got \(TestImages.color(output, x, y) * 255)" }
                bad += 1
            }
        }
        XCTAssertEqual(bad, 0, "\(what): \(bad) pixels not accepted, first at \(first)", file: file, line: line)
    }
}
