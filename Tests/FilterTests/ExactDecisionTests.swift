import GPUEncodeKit
import XCTest

/// The threshold-deciding filters decide every pixel as a float64 reference of the decision does,
/// with no pixel allowed to flip: crafted pictures put colours exactly at each threshold and one unit
/// either side (luminance in units of 1/2550000, the Rec. 709 weights to four places over 8-bit codes,
/// which double precision holds exactly, as it holds the squares compared). A threshold parameter is
/// the float it reaches the GPU as, times 2550000 in float (one IEEE multiplication, the same on every
/// GPU). Before, toon differed between NVIDIA and llvmpipe in 0.9% of the pixels, and on llvmpipe
/// alone these pictures' ties fell on either side.
final class ExactDecisionTests: FilterTestCase {
    private typealias Pixel = (UInt8, UInt8, UInt8, UInt8)

    private static func units(_ p: Pixel) -> Int { 2125 * Int(p.0) + 7154 * Int(p.1) + 721 * Int(p.2) }
    private static func units(_ t: Double) -> Double { Double(Float(t) * Float(2_550_000)) }

    /// Colours whose luminance is exactly `l` units, every channel at least `floor` (up to `count`).
    private static func colours(luminance l: Int, floor: Int = 0, count: Int = 4) -> [Pixel] {
        var found: [Pixel] = []
        for g in (floor...255).reversed() {
            for b in floor...255 {
                let rest = l - 7154 * g - 721 * b
                guard rest >= 2125 * floor, rest % 2125 == 0, rest / 2125 <= 255 else { continue }
                found.append((UInt8(rest / 2125), UInt8(g), UInt8(b), 255))
                if found.count == count { return found }
            }
        }
        return found
    }

    /// A deterministic pseudo-random picture with `special` colours laid over it, each in a run of
    /// `run` pixels.
    private static func picture(_ special: [Pixel], run: Int = 1, width: Int = 64, height: Int = 48, floor: UInt8 = 0) -> RGBAImage {
        var state: UInt32 = 12345
        func next() -> UInt8 {
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        var pixels: [Pixel] = (0..<(width * height)).map { _ in (max(next(), floor), max(next(), floor), max(next(), floor), 255) }
        for (i, c) in special.enumerated() {
            for k in 0..<run where i * run + k < pixels.count { pixels[i * run + k] = c }
        }
        return RGBAImage(width: width, height: height) { x, y in pixels[y * width + x] }
    }

    private func assertDecisions(_ out: RGBAImage, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                                 decided: (Int, Int, Pixel) -> Bool?) {
        var wrong: [String] = []
        for y in 0..<out.height {
            for x in 0..<out.width {
                if decided(x, y, out[x, y]) == false { wrong.append("(\(x), \(y)) \(out[x, y])") }
            }
        }
        XCTAssertTrue(wrong.isEmpty, "\(what): \(wrong.count) pixels decided otherwise, first \(wrong.prefix(5))", file: file, line: line)
    }

    func testLuminanceThresholdAtItsThreshold() throws {
        for t in [0.5, 0.3, 0.85, 0.2, 0.7154] {
            let u = Self.units(t)
            let special = [-2, -1, 0, 1, 2].flatMap { Self.colours(luminance: Int(u.rounded(.down)) + $0) }
            XCTAssertGreaterThan(special.count, 10)
            let image = Self.picture(special)
            let f = try filter("luminanceThreshold", ["threshold": .float(t)])
            let out = try render([f], image)
            assertDecisions(out, "luminanceThreshold \(t)") { x, y, p in
                let white = Double(Self.units(image[x, y])) >= u
                return p.0 == (white ? 255 : 0) && p.1 == p.0 && p.2 == p.0
            }
        }
    }

    /// Vertical steps whose luminance rises by exactly a quarter of the threshold (a Sobel magnitude
    /// on it), and one unit less or more, in bands three rows high.
    private static func steps(threshold t: Double) -> RGBAImage {
        let u = Int(units(t))
        let width = 64, height = 48
        var bands: [(Pixel, Pixel)] = []
        for (k, delta) in [u / 4, u / 4 - 1, u / 4 + 1, u / 4].enumerated() {
            let low = 600_000 + 37_000 * k
            for (a, b) in zip(colours(luminance: low, floor: 30, count: 3), colours(luminance: low + delta, floor: 30, count: 3)) { bands.append((a, b)) }
        }
        let noise = picture([], floor: 30)
        return RGBAImage(width: width, height: height) { x, y in
            let band = y / 3
            guard band < bands.count else { return noise[x, y] }
            return x < 32 ? bands[band].0 : bands[band].1
        }
    }

    /// The Sobel of the luminance units at (x, y), edges clamped.
    private static func sobel(_ image: RGBAImage, _ x: Int, _ y: Int) -> (Int, Int) {
        func l(_ dx: Int, _ dy: Int) -> Int { units(image[min(max(x + dx, 0), image.width - 1), min(max(y + dy, 0), image.height - 1)]) }
        let gx = -l(-1, -1) - 2 * l(-1, 0) - l(-1, 1) + l(1, -1) + 2 * l(1, 0) + l(1, 1)
        let gy = -l(-1, -1) - 2 * l(0, -1) - l(1, -1) + l(-1, 1) + 2 * l(0, 1) + l(1, 1)
        return (gx, gy)
    }

    /// Toon's pixel: black where the Sobel magnitude reaches the threshold (exactly: squares in
    /// double precision), else the posterized colour (within a code value: its rounding is a colour).
    private func assertToon(_ out: RGBAImage, of image: RGBAImage, threshold: Double, levels: Double, _ what: String) {
        let u = Self.units(threshold)
        var outlines = 0
        assertDecisions(out, what) { x, y, p in
            let (gx, gy) = Self.sobel(image, x, y)
            let outline = Double(gx) * Double(gx) + Double(gy) * Double(gy) >= u * u
            if outline { outlines += 1; return p.0 == 0 && p.1 == 0 && p.2 == 0 }
            let c = image[x, y]
            return zip([c.0, c.1, c.2], [p.0, p.1, p.2]).allSatisfy { c, got in
                abs((Double(c) / 255 * levels + 0.5).rounded(.down) / levels * 255 - Double(got)) <= 1
            }
        }
        XCTAssertGreaterThan(outlines, 20, "\(what): the picture has outlines")
    }

    func testToonOutlinesExactlyAtItsThreshold() throws {
        for (threshold, levels) in [(0.2, 10.0), (0.1, 6.0), (0.35, 4.0)] {
            let image = Self.steps(threshold: threshold)
            let f = try filter("toon", ["threshold": .float(threshold), "quantizationLevels": .float(levels)])
            assertToon(try render([f], image), of: image, threshold: threshold, levels: levels, "toon \(threshold)")
        }
    }

    /// smoothToon's Gaussian as documented: weights exp(-i² / 2σ²) normalised, the outer ones rounded
    /// to 1/65536 and the centre taking the rest; taps read one by one, clamped; each pass rounded
    /// half up to 8-bit codes.
    private static func integerGaussian(_ image: RGBAImage, sigma: Double) -> RGBAImage {
        guard sigma >= 1 else { return image }
        var radius = Int((-2 * sigma * sigma * log(1.0 / 256 * (2 * Double.pi * sigma * sigma).squareRoot())).squareRoot().rounded(.down))
        radius += radius % 2
        let w = (0...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        var q = w.map { Int(($0 / total * 65536).rounded()) }
        q[0] = 65536 - 2 * q[1...].reduce(0, +)
        func pass(_ from: RGBAImage, dx: Int, dy: Int) -> RGBAImage {
            RGBAImage(width: from.width, height: from.height) { x, y in
                var s = [0, 0, 0, 0]
                for i in -radius...radius {
                    let p = from[min(max(x + i * dx, 0), from.width - 1), min(max(y + i * dy, 0), from.height - 1)]
                    for (c, v) in [p.0, p.1, p.2, p.3].enumerated() { s[c] += q[abs(i)] * Int(v) }
                }
                let r = s.map { UInt8(($0 + 32768) >> 16) }
                return (r[0], r[1], r[2], r[3])
            }
        }
        return pass(pass(image, dx: 1, dy: 0), dx: 0, dy: 1)
    }

    func testSmoothToonBlursAndOutlinesExactly() throws {
        for (sigma, threshold, levels) in [(2.0, 0.2, 10.0), (3.0, 0.05, 6.0), (1.5, 0.1, 8.0)] {
            let image = Self.steps(threshold: threshold)
            let f = try filter("smoothToon", ["blurRadiusInPixels": .float(sigma), "threshold": .float(threshold), "quantizationLevels": .float(levels)])
            let out = try render([f], image)
            let blurred = Self.integerGaussian(image, sigma: sigma)
            assertToon(out, of: blurred, threshold: threshold, levels: levels, "smoothToon \(sigma) \(threshold)")
        }
    }

    func testAdaptiveThresholdDecidesExactly() throws {
        // Flat runs (each pixel's own luminance against its blurred neighbourhood ties often) over noise.
        let special = (0..<40).flatMap { k in Self.colours(luminance: 200_000 + 51_000 * k, count: 1) }
        for (image, name) in [(Self.picture(special, run: 24), "runs"), (TestImages.pattern, "pattern")] {
            for radius in [4.0, 2.0, 7.0] {
                let r = AdaptiveThresholdFilter.radius(radius)
                let out = try render([try filter("adaptiveThreshold", ["blurRadiusInPixels": .float(radius)])], image)
                // Luminance units summed over 2r + 1 taps across, averaged to a code rounded half up; the
                // codes summed down and averaged likewise; white where units >= 10000 code - 127500.
                let (w, h, n) = (image.width, image.height, 2 * r + 1)
                let across = (0..<(w * h)).map { i -> Int in
                    let (x, y) = (i % w, i / w)
                    let s = (-r...r).reduce(0) { $0 + Self.units(image[min(max(x + $1, 0), w - 1), y]) }
                    return (2 * s + 10000 * n) / (20000 * n)
                }
                assertDecisions(out, "adaptiveThreshold \(radius) on \(name)") { x, y, p in
                    let s = (-r...r).reduce(0) { $0 + across[min(max(y + $1, 0), h - 1) * w + x] }
                    let background = (2 * s + n) / (2 * n)
                    let white = Self.units(image[x, y]) >= 10000 * background - 127_500
                    return p.0 == (white ? 255 : 0)
                }
            }
        }
    }

    func testCrosshatchDecidesExactly() throws {
        // Luminance at each of the four thresholds (1, 0.75, 0.5, 0.3) and a unit either side, in runs.
        let special = [2_550_000, 1_912_500, 1_275_000, 765_000].flatMap { l in [-1, 0, 1].flatMap { Self.colours(luminance: l + $0, count: 2) } }
        let image = Self.picture(special, run: 5)
        // GPUImage's spacing and width, and ones whose line edges fall exactly on pixel centres (1/32 and
        // 1/384 of the 64x48 picture's uv.x + uv.y: ties along every line).
        for (spacing, width) in [(0.03, 0.003), (0.03125, 1.0 / 384), (0.03125, 0.00390625), (0.1, 0.02)] {
            let out = try render([try filter("crosshatch", ["crossHatchSpacing": .float(spacing), "lineWidth": .float(width)])], image)
            let (w, h) = (image.width, image.height)
            var k = 1
            for _ in 0..<27 where 4 * w * h * k <= 134_217_728 { k *= 2 }
            let grid = Float(2 * w * h * k)
            let s = Int((max(Float(spacing), 1 / Float(w)) * grid).rounded(.toNearestOrEven))
            let lw = Int((Float(width) * grid).rounded(.down))
            func onLine(_ v: Int, _ m: Int, _ limit: Int) -> Bool { ((v % m) + m) % m <= limit }
            var lines = 0
            assertDecisions(out, "crosshatch \(spacing) \(width)") { x, y, p in
                let l = Self.units(image[x, y])
                let sum = ((2 * x + 1) * h + (2 * y + 1) * w) * k, difference = ((2 * x + 1) * h - (2 * y + 1) * w) * k
                let line = (l < 2_550_000 && onLine(sum, s, lw)) || (l < 1_912_500 && onLine(difference, s, lw))
                    || (l < 1_275_000 && onLine(2 * sum - s, 2 * s, 2 * lw)) || (l < 765_000 && onLine(2 * difference - s, 2 * s, 2 * lw))
                if line { lines += 1 }
                return p.0 == (line ? 0 : 255)
            }
            XCTAssertGreaterThan(lines, 50, "crosshatch \(spacing) \(width): the reference draws lines")
        }
    }

    /// halftone's and polkaDot's cells in integers: positions in 1/u pixel (u the largest power of two
    /// with W u <= 65536), the side 2 round(cell pixels u / 2) units. (cell centre, offset of (x, y)).
    private static func cell(_ x: Int, _ y: Int, width: Int, fraction: Double) -> (u: Int, side: Int, centre: (Int, Int), d: (Int, Int)) {
        var u = 4
        for _ in 0..<14 where 2 * u * width <= 65536 { u *= 2 }
        let pixels = max(Float(fraction), 1 / Float(width)) * Float(width)
        let side = 2 * max(1, Int((pixels * Float(u / 2)).rounded(.toNearestOrEven)))
        let at = (x * u + u / 2, y * u + u / 2)
        let centre = ((at.0 / side) * side + side / 2, (at.1 / side) * side + side / 2)
        return (u, side, centre, (at.0 - centre.0, at.1 - centre.1))
    }

    private static func within(_ d: (Int, Int), side: Int, scale: Int) -> Bool {
        let r = Double(side / 2 * scale)
        return 255 * 255 * (Double(d.0 * d.0) + Double(d.1 * d.1)) <= r * r
    }

    func testHalftoneDecidesExactly() throws {
        let special = (0..<12).flatMap { k in Self.colours(luminance: 10000 * (20 * k + 5) + 5000, count: 1) }
        let image = Self.picture(special, run: 64)
        for fraction in [0.05, 0.125, 0.1, 0.01] {
            let out = try render([try filter("halftone", ["fractionalWidthOfAPixel": .float(fraction)])], image)
            var dots = 0
            assertDecisions(out, "halftone \(fraction)") { x, y, p in
                let c = Self.cell(x, y, width: image.width, fraction: fraction)
                // The centre's luminance: its four pixels weighted in 1/256, rounded half up at each step.
                func l(_ px: Int, _ py: Int) -> Int { Self.units(image[min(max(px, 0), image.width - 1), min(max(py, 0), image.height - 1)]) }
                let base = (c.centre.0 - c.u / 2, c.centre.1 - c.u / 2)
                let i = (base.0 / c.u, base.1 / c.u)
                let f = ((base.0 - i.0 * c.u) * 256 / c.u, (base.1 - i.1 * c.u) * 256 / c.u)
                let top = ((256 - f.0) * l(i.0, i.1) + f.0 * l(i.0 + 1, i.1) + 128) >> 8
                let bottom = ((256 - f.0) * l(i.0, i.1 + 1) + f.0 * l(i.0 + 1, i.1 + 1) + 128) >> 8
                let luma = ((((256 - f.1) * top + f.1 * bottom + 128) >> 8) + 5000) / 10000
                let inside = Self.within(c.d, side: c.side, scale: 255 - luma)
                if inside { dots += 1 }
                return p.0 == (inside ? 0 : 255)
            }
            XCTAssertGreaterThan(dots, 50, "halftone \(fraction): the reference draws dots")
        }
    }

    func testPolkaDotDecidesExactly() throws {
        // Bright colours, so that a dot is never black.
        let image = Self.picture([], floor: 60)
        for (fraction, scaling) in [(0.05, 0.9), (0.125, 1.0), (0.1, 0.5)] {
            let out = try render([try filter("polkaDot", ["fractionalWidthOfAPixel": .float(fraction), "dotScaling": .float(scaling)])], image)
            assertDecisions(out, "polkaDot \(fraction) \(scaling)") { x, y, p in
                let c = Self.cell(x, y, width: image.width, fraction: fraction)
                let inside = Self.within(c.d, side: c.side, scale: Int((Float(scaling) * 255).rounded(.toNearestOrEven)))
                return inside == !(p.0 == 0 && p.1 == 0 && p.2 == 0)
            }
        }
    }

    /// Kuwahara's choice of quadrant: n² times each quadrant's variance, n Σk² - (Σk)² over the codes
    /// (exact), the first of the least taken; the output is that quadrant's mean (a colour: within a
    /// code value). Flat blocks of different colours meet (equal, zero variances) and blocks with
    /// equal nonzero variances (the same pattern shifted in colour).
    func testKuwaharaChoosesExactly() throws {
        let noise = Self.picture([])
        let image = RGBAImage(width: 64, height: 48) { x, y in
            let block = (x / 8) + 8 * (y / 8)
            switch block % 3 {
            case 0: return (UInt8(40 + 7 * (block % 20)), UInt8(200 - 5 * (block % 20)), 90, 255)
            case 1: let v = UInt8(((x + y) % 2) * 20 + 10 * (block % 7)); return (v, v &+ 30, 100, 255)
            default: return noise[x, y]
            }
        }
        for radius in [3, 1, 5] {
            let out = try render([try filter("kuwahara", ["radius": .int(radius)])], image)
            let n = (radius + 1) * (radius + 1)
            assertDecisions(out, "kuwahara \(radius)") { x, y, p in
                var best = -1, mean = [0, 0, 0]
                for (qx, qy) in [(-1, -1), (1, -1), (1, 1), (-1, 1)] {
                    var m = [0, 0, 0], s = [0, 0, 0]
                    for j in 0...radius {
                        for i in 0...radius {
                            let c = image[min(max(x + qx * i, 0), 63), min(max(y + qy * j, 0), 47)]
                            for (k, v) in [Int(c.0), Int(c.1), Int(c.2)].enumerated() { m[k] += v; s[k] += v * v }
                        }
                    }
                    let sigma2 = (0..<3).reduce(0) { $0 + n * s[$1] - m[$1] * m[$1] }
                    if best < 0 || sigma2 < best { best = sigma2; mean = m }
                }
                return zip(mean, [p.0, p.1, p.2]).allSatisfy { abs(Double($0) / Double(n) - Double($1)) <= 1 }
            }
        }
    }
}
