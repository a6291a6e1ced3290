import Foundation
import GPUEncodeKit
import XCTest

/// ColorHueFilters.swift: hue (GPUImage's YIQ rotation), hueAdjust (Core Image's rotation about the
/// grey axis), vibrance and whiteBalance (GPUImage's).
final class ColorHueTests: FilterTestCase {
    /// GPUImageHueFilter: YIQ with its constants, hue angle atan2(Q, I) decreased by the angle,
    /// chroma kept, back to RGB.
    private func gpuImageHue(_ c: RGBA, degrees: Double) -> RGBA {
        let y = 0.299 * c.x + 0.587 * c.y + 0.114 * c.z
        let i = 0.595716 * c.x - 0.274453 * c.y - 0.321263 * c.z
        let q = 0.211456 * c.x - 0.522591 * c.y + 0.31135 * c.z
        let angle = atan2(q, i) - degrees.truncatingRemainder(dividingBy: 360) * Double.pi / 180
        let chroma = (i * i + q * q).squareRoot()
        let i2 = chroma * cos(angle), q2 = chroma * sin(angle)
        return RGBA(y + 0.9563 * i2 + 0.6210 * q2, y - 0.2721 * i2 - 0.6474 * q2, y - 1.1070 * i2 + 1.7046 * q2, c.w)
    }

    func testHueRotatesYIQChroma() throws {
        for degrees in [90.0, -45.0, 200.0, 0.0] {
            let f = degrees == 90 ? try filter("hue") : try filter("hue", ["hue": .float(degrees)])
            try assertPointFilter([f], "hue \(degrees)") { c, _ in self.gpuImageHue(c, degrees: degrees) }
        }
    }

    /// A rotation by `angle` about the grey axis, right-handed (red -> green -> blue), written in an
    /// orthonormal basis of the plane perpendicular to grey.
    private func rotateAboutGrey(_ c: RGBA, _ angle: Double) -> RGBA {
        let v = c.rgb
        let mean = (v.x + v.y + v.z) / 3
        let p = v - SIMD3(repeating: mean)
        let e1 = SIMD3(2.0, -1, -1) / 6.0.squareRoot()
        let e2 = SIMD3(0.0, 1, -1) / 2.0.squareRoot()   // (1,1,1)/sqrt(3) x e1
        let a = (p * e1).sum(), b = (p * e2).sum()
        let rotated = e1 * (a * cos(angle) - b * sin(angle)) + e2 * (a * sin(angle) + b * cos(angle))
        return RGBA(rotated + SIMD3(repeating: mean), c.w)
    }

    func testHueAdjustRotatesAboutTheGreyAxis() throws {
        try assertPointFilter([try filter("hueAdjust")], "default") { c, _ in c }
        for angle in [2 * Double.pi / 3, 1.0, -2.5] {
            try assertPointFilter([try filter("hueAdjust", ["angle": .float(angle)])], "angle \(angle)") { c, _ in
                self.rotateAboutGrey(c, angle)
            }
        }
        // 120 degrees: the red bar (x 0..7, top rows) becomes green, green blue, blue red.
        let out = try render([try filter("hueAdjust", ["angle": .float(2 * Double.pi / 3)])])
        XCTAssertEqual(out[2, 2].0, 0); XCTAssertEqual(out[2, 2].1, 255); XCTAssertEqual(out[2, 2].2, 0)
        XCTAssertEqual(out[10, 2].2, 255); XCTAssertEqual(out[18, 2].0, 255)
    }

    /// GPUImageVibranceFilter: each channel moves towards the largest by (max - mean) * -3 * vibrance.
    func testVibrance() throws {
        try assertPointFilter([try filter("vibrance")], "default") { c, _ in c }
        for v in [0.8, -0.9] {
            try assertPointFilter([try filter("vibrance", ["vibrance": .float(v)])], "vibrance \(v)") { c, _ in
                let mx = max(c.x, c.y, c.z)
                let amount = (mx - (c.x + c.y + c.z) / 3) * (-3 * v)
                return RGBA(c.rgb + (SIMD3(repeating: mx) - c.rgb) * amount, c.w)
            }
        }
    }

    /// GPUImageWhiteBalanceFilter as GPUImage computes it: its matrices, written row by row into GLSL's
    /// column-major mat3, act as their transposes; tint / 100 * 0.05226 shifts the third component
    /// (clamped to +-0.5226); temperature mixes with an overlay blend of (0.93, 0.54, 0) by
    /// 0.0004 (T - 5000) below 5000 K and 0.00006 (T - 5000) above.
    private func whiteBalance(_ c: RGBA, temperature: Double, tint: Double) -> RGBA {
        let m: [[Double]] = [[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.212, -0.523, 0.311]]
        let n: [[Double]] = [[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.105, 1.702]]
        let rgb = [c.x, c.y, c.z]
        var yiq = (0..<3).map { j in (0..<3).reduce(0.0) { $0 + m[$1][j] * rgb[$1] } }
        yiq[2] = min(max(yiq[2] + tint / 100 * 0.5226 * 0.1, -0.5226), 0.5226)
        let balanced = (0..<3).map { j in (0..<3).reduce(0.0) { $0 + n[$1][j] * yiq[$1] } }
        let warm = [0.93, 0.54, 0.0]
        let amount = temperature < 5000 ? 0.0004 * (temperature - 5000) : 0.00006 * (temperature - 5000)
        let out = (0..<3).map { k -> Double in
            let a = balanced[k]
            let overlay = a < 0.5 ? 2 * a * warm[k] : 1 - 2 * (1 - a) * (1 - warm[k])
            return a + (overlay - a) * amount
        }
        return RGBA(out[0], out[1], out[2], c.w)
    }

    func testWhiteBalance() throws {
        try assertPointFilter([try filter("whiteBalance")], "default") { c, _ in c }
        for (t, tint) in [(4000.0, 0.0), (7000.0, 150.0), (5000.0, -120.0), (3000.0, 200.0)] {
            try assertPointFilter([try filter("whiteBalance", ["temperature": .float(t), "tint": .float(tint)])],
                                  "temperature \(t) tint \(tint)") { c, _ in
                self.whiteBalance(c, temperature: t, tint: tint)
            }
        }
    }
}
