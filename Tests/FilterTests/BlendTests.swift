import GPUEncodeKit
import XCTest

/// ISO 32000-1 (PDF 1.7) section 11.3.5, written from the specification in Double: the separable
/// B(cb, cs) per channel and the non-separable modes with the specification's Lum, ClipColor,
/// SetLum, Sat and SetSat (the last by sorting the channels, as the specification words it).
enum ISO32000 {
    static func separable(_ mode: String, _ cb: Double, _ cs: Double) -> Double {
        switch mode {
        case "normal": return cs
        case "multiply": return cb * cs
        case "screen": return cb + cs - cb * cs
        case "overlay": return hardLight(cs, cb)
        case "darken": return min(cb, cs)
        case "lighten": return max(cb, cs)
        case "colorDodge": return cs < 1 ? min(1, cb / (1 - cs)) : 1
        case "colorBurn": return cs > 0 ? 1 - min(1, (1 - cb) / cs) : 0
        case "hardLight": return hardLight(cb, cs)
        case "softLight":
            if cs <= 0.5 { return cb - (1 - 2 * cs) * cb * (1 - cb) }
            let d = cb <= 0.25 ? ((16 * cb - 12) * cb + 4) * cb : cb.squareRoot()
            return cb + (2 * cs - 1) * (d - cb)
        case "difference": return abs(cb - cs)
        case "exclusion": return cb + cs - 2 * cb * cs
        default: preconditionFailure("not a separable mode: \(mode)")
        }
    }

    static func hardLight(_ cb: Double, _ cs: Double) -> Double {
        cs <= 0.5 ? cb * (2 * cs) : separable("screen", cb, 2 * cs - 1)
    }

    static func lum(_ c: SIMD3<Double>) -> Double { 0.3 * c.x + 0.59 * c.y + 0.11 * c.z }

    static func clipColor(_ c: SIMD3<Double>) -> SIMD3<Double> {
        let l = lum(c)
        let n = c.min(), x = c.max()
        var c = c
        if n < 0 { c = SIMD3(repeating: l) + (c - SIMD3(repeating: l)) * l / (l - n) }
        if x > 1 { c = SIMD3(repeating: l) + (c - SIMD3(repeating: l)) * (1 - l) / (x - l) }
        return c
    }

    static func setLum(_ c: SIMD3<Double>, _ l: Double) -> SIMD3<Double> {
        clipColor(c + SIMD3(repeating: l - lum(c)))
    }

    static func sat(_ c: SIMD3<Double>) -> Double { c.max() - c.min() }

    static func setSat(_ c: SIMD3<Double>, _ s: Double) -> SIMD3<Double> {
        // Cmax, Cmid, Cmin: the channel indices sorted by value.
        let order = [0, 1, 2].sorted { c[$0] < c[$1] }
        let (iMin, iMid, iMax) = (order[0], order[1], order[2])
        var out = SIMD3<Double>(repeating: 0)
        if c[iMax] > c[iMin] {
            out[iMid] = (c[iMid] - c[iMin]) * s / (c[iMax] - c[iMin])
            out[iMax] = s
        }
        out[iMin] = 0
        return out
    }

    static func blend(_ mode: String, _ cb: SIMD3<Double>, _ cs: SIMD3<Double>) -> SIMD3<Double> {
        switch mode {
        case "hueBlend": return setLum(setSat(cs, sat(cb)), lum(cb))
        case "saturationBlend": return setLum(setSat(cb, sat(cs)), lum(cb))
        case "colorBlend": return setLum(cs, lum(cb))
        case "luminosityBlend": return setLum(cb, lum(cs))
        default: return SIMD3(separable(mode, cb.x, cs.x), separable(mode, cb.y, cs.y), separable(mode, cb.z, cs.z))
        }
    }

    /// Composited over an opaque backdrop (section 11.3.6 with alpha of the backdrop 1): the
    /// backdrop's share 1 - a stays, a = overlay alpha x opacity.
    static func composite(_ mode: String, base: RGBA, overlay: RGBA, opacity: Double) -> RGBA {
        let b = simd_clamp01(RGBA(blend(mode, base.rgb, overlay.rgb), 0)).rgb
        let a = overlay.w * opacity
        return RGBA(base.rgb * (1 - a) + b * a, base.w)
    }
}

/// Every blend mode against its published definition: ISO 32000-1 for the PDF modes, GPUImage's
/// shaders for add, subtract, divide, linear burn, alpha, dissolve and chroma key.
final class BlendTests: FilterTestCase {
    static let isoModes = ["normal", "multiply", "screen", "overlay", "darken", "lighten", "colorDodge", "colorBurn", "hardLight",
                           "softLight", "difference", "exclusion", "hueBlend", "saturationBlend", "colorBlend", "luminosityBlend"]

    /// Solid overlays: black, white, mid-grey, saturated and pastel colours, opaque and translucent.
    static let solidOverlays: [RGBA] = [
        RGBA(0, 0, 0, 255), RGBA(255, 255, 255, 255), RGBA(128, 128, 128, 255), RGBA(243, 106, 188, 255),
        RGBA(20, 200, 60, 255), RGBA(255, 0, 0, 153), RGBA(40, 90, 230, 64),
    ].map { $0 / 255 }

    func solid(_ c: RGBA) throws -> FilterInstance {
        try filter("solidColor", ["color": .vector([c.x, c.y, c.z, c.w])])
    }

    /// A diagonal ramp with every channel and the alpha changing, strictly inside its end points so
    /// no pixel sits on a clamp: with the pattern's own gradients it covers many (cb, cs) pairs.
    static let gradientColors = (RGBA(1, 0.2, 0, 1), RGBA(0, 0.6, 1, 0.7))
    static let gradientPoints = (SIMD2(-0.1, -0.2), SIMD2(1.1, 1.15))

    func gradient() throws -> FilterInstance {
        let (c0, c1) = BlendTests.gradientColors, (p0, p1) = BlendTests.gradientPoints
        return try filter("linearGradient", ["point0": .vector([p0.x, p0.y]), "point1": .vector([p1.x, p1.y]),
                                             "color0": .vector([c0.x, c0.y, c0.z, c0.w]), "color1": .vector([c1.x, c1.y, c1.z, c1.w])])
    }

    /// CILinearGradient's colour at uv (the generator's definition, distances in pixels).
    static func gradientColor(_ uv: SIMD2<Double>) -> RGBA {
        let size = SIMD2(Double(TestImages.width), Double(TestImages.height))
        let (c0, c1) = gradientColors, (p0, p1) = gradientPoints
        let d = (p1 - p0) * size
        let t = min(max((((uv - p0) * size) * d).sum() / (d * d).sum(), 0), 1)
        return c0 * (1 - t) + c1 * t
    }

    func testISO32000ModesWithSolidOverlays() throws {
        for mode in BlendTests.isoModes {
            for overlay in BlendTests.solidOverlays {
                try assertPointFilter([try filter(mode, with: try solid(overlay))], "\(mode) over \(overlay * 255)") { c, _ in
                    ISO32000.composite(mode, base: c, overlay: overlay, opacity: 1)
                }
            }
        }
    }

    func testISO32000ModesWithGradientOverlayAndOpacity() throws {
        for mode in BlendTests.isoModes {
            for opacity in [1.0, 0.35] {
                try assertPointFilter([try filter(mode, ["opacity": .float(opacity)], with: try gradient())], "\(mode) opacity \(opacity)") { c, uv in
                    ISO32000.composite(mode, base: c, overlay: BlendTests.gradientColor(uv), opacity: opacity)
                }
            }
        }
    }

    /// The gradient as the base under flat overlays: dark overlays over light bases and the
    /// reverse in every channel, pairs the pattern's own colours do not all reach.
    func testISO32000ModesOverAGradientBase() throws {
        for mode in BlendTests.isoModes {
            for overlay in [RGBA(30, 60, 90, 255), RGBA(230, 200, 40, 255), RGBA(250, 20, 140, 128)].map({ $0 / 255 }) {
                let out = try render([try gradient(), try filter(mode, with: try solid(overlay))])
                assertMatches(out, "\(mode): \(overlay * 255) over the gradient") { x, y in
                    let uv = SIMD2((Double(x) + 0.5) / Double(TestImages.width), (Double(y) + 0.5) / Double(TestImages.height))
                    // The gradient filter's result is rounded to 8 bits before the blend reads it,
                    // and its alpha passes through the blend as the base's.
                    let base = (BlendTests.gradientColor(uv) * 255).rounded(.toNearestOrEven) / 255
                    return ISO32000.composite(mode, base: base, overlay: overlay, opacity: 1)
                }
            }
        }
    }

    // GPUImage's shaders, written for an opaque base (a = 1): with o the overlay's colour as its
    // texture holds it (premultiplied by oa, as Core Graphics hands GPUImage its pictures).

    func testAddMatchesGPUImage() throws {
        for overlay in BlendTests.solidOverlays {
            try assertPointFilter([try filter("add", with: try solid(overlay))], "add \(overlay * 255)") { c, _ in
                let oa = overlay.w
                func channel(_ b: Double, _ s: Double) -> Double {
                    let o = s * oa
                    // if o * ba + b * oa >= oa * ba: oa * ba + o (1 - ba) + b (1 - oa), else o + b
                    return o + b * oa >= oa ? oa + b * (1 - oa) : o + b
                }
                return RGBA(channel(c.x, overlay.x), channel(c.y, overlay.y), channel(c.z, overlay.z), c.w)
            }
        }
        try assertPointFilter([try filter("add", ["opacity": .float(0.5)], with: try gradient())], "add gradient") { c, uv in
            let o = BlendTests.gradientColor(uv)
            let a = o.w * 0.5
            return RGBA(c.rgb * (1 - a) + SIMD3((c.x + o.x).clamped01, (c.y + o.y).clamped01, (c.z + o.z).clamped01) * a, c.w)
        }
    }

    func testDivideMatchesGPUImage() throws {
        for overlay in BlendTests.solidOverlays {
            try assertPointFilter([try filter("divide", with: try solid(overlay))], "divide \(overlay * 255)") { c, _ in
                let oa = overlay.w
                func channel(_ b: Double, _ s: Double) -> Double {
                    let o = s * oa
                    // if oa == 0 or b / o > ba / oa: oa ba + o (1 - ba) + b (1 - oa), else b oa oa / o + ...
                    // (0 / 0, undefined in GPUImage, is taken as white.)
                    if o == 0 || b / o > 1 / oa { return oa + b * (1 - oa) }
                    return b * oa * oa / o + b * (1 - oa)
                }
                return RGBA(channel(c.x, overlay.x), channel(c.y, overlay.y), channel(c.z, overlay.z), c.w)
            }
        }
        try assertPointFilter([try filter("divide", ["opacity": .float(0.8)], with: try gradient())], "divide gradient") { c, uv in
            let o = BlendTests.gradientColor(uv)
            let a = o.w * 0.8
            let b = SIMD3((c.x / o.x).clamped01, (c.y / o.y).clamped01, (c.z / o.z).clamped01)
            return RGBA(c.rgb * (1 - a) + b * a, c.w)
        }
    }

    /// GPUImage's subtract and linear burn ignore the overlay's alpha; for opaque overlays ours
    /// equal them, for translucent ones ours weigh by alpha (x opacity) like every other mode.
    func testSubtractAndLinearBurnMatchGPUImageForOpaqueOverlays() throws {
        let gpuimage: [String: (Double, Double) -> Double] = [
            "subtract": { b, o in b - o },
            "linearBurn": { b, o in min(max(b + o - 1, 0), 1) },
        ]
        for (mode, f) in gpuimage {
            for overlay in BlendTests.solidOverlays {
                try assertPointFilter([try filter(mode, with: try solid(overlay))], "\(mode) \(overlay * 255)") { c, _ in
                    let b = simd_clamp01(RGBA(f(c.x, overlay.x), f(c.y, overlay.y), f(c.z, overlay.z), 1)).rgb
                    return RGBA(c.rgb * (1 - overlay.w) + b * overlay.w, c.w)
                }
            }
            try assertPointFilter([try filter(mode, ["opacity": .float(0.6)], with: try gradient())], "\(mode) gradient") { c, uv in
                let o = BlendTests.gradientColor(uv)
                let a = o.w * 0.6
                let b = simd_clamp01(RGBA(f(c.x, o.x), f(c.y, o.y), f(c.z, o.z), 1)).rgb
                return RGBA(c.rgb * (1 - a) + b * a, c.w)
            }
        }
    }

    func testAlphaBlendMatchesGPUImage() throws {
        // GPUImage: vec4(mix(base.rgb, overlay.rgb, overlay.a * mix), base.a); mix documented 0...1, default 1.
        for (mixValue, overlay) in [(nil, RGBA(243, 106, 188, 153) / 255), (0.3, RGBA(20, 200, 60, 255) / 255)] as [(Double?, RGBA)] {
            let values: [String: ParameterValue] = mixValue.map { ["mix": .float($0)] } ?? [:]
            let m = mixValue ?? 1
            try assertPointFilter([try filter("alpha", values, with: try solid(overlay))], "alpha mix \(m)") { c, _ in
                RGBA(c.rgb * (1 - overlay.w * m) + overlay.rgb * overlay.w * m, c.w)
            }
        }
        try assertPointFilter([try filter("alpha", ["mix": .float(0.7)], with: try gradient())], "alpha gradient") { c, uv in
            let o = BlendTests.gradientColor(uv)
            return RGBA(c.rgb * (1 - o.w * 0.7) + o.rgb * o.w * 0.7, c.w)
        }
    }

    func testDissolveMatchesGPUImage() throws {
        // GPUImage: mix(base, overlay, mixturePercent), default 0.5; the overlay's alpha plays no part.
        for pct in [nil, 0.8] as [Double?] {
            let values: [String: ParameterValue] = pct.map { ["mixturePercent": .float($0)] } ?? [:]
            let p = pct ?? 0.5
            let overlay = RGBA(40, 90, 230, 64) / 255
            try assertPointFilter([try filter("dissolve", values, with: try solid(overlay))], "dissolve \(p)") { c, _ in
                RGBA(c.rgb * (1 - p) + overlay.rgb * p, c.w)
            }
            try assertPointFilter([try filter("dissolve", values, with: try gradient())], "dissolve gradient \(p)") { c, uv in
                RGBA(c.rgb * (1 - p) + BlendTests.gradientColor(uv).rgb * p, c.w)
            }
        }
    }

    /// GPUImage's chroma key blend: Y = 0.2989 R + 0.5866 G + 0.1145 B, Cr = 0.7132 (R - Y),
    /// Cb = 0.5647 (B - Y); the base shows the overlay by 1 - smoothstep(threshold, threshold +
    /// smoothing, distance to the key in (Cr, Cb)).
    static func chromaKeyAmount(_ c: SIMD3<Double>, key: SIMD3<Double>, threshold: Double, smoothing: Double) -> Double {
        func crcb(_ c: SIMD3<Double>) -> SIMD2<Double> {
            let y = 0.2989 * c.x + 0.5866 * c.y + 0.1145 * c.z
            return SIMD2(0.7132 * (c.x - y), 0.5647 * (c.z - y))
        }
        let d = crcb(c) - crcb(key)
        let distance = (d * d).sum().squareRoot()
        if smoothing == 0 { return distance <= threshold ? 1 : 0 }
        let t = min(max((distance - threshold) / smoothing, 0), 1)
        return 1 - t * t * (3 - 2 * t)
    }

    func testChromaKeyReplacesTheKeyColourInTheBase() throws {
        let cases: [([String: ParameterValue], SIMD3<Double>, Double, Double)] = [
            ([:], SIMD3(0, 1, 0), 0.4, 0.1),
            (["colorToReplace": .vector([0, 0, 1, 1]), "thresholdSensitivity": .float(0.2), "smoothing": .float(0.15)], SIMD3(0, 0, 1), 0.2, 0.15),
            (["colorToReplace": .vector([1, 0, 0, 1]), "thresholdSensitivity": .float(0.3), "smoothing": .float(0)], SIMD3(1, 0, 0), 0.3, 0),
        ]
        let overlay = RGBA(243, 106, 188, 255) / 255
        for (values, key, threshold, smoothing) in cases {
            var replaced = 0
            try assertPointFilter([try filter("chromaKey", values, with: try solid(overlay))], "chromaKey \(key)") { c, _ in
                let k = BlendTests.chromaKeyAmount(c.rgb, key: key, threshold: threshold, smoothing: smoothing)
                if k > 0.5 { replaced += 1 }
                return RGBA(c.rgb * (1 - k) + overlay.rgb * k, c.w)
            }
            XCTAssertGreaterThan(replaced, 50, "the key colour \(key) should be found in the pattern")
            try assertPointFilter([try filter("chromaKey", values, with: try gradient())], "chromaKey \(key) gradient") { c, uv in
                let o = BlendTests.gradientColor(uv)
                // The overlay's alpha scales the replacement (GPUImage would output its alpha instead).
                let k = BlendTests.chromaKeyAmount(c.rgb, key: key, threshold: threshold, smoothing: smoothing) * o.w
                return RGBA(c.rgb * (1 - k) + o.rgb * k, c.w)
            }
        }
    }

    func testABlendWithoutASecondInputLeavesThePicture() throws {
        for mode in ["multiply", "hueBlend", "add", "chromaKey"] {
            let out = try render([try filter(mode)])
            XCTAssertEqual(out, TestImages.pattern, mode)
        }
    }

    /// Blend names must not collide with other families' filters (`saturation` and `hue` are
    /// colour adjustments): the registry keeps the first of a name, which would hide the blend.
    func testEveryBlendIsReachableByName() {
        for d in BlendFilters.all {
            XCTAssertEqual(FilterRegistry.named(d.name)?.category, .blend, "\(d.name) resolves to another filter")
            XCTAssertFalse(d.summary.isEmpty)
            for p in d.parameters { XCTAssertFalse(p.summary.isEmpty, "\(d.name).\(p.name)") }
        }
        XCTAssertEqual(Set(BlendFilters.all.map(\.name)).count, BlendFilters.all.count)
        XCTAssertEqual(BlendFilters.all.count, 24)
    }

    func testPresetParsesBlendModesWithGenerators() throws {
        let preset = try Preset.parse(json: """
        {"version": 1, "name": "t", "filters": [
          {"filter": "softLight", "with": "#808080", "opacity": 0.5},
          {"filter": "colorBlend", "with": {"filter": "linearGradient", "color0": "#ff8000"}},
          {"filter": "chromaKey", "with": "rgb(0,0,255)", "colorToReplace": [0, 1, 0], "smoothing": 0},
          {"filter": "dissolve", "with": "#000000", "mixturePercent": 0.25}
        ]}
        """, origin: "t.json")
        XCTAssertEqual(preset.filters.map(\.declaration.name), ["softLight", "colorBlend", "chromaKey", "dissolve"])
        XCTAssertEqual(preset.filters[1].overlay.first?.declaration.name, "linearGradient")
        XCTAssertEqual(preset.filters[2].doubles("colorToReplace"), [0, 1, 0, 1])
        _ = try render(preset.filters)
    }
}

extension Double {
    var clamped01: Double { Swift.min(Swift.max(self, 0), 1) }
}
