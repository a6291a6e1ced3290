import GPUEncodeKit
import XCTest

/// A picture in Double precision with clamp-to-edge reads: the CPU side of the blur references.
struct Picture {
    let width: Int
    let height: Int
    var data: [RGBA]

    init(width: Int, height: Int, _ f: (Int, Int) -> RGBA) {
        self.width = width
        self.height = height
        data = (0..<(width * height)).map { f($0 % width, $0 / width) }
    }

    init(_ image: RGBAImage) {
        self.init(width: image.width, height: image.height) { x, y in TestImages.color(image, x, y) }
    }

    subscript(_ x: Int, _ y: Int) -> RGBA { data[min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)] }

    /// GL's clamp-to-edge bilinear filtering at pixel position (px, py), pixel centres at whole numbers.
    func bilinear(_ px: Double, _ py: Double) -> RGBA {
        let x0 = Int(px.rounded(.down)), y0 = Int(py.rounded(.down))
        let tx = px - Double(x0), ty = py - Double(y0)
        let top = self[x0, y0] * (1 - tx) + self[x0 + 1, y0] * tx
        let bottom = self[x0, y0 + 1] * (1 - tx) + self[x0 + 1, y0 + 1] * tx
        return top * (1 - ty) + bottom * ty
    }

    /// As written to an 8-bit texture.
    func rounded() -> Picture { Picture(width: width, height: height) { x, y in round8(self[x, y]) } }
}

func round8(_ c: RGBA) -> RGBA { (simd_clamp01(c) * 255).rounded(.toNearestOrEven) / 255 }

/// Horizontal then vertical convolution with a symmetric kernel (`kernel[r]` the centre), clamped
/// at the edges, rounded to 8 bits between the passes as the intermediate texture is.
func separable(_ p: Picture, _ kernel: [Double]) -> Picture {
    let r = kernel.count / 2
    let h = Picture(width: p.width, height: p.height) { x, y in
        var s = RGBA()
        for i in -r...r { s += p[x + i, y] * kernel[i + r] }
        return round8(s)
    }
    return Picture(width: p.width, height: p.height) { x, y in
        var s = RGBA()
        for i in -r...r { s += h[x, y + i] * kernel[i + r] }
        return s
    }
}

/// Horizontal then vertical convolution, clamped at the edges, in float64 throughout.
/// The largest RGB difference (code values) of `out` from `exact`, everywhere and within `margin`
/// pixels of a border.
func blurError(_ out: RGBAImage, _ exact: Picture, margin: Int) -> (worst: Double, border: Double) {
    var worst = 0.0, border = 0.0
    for y in 0..<out.height {
        for x in 0..<out.width {
            let d = (TestImages.color(out, x, y) - simd_clamp01(exact[x, y])) * 255
            let e = max(Swift.abs(d.x), Swift.abs(d.y), Swift.abs(d.z))
            worst = max(worst, e)
            if min(x, y, out.width - 1 - x, out.height - 1 - y) < margin { border = max(border, e) }
        }
    }
    return (worst, border)
}

func separableExact(_ p: Picture, _ kernel: [Double]) -> Picture {
    let r = kernel.count / 2
    let h = Picture(width: p.width, height: p.height) { x, y in
        var s = RGBA()
        for i in -r...r { s += p[x + i, y] * kernel[i + r] }
        return s
    }
    return Picture(width: p.width, height: p.height) { x, y in
        var s = RGBA()
        for i in -r...r { s += h[x, y + i] * kernel[i + r] }
        return s
    }
}

/// The discrete Gaussian of gaussianBlur: radius ceil(3 sigma), normalised.
func gaussianKernel(sigma: Double) -> [Double] {
    let r = Int((3 * sigma).rounded(.up))
    let w = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
    let total = w.reduce(0, +)
    return w.map { $0 / total }
}

func smoothstep(_ e0: Double, _ e1: Double, _ x: Double) -> Double {
    if e1 <= e0 { return x < e0 ? 0 : 1 }
    let t = min(max((x - e0) / (e1 - e0), 0), 1)
    return t * t * (3 - 2 * t)
}

/// Blur and sharpen filters against CPU references written from GPUImage's definitions.
final class BlurTests: FilterTestCase {
    /// gaussianBlur's default (quality auto: sigma 4 and up computed on a picture reduced 2x or 4x)
    /// against the exact discrete Gaussian in float64 with the same edge handling (clamp to edge),
    /// everywhere, borders included, at several sigmas and sizes, odd ones too. Before the reduced
    /// passes had a margin, pixels within about 3 sigma of the top and left borders were up to 50
    /// code values off (the reduced picture was clamped at its own, coarser edge).
    func testReducedGaussianIsWithin3CodeValuesOfExactEverywhere() throws {
        for (width, height) in [(160, 96), (121, 77), (64, 48)] {
            // Hard edges that reach the borders, gradients and texture.
            let image = RGBAImage(width: width, height: height) { x, y in
                let edge: UInt8 = ((x / 13) + (y / 11)) % 2 == 0 ? 235 : 16
                let texture = 128 + 60 * sin(Double(x) / 5) * cos(Double(y) / 7)
                return (edge, UInt8(x * 255 / (width - 1)), UInt8(texture), 255)
            }
            let source = Picture(image)
            for sigma in [4.0, 5.5, 8.0, 11.0, 16.0] {
                let out = try render([try filter("gaussianBlur", ["sigma": .float(sigma)])], image)
                let exact = separableExact(source, gaussianKernel(sigma: sigma))
                let (worst, border) = blurError(out, exact, margin: 15)
                print("gaussianBlur auto \(width)x\(height) sigma \(sigma): worst \(String(format: "%.2f", worst)), within 15 px of a border \(String(format: "%.2f", border)) code values")
                assertMatches(out, tolerance: 3, "\(width)x\(height) sigma \(sigma)") { x, y in exact[x, y] }
            }
        }
    }

    let source = Picture(TestImages.pattern)

    func uv(_ x: Int, _ y: Int) -> SIMD2<Double> {
        SIMD2((Double(x) + 0.5) / Double(TestImages.width), (Double(y) + 0.5) / Double(TestImages.height))
    }

    func testBoxBlurIsTheMeanOfTheSquare() throws {
        for radius in [2, 5] {
            let out = try render([try filter("boxBlur", radius == 2 ? [:] : ["radius": .int(radius)])])
            let ref = separable(source, Array(repeating: 1 / Double(2 * radius + 1), count: 2 * radius + 1))
            assertMatches(out, tolerance: 3, "radius \(radius)") { x, y in ref[x, y] }
        }
    }

    func testFastBlurRepeatsGPUImagesNineTapKernel() throws {
        let kernel = [66.0, 220, 495, 792, 924, 792, 495, 220, 66].map { $0 / 4070 }
        for passes in [1, 3] {
            let out = try render([try filter("fastBlur", passes == 1 ? [:] : ["passes": .int(passes)])])
            // GPUImage: each pass blurs the previous 8-bit result, clamping at the edges anew.
            var gpuimage = source
            for _ in 0..<passes { gpuimage = separable(gpuimage, kernel).rounded() }
            // We convolve the kernel with itself `passes` times and run that once over the picture
            // clamped at its edges: the same blur, without the rounding between passes.
            var combined: [Double] = [1]
            for _ in 0..<passes {
                var next = [Double](repeating: 0, count: combined.count + 8)
                for (i, a) in combined.enumerated() { for (j, b) in kernel.enumerated() { next[i + j] += a * b } }
                combined = next
            }
            let once = separable(source, combined)
            assertMatches(out, tolerance: 3, "passes \(passes), kernel applied \(passes) times at once") { x, y in once[x, y] }
            // Away from the border the two agree; within 4 x passes pixels of it, GPUImage's
            // re-clamping after every pass weights the edge pixels differently (up to 9 code values
            // at a corner of the checkerboard for 3 passes): there we only compare with the above.
            // (Measured worst errors: 1.5 and 1.0 code values.)
            let margin = passes == 1 ? 0 : 4 * passes
            assertMatches(out, tolerance: 3, "passes \(passes), GPUImage's repeated passes") { x, y in
                let inside = x >= margin && y >= margin && x < TestImages.width - margin && y < TestImages.height - margin
                return inside ? gpuimage[x, y] : TestImages.color(out, x, y)
            }
        }
    }

    func testSelectiveBlurIsSharpInsideTheCircle() throws {
        let cases: [(sigma: Double, radius: Double, point: [Double], size: Double)] = [
            (5, 60.0 / 320, [0.5, 0.5], 30.0 / 320),
            (2, 0.25, [0.3, 0.4], 0.1),
        ]
        for c in cases {
            let f = try filter("selectiveBlur", ["sigma": .float(c.sigma), "excludeCircleRadius": .float(c.radius),
                                                 "excludeCirclePoint": .vector(c.point), "excludeBlurSize": .float(c.size)])
            let out = try render([f])
            let blurred = separable(source, gaussianKernel(sigma: c.sigma))
            assertMatches(out, tolerance: 3, "sigma \(c.sigma)") { x, y in
                // Distance in units of the width: the circle is round in pixels.
                let p = uv(x, y)
                let dx = p.x - c.point[0], dy = (p.y - c.point[1]) * Double(TestImages.height) / Double(TestImages.width)
                let t = smoothstep(c.radius - c.size, c.radius, (dx * dx + dy * dy).squareRoot())
                return source[x, y] * (1 - t) + blurred[x, y] * t
            }
            // The centre itself is untouched.
            let cx = Int(c.point[0] * Double(TestImages.width)), cy = Int(c.point[1] * Double(TestImages.height))
            XCTAssertEqual(TestImages.color(out, cx, cy), source[cx, cy])
        }
    }

    func testTiltShiftBlursAboveAndBelowTheBand() throws {
        let cases: [(sigma: Double, top: Double, bottom: Double, rate: Double)] = [(7, 0.4, 0.6, 0.2), (3, 0.3, 0.5, 0.1)]
        for c in cases {
            let f = try filter("tiltShift", ["sigma": .float(c.sigma), "topFocusLevel": .float(c.top),
                                             "bottomFocusLevel": .float(c.bottom), "focusFallOffRate": .float(c.rate)])
            let out = try render([f])
            let blurred = separable(source, gaussianKernel(sigma: c.sigma))
            assertMatches(out, tolerance: 3, "sigma \(c.sigma)") { x, y in
                let v = uv(x, y).y
                let t = min(1 - smoothstep(c.top - c.rate, c.top, v) + smoothstep(c.bottom, c.bottom + c.rate, v), 1)
                return source[x, y] * (1 - t) + blurred[x, y] * t
            }
        }
        // A band upside down is refused when the preset loads.
        XCTAssertNotNil(TiltShiftFilter.declaration.check?(FilterInstance(TiltShiftFilter.declaration, values: ["topFocusLevel": .float(0.7)])))
    }

    func testUnsharpMaskAddsTheDifferenceFromTheBlur() throws {
        for (sigma, intensity) in [(4.0, 1.0), (1.5, 2.5)] {
            let f = try filter("unsharpMask", ["sigma": .float(sigma), "intensity": .float(intensity)])
            let out = try render([f])
            let blurred = separable(source, gaussianKernel(sigma: sigma))
            assertMatches(out, tolerance: 3, "intensity \(intensity)") { x, y in
                let s = source[x, y]
                return RGBA(s.rgb + (s.rgb - blurred[x, y].rgb) * intensity, s.w)
            }
        }
        // Intensity 0 leaves the picture as it is.
        let none = try render([try filter("unsharpMask", ["intensity": .float(0)])])
        XCTAssertEqual(none, TestImages.pattern)
    }

    func testSharpenUsesTheFourNeighbours() throws {
        for s in [0.0, 1.0, -0.5, 4.0] {
            let out = try render([try filter("sharpen", s == 0 ? [:] : ["sharpness": .float(s)])])
            assertMatches(out, tolerance: 2, "sharpness \(s)") { x, y in
                let around = source[x - 1, y] + source[x + 1, y] + source[x, y - 1] + source[x, y + 1]
                return RGBA(source[x, y].rgb * (1 + 4 * s) - around.rgb * s, source[x, y].w)
            }
        }
    }

    func testMedianTakesEachChannelsMiddleValue() throws {
        // The pattern with salt and pepper: isolated white and black pixels the median must remove.
        let noisy = RGBAImage(width: TestImages.width, height: TestImages.height) { x, y in
            let p = TestImages.pattern[x, y]
            let h = (x * 7919 + y * 104729) % 23
            if h == 0 { return (255, 255, 255, 255) }
            if h == 1 { return (0, 0, 0, 255) }
            if h == 2 { return (p.0, 255 - p.1, p.2, 255) }
            return p
        }
        for image in [TestImages.pattern, noisy] {
            let out = try render([try filter("median")], image)
            let p = Picture(image)
            // The result is one of the 8-bit inputs, so it must be exact.
            assertMatches(out, tolerance: 0) { x, y in
                var m = RGBA(0, 0, 0, p[x, y].w)
                for c in 0..<3 {
                    var values: [Double] = []
                    for j in -1...1 { for i in -1...1 { values.append(p[x + i, y + j][c]) } }
                    m[c] = values.sorted()[4]
                }
                return m
            }
        }
    }

    func testBilateralFollowsGPUImagesWeights() throws {
        let gauss = [0.05, 0.09, 0.12, 0.15, 0.18, 0.15, 0.12, 0.09, 0.05]
        func pass(_ p: Picture, dx: Double, dy: Double, factor: Double) -> Picture {
            Picture(width: p.width, height: p.height) { x, y in
                let centre = p[x, y]
                var sum = centre * gauss[4], total = gauss[4]
                for i in 0..<9 where i != 4 {
                    let s = p.bilinear(Double(x) + dx * Double(i - 4), Double(y) + dy * Double(i - 4))
                    let d = centre - s
                    let w = gauss[i] * (1 - min((d * d).sum().squareRoot() * factor, 1))
                    sum += s * w
                    total += w
                }
                return sum / total
            }
        }
        for (factor, spacing) in [(8.0, 4.0), (2.0, 1.5)] {
            let f = try filter("bilateral", ["distanceNormalizationFactor": .float(factor), "texelSpacingMultiplier": .float(spacing)])
            let out = try render([f])
            let ref = pass(pass(source, dx: spacing, dy: 0, factor: factor).rounded(), dx: 0, dy: spacing, factor: factor)
            assertMatches(out, tolerance: 3, "factor \(factor), spacing \(spacing)") { x, y in ref[x, y] }
        }
    }
}
