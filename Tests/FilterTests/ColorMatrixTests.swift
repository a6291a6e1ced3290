import GPUEncodeKit
import XCTest

/// ColorMatrixFilters.swift: colorMatrix, sepia, grayscale, against the matrices GPUImage
/// publishes (GPUImageColorMatrixFilter, GPUImageSepiaFilter, GPUImageGrayscaleFilter).
final class ColorMatrixTests: FilterTestCase {
    /// out_i = sum_j m[i][j] * c_j, rows as written, then mix with c by intensity.
    private func apply(_ rows: [Double], _ c: RGBA, intensity: Double) -> RGBA {
        var out = RGBA()
        for i in 0..<4 { for j in 0..<4 { out[i] += rows[i * 4 + j] * c[j] } }
        return c + (out - c) * intensity
    }

    private let sepiaRows: [Double] = [
        0.3588, 0.7044, 0.1368, 0,
        0.2990, 0.5870, 0.1140, 0,
        0.2392, 0.4696, 0.0912, 0,
        0, 0, 0, 1,
    ]

    func testSepiaDefaultAndHalfIntensity() throws {
        try assertPointFilter([try filter("sepia")], "full") { c, _ in self.apply(self.sepiaRows, c, intensity: 1) }
        try assertPointFilter([try filter("sepia", ["intensity": .float(0.35)])], "0.35") { c, _ in
            self.apply(self.sepiaRows, c, intensity: 0.35)
        }
    }

    func testGrayscaleIsRec709Luminance() throws {
        try assertPointFilter([try filter("grayscale")]) { c, _ in
            let y = 0.2125 * c.x + 0.7154 * c.y + 0.0721 * c.z
            return RGBA(y, y, y, c.w)
        }
    }

    func testColorMatrixRowsAreOutputChannels() throws {
        // Channel swap with a cross term and a bias through alpha (alpha is 1 in the pattern).
        let rows: [Double] = [
            0, 1, 0, 0,
            0.5, 0, 0.5, 0,
            1, 0.2, 0.1, -0.15,
            0, 0, 0, 1,
        ]
        try assertPointFilter([try filter("colorMatrix", ["matrix": .matrix4(rows), "intensity": .float(0.7)])]) { c, _ in
            self.apply(rows, c, intensity: 0.7)
        }
        try assertPointFilter([try filter("colorMatrix")], "identity default") { c, _ in c }
    }
}
