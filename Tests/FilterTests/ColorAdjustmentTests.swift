import Foundation
import GPUEncodeKit
import XCTest

/// AdjustmentFilters.swift: GPUImage's basic adjustments and Core Image's CIColorControls, each
/// against its published formula computed here in Double.
final class ColorAdjustmentTests: FilterTestCase {
    private func perChannel(_ c: RGBA, _ f: (Double) -> Double) -> RGBA { RGBA(f(c.x), f(c.y), f(c.z), c.w) }

    func testBrightnessAddsAConstant() throws {
        for b in [0.0, 0.2, -0.35] {
            try assertPointFilter([try filter("brightness", ["brightness": .float(b)])], "brightness \(b)") { c, _ in
                self.perChannel(c) { $0 + b }
            }
        }
    }

    func testContrastScalesAboutMidGrey() throws {
        for k in [1.0, 1.6, 0.4] {
            try assertPointFilter([try filter("contrast", ["contrast": .float(k)])], "contrast \(k)") { c, _ in
                self.perChannel(c) { ($0 - 0.5) * k + 0.5 }
            }
        }
    }

    func testSaturationMixesWithLuminance() throws {
        for s in [1.0, 0.0, 1.7] {
            try assertPointFilter([try filter("saturation", ["saturation": .float(s)])], "saturation \(s)") { c, _ in
                let y = luminance709(c)
                return self.perChannel(c) { y + ($0 - y) * s }
            }
        }
    }

    func testExposureIsAPowerOfTwoGain() throws {
        for e in [0.0, 0.7, -1.5] {
            try assertPointFilter([try filter("exposure", ["exposure": .float(e)])], "exposure \(e)") { c, _ in
                self.perChannel(c) { $0 * pow(2, e) }
            }
        }
    }

    func testGammaIsAPower() throws {
        for g in [1.0, 2.2, 0.45] {
            try assertPointFilter([try filter("gamma", ["gamma": .float(g)])], "gamma \(g)") { c, _ in
                self.perChannel(c) { pow($0, g) }
            }
        }
    }

    func testRGBGainsPerChannel() throws {
        try assertPointFilter([try filter("rgb")], "default") { c, _ in c }
        try assertPointFilter([try filter("rgb", ["red": .float(1.3), "green": .float(0.6), "blue": .float(2)])]) { c, _ in
            RGBA(c.x * 1.3, c.y * 0.6, c.z * 2, c.w)
        }
    }

    /// Photoshop's levels: input range [min, max] stretched to [0, 1] and clipped, mid-tones raised
    /// to 1/gamma, then mapped linearly onto [minOut, maxOut].
    private func levels(_ v: Double, _ lo: Double, _ g: Double, _ hi: Double, _ outLo: Double, _ outHi: Double) -> Double {
        let t = min(max((v - lo) / (hi - lo), 0), 1)
        return outLo + (outHi - outLo) * pow(t, 1 / g)
    }

    func testLevelsPerChannel() throws {
        try assertPointFilter([try filter("levels")], "default") { c, _ in c }
        let lo = [0.1, 0.05, 0.2], g = [1.5, 0.7, 1.0], hi = [0.9, 0.8, 1.0], outLo = [0.05, 0, 0.1], outHi = [0.95, 1, 0.8]
        let f = try filter("levels", ["min": .vector(lo), "gamma": .vector(g), "max": .vector(hi),
                                      "minOut": .vector(outLo), "maxOut": .vector(outHi)])
        try assertPointFilter([f]) { c, _ in
            RGBA(self.levels(c.x, lo[0], g[0], hi[0], outLo[0], outHi[0]),
                 self.levels(c.y, lo[1], g[1], hi[1], outLo[1], outHi[1]),
                 self.levels(c.z, lo[2], g[2], hi[2], outLo[2], outHi[2]), c.w)
        }
    }

    func testLevelsChecksMinBelowMax() throws {
        let d = try XCTUnwrap(FilterRegistry.named("levels"))
        XCTAssertNil(d.check?(FilterInstance(d)))
        let bad = FilterInstance(d, values: ["min": .vector([0.2, 0.6, 0]), "max": .vector([1, 0.5, 1])])
        let message = try XCTUnwrap(d.check?(bad))
        XCTAssertTrue(message.contains("green"), message)
        XCTAssertThrowsError(try Preset.parse(json: """
        {"version": 1, "name": "t", "filters": [{"filter": "levels", "min": [0.5, 0, 0], "max": [0.4, 1, 1]}]}
        """, origin: "t.json")) { error in XCTAssertTrue("\(error)".contains("min must be below max"), "\(error)") }
    }

    /// GPUImageHighlightShadowFilter: luminance l = 0.3 (R + G + B) + 0.001; shadows lift it by
    /// l^(1/(s+1)) - 0.76 l^(2/(s+1)) - l (kept >= 0), highlights lower it by
    /// 1 - ((1-l)^(1/(2-h)) - 0.8 (1-l)^(2/(2-h))) - l (kept <= 0); the colour is scaled by new l / l.
    func testHighlightShadowCurve() throws {
        try assertPointFilter([try filter("highlightShadow")], "default is the identity") { c, _ in c }
        for (s, h) in [(0.7, 0.3), (1.0, 1.0), (0.0, 0.0)] {
            try assertPointFilter([try filter("highlightShadow", ["shadows": .float(s), "highlights": .float(h)])],
                                  "shadows \(s) highlights \(h)") { c, _ in
                let l = 0.3 * (c.x + c.y + c.z) + 0.001
                let lift = min(max(pow(l, 1 / (s + 1)) - 0.76 * pow(l, 2 / (s + 1)) - l, 0), 1)
                let cut = min(max(1 - (pow(1 - l, 1 / (2 - h)) - 0.8 * pow(1 - l, 2 / (2 - h))) - l, -1), 0)
                return self.perChannel(c) { $0 * (l + lift + cut) / l }
            }
        }
    }

    func testOpacityScalesAlpha() throws {
        try assertPointFilter([try filter("opacity", ["opacity": .float(0.4)])]) { c, _ in RGBA(c.rgb, c.w * 0.4) }
        try assertPointFilter([try filter("opacity")], "default") { c, _ in c }
    }

    /// CIColorControls (Apple, Core Image Filter Reference): saturation lerps from grey, contrast is
    /// (c - 0.5) * contrast + 0.5, brightness is c + brightness; in that order, grey = Rec. 709 luminance.
    func testColorControlsSaturationContrastBrightness() throws {
        try assertPointFilter([try filter("colorControls")], "default") { c, _ in c }
        for (s, b, k) in [(1.4, 0.1, 1.3), (0.3, -0.2, 0.6)] {
            let f = try filter("colorControls", ["saturation": .float(s), "brightness": .float(b), "contrast": .float(k)])
            try assertPointFilter([f], "saturation \(s) brightness \(b) contrast \(k)") { c, _ in
                let y = luminance709(c)
                return self.perChannel(c) { ((y + ($0 - y) * s) - 0.5) * k + 0.5 + b }
            }
        }
    }
}
