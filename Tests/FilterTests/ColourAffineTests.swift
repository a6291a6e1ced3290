import GPUEncodeKit
import XCTest

/// ColourAffine.swift: every filter that declares itself an affine map of R'G'B' (the CPU
/// kernels run those maps instead of the GLSL) is held to its own GLSL, drawn on the GPU, at its
/// defaults and at other values of each number parameter; the map is applied here in double
/// precision and clamped as the chain clamps each filter's output.
final class ColourAffineTests: FilterTestCase {
    private func apply(_ a: ColourAffine, _ c: RGBA) -> RGBA {
        var out = RGBA(0, 0, 0, c.w)
        for i in 0..<3 { out[i] = a.rows[4 * i] * c.x + a.rows[4 * i + 1] * c.y + a.rows[4 * i + 2] * c.z + a.rows[4 * i + 3] }
        return simd_clamp01(out)
    }

    /// The declarations with an affine form (identity, sepia, grayscale, colorMatrix, brightness,
    /// contrast, saturation, colorControls at least).
    private var affine: [FilterDeclaration] { FilterRegistry.all.filter { $0.affine != nil } }

    func testTheAffineFamily() {
        let names = Set(affine.map(\.name))
        for name in ["identity", "sepia", "grayscale", "colorMatrix", "brightness", "contrast", "saturation", "colorControls", "hue",
                     "hueAdjust", "normal", "multiply", "screen"] {
            XCTAssertTrue(names.contains(name), "\(name) declares its affine map")
        }
    }

    func testEachMapIsItsGLSL() throws {
        for declaration in affine {
            var settings: [[String: ParameterValue]] = [[:]]
            for p in declaration.parameters {
                if case .float = p.defaultValue {
                    let d = p.defaultValue.double
                    settings.append([p.name: .float(d == 0 ? 0.3 : d * 0.6)])
                    settings.append([p.name: .float(d == 0 ? -0.2 : d * 1.3)])
                }
            }
            if declaration.name == "colorMatrix" {
                settings.append(["matrix": .matrix4([0, 1, 0, 0, 0.5, 0, 0.5, 0, 1, 0.2, 0.1, -0.15, 0, 0, 0, 1]), "intensity": .float(0.7)])
            }
            // Blends are affine with a solid colour over them (and only then).
            let overlay = declaration.category == .blend ? try filter("solidColor", ["color": .vector([0.95, 0.42, 0.74, 0.6])]) : nil
            if let overlay {
                XCTAssertNil(try filter(declaration.name, with: try filter("linearGradient")).affine(at: 0), declaration.name)
                XCTAssertNil(try filter(declaration.name).affine(at: 0), declaration.name)
                _ = overlay
            }
            for values in settings {
                let f = try filter(declaration.name, values, with: overlay)
                let map = try XCTUnwrap(f.affine(at: 0), "\(declaration.name) \(values)")
                try assertPointFilter([f], "\(declaration.name) \(values)") { c, _ in self.apply(map, c) }
            }
        }
    }

    /// toneCurve's tables against its GLSL: the colours of 8-bit pictures looked up per channel.
    func testChannelTablesAreTheGLSL() throws {
        let f = try filter("toneCurve", ["rgb": .points([[0, 0], [0.25, 0.2], [0.5, 0.5], [0.75, 0.8], [1, 1]]),
                                         "red": .points([[0, 0.1], [1, 0.9]])]).prepared()
        let tables = try XCTUnwrap(f.channelTables)
        XCTAssertEqual(tables.tables[0].count, 256)
        try assertPointFilter([f], tolerance: 1, "toneCurve") { c, _ in
            var out = c
            for i in 0..<3 { out[i] = tables.tables[i][Int(min(max(c[i], 0), 1) * 255 + 0.5)] }
            return out
        }
    }

    func testAMatrixThatChangesAlphaIsNotAffine() throws {
        let f = try filter("colorMatrix", ["matrix": .matrix4([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0, 0, 0.5])])
        XCTAssertNil(f.affine(at: 0))
    }

    func testKeyframedValuesAtTheirTime() throws {
        let k = Keyframes(times: [0, 2], values: [.float(0), .float(1)], easing: .linear)
        let f = try filter("sepia", ["intensity": .animated(k)])
        XCTAssertTrue(f.isAnimated)
        XCTAssertEqual(try XCTUnwrap(f.affine(at: 0)), .identity)
        XCTAssertEqual(try XCTUnwrap(f.affine(at: 1)).rows[0], 0.5 + 0.5 * 0.3588, accuracy: 1e-12)
    }

    /// The plane-native bar's two measures of a map, against their closed forms: saturation s
    /// stretches colour differences by s, contrast c by c, a grey and sepia (rank one, nearly grey)
    /// little, a hue turn by exactly 1 (a rotation about the grey axis) with negative shares.
    func testColourDifferenceGainAndNonNegativeShares() throws {
        for s in [0.0, 0.5, 1.0, 1.3] {
            let a = try XCTUnwrap(try filter("saturation", ["saturation": .float(s)]).affine(at: 0))
            XCTAssertEqual(a.colourDifferenceGain, s, accuracy: 1e-9, "saturation \(s)")
            XCTAssertEqual(a.isNonNegative, s <= 1, "saturation \(s)")
        }
        for c in [0.8, 1.2] {
            let a = try XCTUnwrap(try filter("contrast", ["contrast": .float(c)]).affine(at: 0))
            XCTAssertEqual(a.colourDifferenceGain, c, accuracy: 1e-9, "contrast \(c)")
        }
        XCTAssertEqual(ColourAffine.grey.colourDifferenceGain, 0, accuracy: 1e-9)
        let sepia = try XCTUnwrap(try filter("sepia").affine(at: 0))
        XCTAssertTrue(sepia.isNonNegative)
        XCTAssertLessThan(sepia.colourDifferenceGain, 0.2)
        let hue = try XCTUnwrap(try filter("hueAdjust", ["angle": .float(0.3)]).affine(at: 0))
        XCTAssertEqual(hue.colourDifferenceGain, 1, accuracy: 1e-6)
        XCTAssertFalse(hue.isNonNegative)
        XCTAssertEqual(ColourAffine.identity.colourDifferenceGain, 1, accuracy: 1e-12)
    }
}
