import Foundation
import GPUEncodeKit
import XCTest

/// lut3d and the .cube parser. The tables are written here as text in both dialects; the references
/// interpolate the same function's samples in Double: trilinear as the weighted sum of the cell's
/// eight corners, tetrahedral as the walk from the cell's lowest corner to its highest along the
/// axes in decreasing order of their fractions (the tetrahedron holding the point), each vertex
/// weighted by the drop in fraction at that step.
final class CubeFilterTests: FilterTestCase {
    typealias V3 = SIMD3<Double>

    /// A smooth but strongly non-linear grade with cross-channel terms.
    static func grade(_ c: V3) -> V3 {
        V3(0.85 * c.x * c.x + 0.15 * c.y,
           (c.y).squareRoot() * 0.9 + 0.1 * c.z * c.x,
           0.2 + 0.6 * c.z * c.z * c.z + 0.2 * c.x * (1 - c.y))
    }

    struct Table3D {
        let n: Int
        var values: [V3]
        init(n: Int, _ f: (V3) -> V3) {
            self.n = n
            values = []
            for b in 0..<n { for g in 0..<n { for r in 0..<n {
                values.append(f(V3(Double(r), Double(g), Double(b)) / Double(n - 1)))
            } } }
        }
        func at(_ r: Int, _ g: Int, _ b: Int) -> V3 { values[r + g * n + b * n * n] }

        /// `t` in index space 0...n-1.
        func trilinear(_ t: V3) -> V3 {
            let base = (0..<3).map { min(Int(t[$0].rounded(.down)), n - 2) }
            var sum = V3()
            for corner in 0..<8 {
                var w = 1.0
                var idx = base
                for axis in 0..<3 {
                    let f = t[axis] - Double(base[axis])
                    let high = (corner >> axis) & 1 == 1
                    w *= high ? f : 1 - f
                    if high { idx[axis] += 1 }
                }
                sum += at(idx[0], idx[1], idx[2]) * w
            }
            return sum
        }

        func tetrahedral(_ t: V3) -> V3 {
            let base = (0..<3).map { min(Int(t[$0].rounded(.down)), n - 2) }
            let f = (0..<3).map { t[$0] - Double(base[$0]) }
            let order = [0, 1, 2].sorted { f[$0] > f[$1] }
            var idx = base
            var sum = at(idx[0], idx[1], idx[2]) * (1 - f[order[0]])
            for step in 0..<3 {
                idx[order[step]] += 1
                let next = step < 2 ? f[order[step + 1]] : 0
                sum += at(idx[0], idx[1], idx[2]) * (f[order[step]] - next)
            }
            return sum
        }
    }

    static func row(_ v: V3) -> String { "\(v.x) \(v.y) \(v.z)" }

    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cube-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.path
    }

    func write(_ text: String, _ name: String = "look.cube") throws -> String {
        let path = try temporaryDirectory() + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func lut3d(_ path: String, _ values: [String: ParameterValue] = [:]) throws -> FilterInstance {
        var v = values
        v["file"] = .string(path)
        return try filter("lut3d", v)
    }

    /// Index-space position of x for a table of n entries over min...max.
    static func index(_ x: Double, _ lo: Double, _ hi: Double, _ n: Int) -> Double {
        min(max((x - lo) / (hi - lo), 0), 1) * Double(n - 1)
    }

    func testTetrahedralAndTrilinearMatchTheirDefinitions() throws {
        // Products of channels on a coarse grid: trilinear reproduces them, tetrahedral does not,
        // so the two differ by several code values.
        let table = Table3D(n: 3) { c in CubeFilterTests.grade(c) * 0.5 + V3(c.x * c.y, c.y * c.z + 0.2 * c.x, 1 - c.x * c.z) * 0.5 }
        let text = "LUT_3D_SIZE 3\n" + table.values.map(CubeFilterTests.row).joined(separator: "\n") + "\n"
        let path = try write(text)
        func t(_ c: RGBA) -> V3 { c.rgb * 2 }
        try assertPointFilter([try lut3d(path)], "tetrahedral (default)") { c, _ in RGBA(table.tetrahedral(t(c)), c.w) }
        try assertPointFilter([try lut3d(path, ["interpolation": .string("trilinear"), "intensity": .float(0.75)])], "trilinear") { c, _ in
            RGBA(c.rgb * 0.25 + table.trilinear(t(c)) * 0.75, c.w)
        }
        // The two schemes differ enough on this table for the tests above to tell them apart.
        var largest = 0.0
        for y in 0..<TestImages.height { for x in 0..<TestImages.width {
            let c = TestImages.color(TestImages.pattern, x, y)
            let d = table.tetrahedral(t(c)) - table.trilinear(t(c))
            largest = max(largest, abs(d.x), abs(d.y), abs(d.z))
        } }
        XCTAssertGreaterThan(largest * 255, 5)
    }

    func testAdobeDomainCommentsTitleAndCRLF() throws {
        let lo = V3(-0.1, 0, 0.1), hi = V3(1.2, 1, 0.9)
        let table = Table3D(n: 7, CubeFilterTests.grade)
        var lines = ["# written by CubeFilterTests", "TITLE \"domain test\"", "", "DOMAIN_MIN -0.1 0 0.1", "DOMAIN_MAX 1.2 1.0 0.9",
                     "  # indented comment", "LUT_3D_SIZE 7", ""]
        for (i, v) in table.values.enumerated() {
            lines.append(CubeFilterTests.row(v))
            if i == 100 { lines.append("") ; lines.append("# a comment inside the table") }
        }
        let path = try write(lines.joined(separator: "\r\n") + "\r\n")
        let cube = try CubeFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        XCTAssertEqual(cube.title, "domain test")
        XCTAssertEqual(cube.size3D, 7)
        XCTAssertEqual(cube.size1D, 0)
        XCTAssertEqual(cube.min3D, [-0.1, 0, 0.1])
        XCTAssertEqual(cube.max3D, [1.2, 1, 0.9])
        try assertPointFilter([try lut3d(path)]) { c, _ in
            let t = V3((0..<3).map { CubeFilterTests.index(c[$0], lo[$0], hi[$0], 7) })
            return RGBA(table.tetrahedral(t), c.w)
        }
    }

    func testAdobe1DWithDomainAndManyEntries() throws {
        // 5000 entries: more than one row of the 1D table's texture.
        let n = 5000
        func curve(_ x: Double) -> V3 { V3(x * x, 1 - x, 0.5 + 0.5 * sin(x * 6)) }
        var lines = ["LUT_1D_SIZE \(n)", "DOMAIN_MIN 0 0.2 0", "DOMAIN_MAX 1 0.8 0.5"]
        let entries = (0..<n).map { curve(Double($0) / Double(n - 1)) }
        lines += entries.map(CubeFilterTests.row)
        let path = try write(lines.joined(separator: "\n"))
        let lo = V3(0, 0.2, 0), hi = V3(1, 0.8, 0.5)
        try assertPointFilter([try lut3d(path)]) { c, _ in
            var out = RGBA(0, 0, 0, c.w)
            for ch in 0..<3 {
                let t = CubeFilterTests.index(c[ch], lo[ch], hi[ch], n)
                let i = min(Int(t), n - 2)
                out[ch] = entries[i][ch] * (Double(i + 1) - t) + entries[i + 1][ch] * (t - Double(i))
            }
            return out
        }
    }

    func testResolveShaperThen3D() throws {
        // Shaper: per-channel gamma-like curve, output range 0...1.5, over input range 0...1.25.
        let n1 = 11
        let shaper = (0..<n1).map { i -> V3 in
            let x = Double(i) / Double(n1 - 1)
            return V3(1.5 * x.squareRoot(), 1.5 * x, 1.5 * x * x)
        }
        let table = Table3D(n: 6, CubeFilterTests.grade)
        var lines = ["TITLE \"resolve shaper\"", "LUT_1D_SIZE \(n1)", "LUT_1D_INPUT_RANGE 0.0 1.25", "LUT_3D_SIZE 6", "LUT_3D_INPUT_RANGE 0.0 1.5"]
        lines += shaper.map(CubeFilterTests.row)
        lines += table.values.map(CubeFilterTests.row)
        let path = try write(lines.joined(separator: "\n") + "\n")
        let cube = try CubeFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        XCTAssertEqual(cube.size1D, n1)
        XCTAssertEqual(cube.size3D, 6)
        XCTAssertEqual(cube.max1D, [1.25, 1.25, 1.25])
        XCTAssertEqual(cube.max3D, [1.5, 1.5, 1.5])
        func shaped(_ c: RGBA) -> V3 {
            V3((0..<3).map { ch -> Double in
                let t = CubeFilterTests.index(c[ch], 0, 1.25, n1)
                let i = min(Int(t), n1 - 2)
                return shaper[i][ch] * (Double(i + 1) - t) + shaper[i + 1][ch] * (t - Double(i))
            })
        }
        try assertPointFilter([try lut3d(path, ["interpolation": .string("trilinear")])]) { c, _ in
            let s = shaped(c)
            return RGBA(table.trilinear(V3((0..<3).map { CubeFilterTests.index(s[$0], 0, 1.5, 6) })), c.w)
        }
    }

    func testMalformedFilesNameTheLine() throws {
        let rows8 = (0..<8).map { i in "\(Double(i & 1)) \(Double((i >> 1) & 1)) \(Double(i >> 2))" }
        let cases: [(String, String)] = [
            // Too few rows: the error is at the end of the file.
            ((["LUT_3D_SIZE 2"] + rows8.dropLast()).joined(separator: "\n") + "\n", "line 8:"),
            // Too many rows: at the first extra one.
            ((["LUT_3D_SIZE 2"] + rows8 + ["1 1 1"]).joined(separator: "\n"), "line 10:"),
            // Not a number.
            ((["# c", "LUT_3D_SIZE 2"] + rows8.prefix(2) + ["0.5 abc 0.1"] + rows8.suffix(5)).joined(separator: "\n"), "line 5:"),
            // Two values on a row.
            ((["LUT_3D_SIZE 2", rows8[0], "0.5 0.5"] + rows8.suffix(6)).joined(separator: "\r\n"), "line 3:"),
            // Size out of range.
            ("TITLE \"x\"\nLUT_3D_SIZE 300\n", "line 2:"),
            ("LUT_1D_SIZE 1\n0 0 0\n", "line 1:"),
            ("LUT_3D_SIZE 257\n0 0 0\n", "line 1:"),
            // 256 is accepted: the complaint is about the rows.
            ("LUT_3D_SIZE 256\n0 0 0\n", "line 2: the file ends after 1 of 16777216 table rows"),
            ("LUT_3D_SIZE 2.5\n", "line 1:"),
            // No size before the data, and none at all.
            ((["TITLE \"no size\""] + rows8).joined(separator: "\n"), "line 2:"),
            ("TITLE \"empty\"\n# nothing\n", "line 2:"),
            // Dialects mixed, domain reversed, keyword after the data.
            ((["LUT_3D_SIZE 2", "DOMAIN_MIN 0 0 0", "LUT_3D_INPUT_RANGE 0 1"] + rows8).joined(separator: "\n"), "line 3:"),
            ((["DOMAIN_MIN 0 0.5 0", "DOMAIN_MAX 1 0.5 1", "LUT_3D_SIZE 2"] + rows8).joined(separator: "\n"), "line 2:"),
            ((["LUT_3D_SIZE 2"] + rows8 + ["DOMAIN_MAX 1 1 1"]).joined(separator: "\n"), "line 10:"),
            ((["LUT_3D_SIZE 2", "LUT_3D_SIZE 2"] + rows8).joined(separator: "\n"), "line 2:"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try CubeFile.parse(Array(text.utf8)), expected) { error in
                let message = (error as? FilterError)?.message ?? "\(error)"
                XCTAssertTrue(message.hasPrefix(expected), "\"\(message)\" should start with \(expected) for:\n\(text)")
            }
        }
        // Through the filter, the message names the file too.
        let path = try write("LUT_3D_SIZE 2\n0 0 0\n", "short.cube")
        XCTAssertThrowsError(try FilterInstance(FilterRegistry.named("lut3d")!, values: ["file": .string(path)]).prepared()) { error in
            let message = (error as? FilterError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("short.cube") && message.contains("line 2:"), message)
        }
    }

    func testIdentity1DAnd3DLeaveThePictureUnchanged() throws {
        let table = Table3D(n: 2) { $0 }
        let path3 = try write("LUT_3D_SIZE 2\n" + table.values.map(CubeFilterTests.row).joined(separator: "\n"))
        try assertPointFilter([try lut3d(path3)], tolerance: 1) { c, _ in c }
        let path1 = try write("LUT_1D_SIZE 2\n0 0 0\n1 1 1\n", "one.cube")
        try assertPointFilter([try lut3d(path1)], tolerance: 1) { c, _ in c }
    }
}
