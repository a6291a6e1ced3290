import GPUEncodeKit
import XCTest

/// `split`: the overlay on one side of a line, the base on the other, a divider on the line; and
/// `Comparison`, which builds a whole before/after chain around it.
final class SplitTests: FilterTestCase {
    private let red = RGBA(1, 0, 0, 1)
    private let blue = RGBA(0, 0, 1, 1)

    private func split(_ values: [String: ParameterValue], overlay: RGBA? = nil) throws -> FilterInstance {
        let c = overlay ?? red
        return try filter("split", values, with: try filter("solidColor", ["color": .vector([c.x, c.y, c.z, c.w])]))
    }

    /// Signed distance of pixel (x, y)'s centre from the line, in pixels, written from the
    /// definition: the line is perpendicular to (cos a, sin a) with y downwards, and `position`
    /// runs over the picture's whole extent in that direction.
    private func distance(_ x: Int, _ y: Int, position: Double, angle: Double, width: Int = TestImages.width, height: Int = TestImages.height) -> Double {
        let a = angle * .pi / 180
        let n = (cos(a), sin(a))
        let cx = Double(width) / 2, cy = Double(height) / 2
        let reach = abs(n.0) * cx + abs(n.1) * cy
        return ((Double(x) + 0.5 - cx) * n.0 + (Double(y) + 0.5 - cy) * n.1) - (2 * position - 1) * reach
    }

    /// Every pixel at least half a pixel from the line shows the overlay (d < 0) or the base.
    private func assertSides(position: Double, angle: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let out = try render([try split(["position": .float(position), "angle": .float(angle), "lineWidth": .float(0)])])
        assertMatches(out, tolerance: 0.001, what, file: file, line: line) { x, y in
            let d = distance(x, y, position: position, angle: angle)
            // On the line itself rounding may go either way; the pixel must be one of the two.
            if abs(d) < 0.01 { return TestImages.color(out, x, y) }
            return d < 0 ? red : TestImages.color(TestImages.pattern, x, y)
        }
    }

    func testVerticalLineOverlayOnTheLeft() throws {
        try assertSides(position: 0.5, angle: 0, "vertical at 0.5")
        try assertSides(position: 0.25, angle: 0, "vertical at 0.25")
        // Spot checks of the convention itself, independent of the reference above.
        let out = try render([try split(["lineWidth": .float(0)])])
        XCTAssertEqual(TestImages.color(out, 31, 20), red)
        XCTAssertEqual(TestImages.color(out, 32, 20), TestImages.color(TestImages.pattern, 32, 20))
    }

    func testHorizontalDiagonalAndReversedAngles() throws {
        try assertSides(position: 0.25, angle: 90, "horizontal: overlay on top")
        try assertSides(position: 0.5, angle: 45, "diagonal: overlay top-left")
        try assertSides(position: 0.7, angle: 135, "diagonal: overlay top-right")
        try assertSides(position: 0.5, angle: 180, "vertical reversed: overlay on the right")
        try assertSides(position: 0.4, angle: -90, "horizontal reversed: overlay below")
        let top = try render([try split(["angle": .float(90), "position": .float(0.25), "lineWidth": .float(0)])])
        XCTAssertEqual(TestImages.color(top, 40, 11), red)
        XCTAssertEqual(TestImages.color(top, 40, 12), TestImages.color(TestImages.pattern, 40, 12))
        let diagonal = try render([try split(["angle": .float(45), "lineWidth": .float(0)])])
        XCTAssertEqual(TestImages.color(diagonal, 2, 2), red)
        XCTAssertEqual(TestImages.color(diagonal, 61, 45), TestImages.color(TestImages.pattern, 61, 45))
    }

    func testEndsShowOneSideWithoutADivider() throws {
        for (position, overlay) in [(0.0, false), (1.0, true)] {
            for angle in [0.0, 30, 90, 200] {
                let out = try render([try split(["position": .float(position), "angle": .float(angle), "lineWidth": .float(6), "lineColor": .vector([0, 0, 1, 1])])])
                assertMatches(out, tolerance: 0.001, "position \(position) at \(angle) degrees") { x, y in
                    overlay ? self.red : TestImages.color(TestImages.pattern, x, y)
                }
            }
        }
    }

    func testDividerCoversItsWidthOnTheLine() throws {
        let out = try render([try split(["lineWidth": .float(4), "lineColor": .vector([0, 0, 1, 1])], overlay: RGBA(0, 1, 0, 1))])
        // The line is at x = 32; a 4-pixel divider covers the pixels whose centres are within 2 of it.
        assertMatches(out, tolerance: 0.001, "vertical divider") { x, y in
            if (30...33).contains(x) { return self.blue }
            return x < 32 ? RGBA(0, 1, 0, 1) : TestImages.color(TestImages.pattern, x, y)
        }
        // At an angle the divider is a band of the same width, anti-aliased at its edges.
        let diagonal = try render([try split(["angle": .float(60), "position": .float(0.4), "lineWidth": .float(3), "lineColor": .vector([0, 0, 1, 1])],
                                             overlay: RGBA(0, 1, 0, 1))])
        assertMatches(diagonal, tolerance: 2, "diagonal divider") { x, y in
            let d = self.distance(x, y, position: 0.4, angle: 60)
            let side = d < 0 ? RGBA(0, 1, 0, 1) : TestImages.color(TestImages.pattern, x, y)
            let cover = min(max(1.5 - abs(d) + 0.5, 0), 1)
            if abs(d) < 0.01 { return TestImages.color(diagonal, x, y) }
            return side * (1 - cover) + self.blue * cover
        }
    }

    func testPositionKeyframesSweepTheLine() throws {
        let sweep = try FilterInstance(FilterRegistry.named("split")!, values: [
            "position": .animated(Keyframes(times: [0, 2], values: [.float(1), .float(0)], easing: .linear)), "lineWidth": .float(0),
        ], overlay: try filter("solidColor", ["color": .vector([1, 0, 0, 1])])).prepared()
        for (t, position) in [(0.0, 1.0), (0.5, 0.75), (1.0, 0.5), (2.0, 0.0)] {
            let out = try render([sweep], time: t)
            assertMatches(out, tolerance: 0.001, "at \(t) s") { x, y in
                let d = self.distance(x, y, position: position, angle: 0)
                return d < 0 ? self.red : TestImages.color(TestImages.pattern, x, y)
            }
        }
    }

    func testSplitAgainstTheSourceInAPreset() throws {
        let preset = try Preset.parse(json: """
        {"version": 1, "name": "s", "filters": [{"filter": "colorInvert"},
          {"filter": "split", "with": {"node": "source"}, "angle": 90, "lineWidth": 0}]}
        """, origin: "/tmp/s.json")
        let out = try render(preset.filters)
        assertMatches(out, tolerance: 0.001, "source on top, inverted below") { x, y in
            let c = TestImages.color(TestImages.pattern, x, y)
            return y < 24 ? c : RGBA(1 - c.x, 1 - c.y, 1 - c.z, c.w)
        }
    }

    func testComparisonShowsTheOriginalBesideThePreset() throws {
        let inverted = try Preset.parse(json: #"{"version": 1, "name": "inverted", "filters": [{"filter": "colorInvert"}]}"#, origin: "/tmp/inverted.json")
        let mono = try Preset.parse(json: #"{"version": 1, "name": "mono", "filters": [{"filter": "grayscale"}, {"filter": "brightness", "brightness": 0.1}]}"#,
                                    origin: "/tmp/mono.json")
        let image = RGBAImage(width: 160, height: 120) { x, y in (UInt8(x * 255 / 159), UInt8(y * 2), UInt8((x + y) % 256), 255) }
        // Below the labels (at most 22 px high at this size), away from the 2-pixel divider at x = 80.
        func check(_ preset: Preset, left: (RGBA) -> RGBA, right: (RGBA) -> RGBA, _ what: String) throws {
            let out = try render(preset.filters, image)
            var worst = 0.0
            for y in 30..<120 {
                for x in 0..<160 where x < 78 || x > 81 {
                    let c = TestImages.color(image, x, y)
                    let expected = x < 80 ? left(c) : right(c)
                    let got = TestImages.color(out, x, y)
                    for k in 0..<3 { worst = max(worst, abs(expected[k] - got[k]) * 255) }
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, what)
        }
        let invert = { (c: RGBA) in RGBA(1 - c.x, 1 - c.y, 1 - c.z, 1) }
        try check(try Comparison.make(a: inverted, b: nil), left: { $0 }, right: invert, "original | preset")
        let grey = { (c: RGBA) -> RGBA in
            let l = ((0.2125 * c.x + 0.7154 * c.y + 0.0721 * c.z) * 255).rounded() / 255
            return RGBA(min(l + 0.1, 1), min(l + 0.1, 1), min(l + 0.1, 1), 1)
        }
        try check(try Comparison.make(a: inverted, b: mono), left: grey, right: invert, "preset B | preset A")
        // Presets that use ids and the source keep working inside a comparison.
        let nodes = try Preset.parse(json: """
        {"version": 1, "name": "nodes", "filters": [{"filter": "colorInvert", "id": "inv"},
          {"filter": "normal", "with": {"node": "source"}, "opacity": 1}]}
        """, origin: "/tmp/nodes.json")
        try check(try Comparison.make(a: nodes, b: inverted), left: invert, right: { $0 }, "presets with nodes on both sides")
    }

    func testComparisonLabelsSitInTheirSidesCorners() {
        XCTAssertTrue(Comparison.labelCorners(angle: 0) == ("topLeft", "topRight"))
        XCTAssertTrue(Comparison.labelCorners(angle: 90) == ("topLeft", "bottomLeft"))
        XCTAssertTrue(Comparison.labelCorners(angle: 45) == ("topLeft", "bottomRight"))
        XCTAssertTrue(Comparison.labelCorners(angle: 180) == ("topRight", "topLeft"))
        XCTAssertTrue(Comparison.labelCorners(angle: -90) == ("bottomLeft", "topLeft"))
    }
}
