import Foundation
import GPUEncodeKit
import XCTest

/// toneCurve against Fritsch and Carlson's monotone cubic (SIAM J. Numer. Anal. 17(2), 1980),
/// evaluated here in Bézier form, composed as GPUImageToneCurveFilter composes: each channel's
/// curve, then the composite curve.
final class ToneCurveFilterTests: FilterTestCase {
    /// The paper's algorithm: secants, averaged tangents (zero where the data turns), zero tangents
    /// on flat segments, and tangents scaled onto the circle of radius 3 where (α, β) lies outside it.
    struct Reference {
        let x: [Double], y: [Double], m: [Double]

        init(_ points: [[Double]]) {
            x = points.map { $0[0] }
            y = points.map { $0[1] }
            let n = x.count
            var delta: [Double] = []
            for k in 0..<(n - 1) { delta.append((y[k + 1] - y[k]) / (x[k + 1] - x[k])) }
            var m = [Double](repeating: 0, count: n)
            for k in 0..<n {
                if k == 0 { m[k] = delta[0] } else if k == n - 1 { m[k] = delta[n - 2] } else {
                    m[k] = (delta[k - 1] > 0) == (delta[k] > 0) && delta[k - 1] != 0 && delta[k] != 0 ? (delta[k - 1] + delta[k]) / 2 : 0
                }
            }
            for k in 0..<(n - 1) {
                if delta[k] == 0 { m[k] = 0; m[k + 1] = 0; continue }
                let alpha = m[k] / delta[k], beta = m[k + 1] / delta[k]
                let r = (alpha * alpha + beta * beta).squareRoot()
                if r > 3 { m[k] = 3 / r * alpha * delta[k]; m[k + 1] = 3 / r * beta * delta[k] }
            }
            self.m = m
        }

        func callAsFunction(_ v: Double) -> Double {
            if v <= x[0] { return y[0] }
            if v >= x[x.count - 1] { return y[y.count - 1] }
            let k = (0..<(x.count - 1)).first { v <= x[$0 + 1] }!
            let h = x[k + 1] - x[k], t = (v - x[k]) / h, s = 1 - t
            // Cubic Bézier with control values y_k + h m_k / 3 and y_k+1 - h m_k+1 / 3.
            let p1 = y[k] + h * m[k] / 3, p2 = y[k + 1] - h * m[k + 1] / 3
            return s * s * s * y[k] + 3 * s * s * t * p1 + 3 * s * t * t * p2 + t * t * t * y[k + 1]
        }
    }

    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tonecurve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.path
    }

    func testDefaultIsIdentity() throws {
        try assertPointFilter([try filter("toneCurve")], tolerance: 1) { c, _ in c }
    }

    func testChannelCurvesThenCompositeFollowMonotoneCubic() throws {
        let rgb = [[0.0, 0.05], [0.3, 0.25], [0.7, 0.8], [1, 0.95]]
        let red = [[0.0, 0.0], [0.2, 0.6], [0.25, 0.62], [1, 1]]   // a natural spline overshoots here
        let green = [[0.1, 0.0], [0.5, 0.5], [0.9, 1.0]]            // flat outside 0.1...0.9
        let blue = [[0.0, 1.0], [0.4, 0.3], [0.6, 0.3], [1, 0]]     // falling, with a flat part
        let f = try filter("toneCurve", ["rgb": .points(rgb), "red": .points(red), "green": .points(green), "blue": .points(blue)])
        let (c, r, g, b) = (Reference(rgb), Reference(red), Reference(green), Reference(blue))
        try assertPointFilter([f]) { col, _ in RGBA(c(r(col.x)), c(g(col.y)), c(b(col.z)), col.w) }
    }

    func testCurveDoesNotOvershootBetweenCloseControlPoints() throws {
        let points = [[0.0, 0.0], [0.2, 0.6], [0.25, 0.62], [1, 1]]
        let curve = Reference(points)
        var previous = -1.0
        for i in 0...1000 {
            let v = curve(Double(i) / 1000)
            XCTAssertGreaterThanOrEqual(v, previous - 1e-12, "not monotone at \(Double(i) / 1000)")
            XCTAssertLessThanOrEqual(v, 1)
            previous = v
        }
        // On the GPU: the red gradient row stays non-decreasing through the curve.
        let out = try render([try filter("toneCurve", ["red": .points(points)])])
        var last = 0
        for x in 0..<TestImages.width {
            let v = Int(out[x, 20].0)
            XCTAssertGreaterThanOrEqual(v, last, "red falls at x = \(x)")
            last = v
        }
    }

    /// An .acv file written here: composite, red, green, blue as (output, input) pairs in 0...255.
    func acv(_ curves: [[(Int, Int)]], version: Int = 4) -> [UInt8] {
        var bytes: [UInt8] = []
        func int16(_ v: Int) { bytes += [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        int16(version)
        int16(curves.count)
        for curve in curves {
            int16(curve.count)
            for (output, input) in curve { int16(output); int16(input) }
        }
        return bytes
    }

    func testACVFileOverridesPointParameters() throws {
        let curves: [[(Int, Int)]] = [
            [(10, 0), (140, 128), (245, 255)],          // composite, (output, input)
            [(0, 0), (90, 64), (200, 190), (255, 255)], // red
            [(30, 0), (255, 230)],                      // green
            [(255, 0), (0, 255)],                       // blue, inverted
            [(0, 0), (255, 255)],                       // a fifth curve, ignored
        ]
        let dir = try temporaryDirectory()
        let path = dir + "/look.acv"
        try Data(acv(curves)).write(to: URL(fileURLWithPath: path))
        let f = try filter("toneCurve", ["acv": .string(path), "red": .points([[0, 1], [1, 0]])])
        let refs = curves.prefix(4).map { Reference($0.map { [Double($0.1) / 255, Double($0.0) / 255] }) }
        try assertPointFilter([f]) { c, _ in
            RGBA(refs[0](refs[1](c.x)), refs[0](refs[2](c.y)), refs[0](refs[3](c.z)), c.w)
        }
    }

    func testACVWithOneCurveLeavesChannelsStraight() throws {
        let parsed = try ACVFile.parse(acv([[(0, 0), (200, 100), (255, 255)]], version: 1))
        XCTAssertEqual(parsed.count, 4)
        XCTAssertEqual(parsed[0][1][0], 100.0 / 255, accuracy: 1e-12)
        XCTAssertEqual(parsed[0][1][1], 200.0 / 255, accuracy: 1e-12)
        XCTAssertEqual(parsed[3], [[0, 0], [1, 1]])
    }

    func testMalformedACVFilesAreRejected() {
        let cases: [([UInt8], String)] = [
            (acv([[(0, 0), (255, 255)]], version: 3), "version 3"),
            (Array(acv([[(0, 0), (255, 255)]]).dropLast(3)), "ends at byte"),
            (acv([[(0, 0)]]), "1 points"),
            (acv([[(0, 0), (300, 255)]]), "values must be 0 to 255"),
            (acv([[(0, 100), (255, 50)]]), "input values must increase"),
        ]
        for (bytes, expected) in cases {
            XCTAssertThrowsError(try ACVFile.parse(bytes), expected) { error in
                XCTAssertTrue((error as? FilterError)?.message.contains(expected) == true, "\(error) should mention \(expected)")
            }
        }
    }
}
