import GPUEncodeKit
import XCTest

// GPUImage's distortions are coordinate mappings: each reference computes, from GPUImage's
// definition, where output pixel (x, y) reads the input, and samples the pattern there with GL's
// clamp-to-edge bilinear (TestImages.sample). The aspect ratio is the pattern's, 48 / 64, applied
// about the centre.

final class DistortionFilterTests: FilterTestCase {
    private let aspect = Double(TestImages.height) / Double(TestImages.width)

    /// uv - center with y scaled by the aspect ratio: distances in fractions of the width.
    private func offset(_ uv: SIMD2<Double>, _ center: SIMD2<Double>) -> SIMD2<Double> {
        SIMD2(uv.x - center.x, (uv.y - center.y) * aspect)
    }

    private func length(_ v: SIMD2<Double>) -> Double { (v * v).sum().squareRoot() }

    /// Renders `name` with `values` and compares each pixel with the pattern sampled at `map(uv)`.
    private func assertMapping(_ name: String, _ values: [String: ParameterValue], tolerance: Double = 3,
                               file: StaticString = #filePath, line: UInt = #line,
                               _ map: (SIMD2<Double>) -> SIMD2<Double>) throws {
        let image = TestImages.pattern
        let out = try render([try filter(name, values, file: file, line: line)], image)
        var moved = 0
        assertMatches(out, tolerance: tolerance, "\(name) \(values)", file: file, line: line) { x, y in
            let uv = pixelUV(x, y)
            let at = map(uv)
            if length(at - uv) * Double(TestImages.width) > 0.5 { moved += 1 }
            return TestImages.sample(image, at.x, at.y)
        }
        XCTAssertGreaterThan(moved, 100, "\(name) \(values): the reference should move pixels", file: file, line: line)
    }

    func testSwirlRotatesByTheSquaredFalloff() throws {
        for (center, radius, angle) in [([0.5, 0.5], 0.5, 1.0), ([0.4, 0.6], 0.3, -2.0)] {
            let values: [String: ParameterValue] = radius == 0.5 ? [:] : ["center": .vector(center), "radius": .float(radius), "angle": .float(angle)]
            try assertMapping("swirl", values) { uv in
                // GPUImage's swirl measures distance and rotates in texture coordinates.
                let c = SIMD2(center[0], center[1])
                let d = uv - c
                let dist = length(d)
                guard dist < radius else { return uv }
                let p = (radius - dist) / radius
                let theta = p * p * angle * 8
                return c + SIMD2(cos(theta) * d.x - sin(theta) * d.y, sin(theta) * d.x + cos(theta) * d.y)
            }
        }
    }

    func testBulgeScalesTowardsTheCentre() throws {
        for (center, radius, scale) in [([0.5, 0.5], 0.25, 0.5), ([0.3, 0.4], 0.4, -0.7)] {
            let values: [String: ParameterValue] = radius == 0.25 ? [:] : ["center": .vector(center), "radius": .float(radius), "scale": .float(scale)]
            try assertMapping("bulge", values) { uv in
                let c = SIMD2(center[0], center[1])
                let dist = length(offset(uv, c))
                guard dist < radius else { return uv }
                let p = 1 - (radius - dist) / radius * scale
                return (uv - c) * (p * p) + c
            }
        }
    }

    func testPinchScalesByDistanceFromHalf() throws {
        for (center, radius, scale) in [([0.5, 0.5], 1.0, 0.5), ([0.6, 0.45], 0.35, -1.0)] {
            let values: [String: ParameterValue] = radius == 1 ? [:] : ["center": .vector(center), "radius": .float(radius), "scale": .float(scale)]
            try assertMapping("pinch", values) { uv in
                let c = SIMD2(center[0], center[1])
                let dist = length(offset(uv, c))
                guard dist < radius else { return uv }
                return (uv - c) * (1 + (0.5 - dist) / 0.5 * scale) + c
            }
        }
    }

    func testStretchSmoothstepsEachAxis() throws {
        func smoothstep(_ a: Double, _ b: Double, _ x: Double) -> Double {
            let t = min(max((x - a) / (b - a), 0), 1)
            return t * t * (3 - 2 * t)
        }
        for center in [[0.5, 0.5], [0.3, 0.7]] {
            try assertMapping("stretch", center == [0.5, 0.5] ? [:] : ["center": .vector(center)]) { uv in
                // GPUImage's -1...1 coordinates about the centre, each axis on its own.
                let c = SIMD2(center[0], center[1])
                let n = 2 * (uv - c)
                func axis(_ v: Double) -> Double {
                    let a = abs(v)
                    return (v < 0 ? -1 : 1) * (0.5 * a + 0.5 * smoothstep(0.25, 0.5, a) * a)
                }
                return SIMD2(axis(n.x), axis(n.y)) / 2 + c
            }
        }
    }

    /// GLSL's refract (the GLSL ES 3.00 definition): zero on total internal reflection.
    private func refract(_ i: SIMD3<Double>, _ n: SIMD3<Double>, _ eta: Double) -> SIMD3<Double> {
        let d = (n * i).sum()
        let k = 1 - eta * eta * (1 - d * d)
        return k < 0 ? SIMD3() : eta * i - (eta * d + k.squareRoot()) * n
    }

    /// The sphere's unit normal at uv (radius as a fraction of the width), nil outside it.
    private func sphereNormal(_ uv: SIMD2<Double>, _ c: SIMD2<Double>, _ radius: Double) -> SIMD3<Double>? {
        let d = offset(uv, c)
        let t = length(d) / radius
        guard t <= 1 else { return nil }
        let v = SIMD3(d.x, d.y, radius * (1 - t * t).squareRoot())
        return v / (v * v).sum().squareRoot()
    }

    func testSphereRefractionLooksThroughABall() throws {
        for (center, radius, index) in [([0.5, 0.5], 0.25, 0.71), ([0.4, 0.55], 0.35, 0.5), ([0.5, 0.5], 0.4, 1.3)] {
            let image = TestImages.pattern
            let values: [String: ParameterValue] = radius == 0.25 ? [:] : ["center": .vector(center), "radius": .float(radius), "refractiveIndex": .float(index)]
            let out = try render([try filter("sphereRefraction", values)], image)
            // Index 1.3 reflects totally towards the rim (refract gives zero: the picture's centre).
            assertMatches(out, tolerance: 3, "sphereRefraction \(values)") { x, y in
                guard let n = sphereNormal(pixelUV(x, y), SIMD2(center[0], center[1]), radius) else { return RGBA() }
                let r = refract(SIMD3(0, 0, -1), n, index)
                return TestImages.sample(image, (r.x + 1) / 2, (r.y + 1) / 2)
            }
        }
    }

    func testGlassSphereAddsRimFrostingAndHighlight() throws {
        for (center, radius, index) in [([0.5, 0.5], 0.25, 0.71), ([0.45, 0.5], 0.4, 0.9)] {
            let image = TestImages.pattern
            let values: [String: ParameterValue] = radius == 0.25 ? [:] : ["center": .vector(center), "radius": .float(radius), "refractiveIndex": .float(index)]
            let out = try render([try filter("glassSphere", values)], image)
            let light = SIMD3(-0.5, 0.5, 1.0) / 1.5.squareRoot()
            assertMatches(out, tolerance: 3, "glassSphere \(values)") { x, y in
                guard let n = sphereNormal(pixelUV(x, y), SIMD2(center[0], center[1]), radius) else { return RGBA() }
                let r = 2 * refract(SIMD3(0, 0, -1), n, index)
                var c = TestImages.sample(image, (1 - r.x) / 2, (1 - r.y) / 2).rgb
                c += 2.5 * (1 - pow(min(max(n.z, 0), 1), 0.25))
                c += 0.8 * pow(min(max((light * n).sum(), 0), 1), 15)
                return RGBA(c, 1)
            }
        }
    }

    func testDistortionsAreSamplingFilters() throws {
        for name in ["swirl", "bulge", "pinch", "stretch", "sphereRefraction", "glassSphere"] {
            XCTAssertFalse(try filter(name).declaration.isPoint, name)
        }
    }
}
