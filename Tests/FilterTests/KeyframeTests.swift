import GPUEncodeKit
import XCTest

/// Keyframed parameters: values over the output's time, linear or smooth.
final class KeyframeTests: FilterTestCase {
    private func parse(_ filters: String) throws -> [FilterInstance] {
        try Preset.parse(json: #"{"version": 1, "name": "k", "filters": [\#(filters)]}"#, origin: "/tmp/k.json").filters
    }

    func testLinearAndSmoothInterpolation() throws {
        let linear = try parse(#"{"filter": "brightness", "brightness": {"keyframes": [[1, 0.0], [3, 0.2]]}}"#)
        let smooth = try parse(#"{"filter": "brightness", "brightness": {"keyframes": [[1, 0.0], [3, 0.2]], "easing": "smooth"}}"#)
        for (t, expectedLinear, expectedSmooth) in [(0.0, 0.0, 0.0), (1.5, 0.05, 0.2 * 0.15625), (2.0, 0.1, 0.1), (5.0, 0.2, 0.2)] {
            let renderer = try ImageRenderer(width: TestImages.width, height: TestImages.height, filters: linear)
            let out = try renderer.render(TestImages.pattern, time: t)
            assertMatches(out, "linear at \(t) s") { x, y in
                let c = TestImages.color(TestImages.pattern, x, y)
                return RGBA(c.rgb + SIMD3(repeating: expectedLinear), c.w)
            }
            let smoothOut = try ImageRenderer(width: TestImages.width, height: TestImages.height, filters: smooth).render(TestImages.pattern, time: t)
            assertMatches(smoothOut, "smooth at \(t) s") { x, y in
                let c = TestImages.color(TestImages.pattern, x, y)
                return RGBA(c.rgb + SIMD3(repeating: expectedSmooth), c.w)
            }
        }
    }

    func testColourAndVectorKeyframesInAFusedChain() throws {
        let chain = try parse(#"""
        {"filter": "sepia", "intensity": {"keyframes": [[0, 0], [2, 1]]}},
        {"filter": "normal", "with": {"filter": "solidColor", "color": {"keyframes": [[0, "#ff0000"], [2, "#0000ff"]]}}, "opacity": 0.5}
        """#)
        let out = try ImageRenderer(width: TestImages.width, height: TestImages.height, filters: chain).render(TestImages.pattern, time: 1)
        assertMatches(out) { x, y in
            let c = TestImages.color(TestImages.pattern, x, y)
            let sepia = SIMD3(0.3588 * c.x + 0.7044 * c.y + 0.1368 * c.z, 0.2990 * c.x + 0.5870 * c.y + 0.1140 * c.z, 0.2392 * c.x + 0.4696 * c.y + 0.0912 * c.z)
            // sepia's mix happens before the clamp, as in GPUImage's shader; then 8-bit rounding.
            let mixed = c.rgb * 0.5 + sepia * 0.5
            let half = SIMD3((mixed.x.clamped * 255).rounded() / 255, (mixed.y.clamped * 255).rounded() / 255, (mixed.z.clamped * 255).rounded() / 255)
            return RGBA(half * 0.5 + SIMD3(0.5, 0, 0.5) * 0.5, c.w)
        }
    }

    func testKeyframeErrors() {
        XCTAssertThrowsError(try parse(#"{"filter": "gaussianBlur", "sigma": {"keyframes": [[0, 1], [1, 4]]}}"#)) {
            XCTAssertTrue("\($0)".contains("cannot be keyframed"), "\($0)")
        }
        XCTAssertThrowsError(try parse(#"{"filter": "brightness", "brightness": {"keyframes": [[1, 0], [0.5, 0.1]]}}"#)) {
            XCTAssertTrue("\($0)".contains("times must increase"), "\($0)")
        }
        XCTAssertThrowsError(try parse(#"{"filter": "brightness", "brightness": {"keyframes": [[0, 0], [1, 5]]}}"#)) {
            XCTAssertTrue("\($0)".contains("keyframes[1][1]") && "\($0)".contains("out of range"), "\($0)")
        }
        XCTAssertThrowsError(try parse(#"{"filter": "brightness", "brightness": {"keyframes": [[0, 0]], "easing": "bounce"}}"#)) {
            XCTAssertTrue("\($0)".contains("linear or smooth"), "\($0)")
        }
    }
}

private extension Double {
    var clamped: Double { Swift.min(Swift.max(self, 0), 1) }
}
