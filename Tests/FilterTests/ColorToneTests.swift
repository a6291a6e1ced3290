import GPUEncodeKit
import XCTest

/// ColorToneFilters.swift: colorInvert, monochrome, falseColor (GPUImage's), haze.
final class ColorToneTests: FilterTestCase {
    func testColorInvert() throws {
        try assertPointFilter([try filter("colorInvert")]) { c, _ in RGBA(1 - c.x, 1 - c.y, 1 - c.z, c.w) }
    }

    /// GPUImageMonochromeFilter: Rec. 709 luminance l overlay-blended with the colour k per channel
    /// (2 l k below l = 0.5, 1 - 2 (1 - l)(1 - k) from 0.5 up), mixed with the input by intensity.
    private func monochrome(_ c: RGBA, _ k: SIMD3<Double>, _ intensity: Double) -> RGBA {
        let l = luminance709(c)
        let toned = SIMD3((0..<3).map { i in l < 0.5 ? 2 * l * k[i] : 1 - 2 * (1 - l) * (1 - k[i]) })
        return RGBA(c.rgb + (toned - c.rgb) * intensity, c.w)
    }

    func testMonochrome() throws {
        try assertPointFilter([try filter("monochrome")], "default") { c, _ in
            self.monochrome(c, SIMD3(0.6, 0.45, 0.3), 1)
        }
        try assertPointFilter([try filter("monochrome", ["color": .vector([0.2, 0.5, 0.9, 1]), "intensity": .float(0.6)])]) { c, _ in
            self.monochrome(c, SIMD3(0.2, 0.5, 0.9), 0.6)
        }
    }

    /// GPUImageFalseColorFilter: firstColor + (secondColor - firstColor) * Rec. 709 luminance.
    func testFalseColor() throws {
        try assertPointFilter([try filter("falseColor")], "default") { c, _ in
            let l = luminance709(c)
            return RGBA(l, 0, 0.5 * (1 - l), c.w)
        }
        let a = SIMD3(0.1, 0.8, 0.2), b = SIMD3(1.0, 0.9, 0.0)
        try assertPointFilter([try filter("falseColor", ["firstColor": .vector([0.1, 0.8, 0.2, 1]), "secondColor": .vector([1, 0.9, 0, 1])])]) { c, _ in
            RGBA(a + (b - a) * luminance709(c), c.w)
        }
    }

    /// GPUImageHazeFilter: d = distance + slope * v (v = 0 at the top), c' = (c - d) / (1 - d).
    func testHaze() throws {
        for (distance, slope) in [(0.2, 0.0), (-0.2, 0.25), (0.1, -0.3)] {
            let f = distance == 0.2 && slope == 0 ? try filter("haze")
                : try filter("haze", ["distance": .float(distance), "slope": .float(slope)])
            try assertPointFilter([f], "distance \(distance) slope \(slope)") { c, uv in
                let d = distance + slope * uv.y
                return RGBA((c.rgb - SIMD3(repeating: d)) / (1 - d), c.w)
            }
        }
    }
}
