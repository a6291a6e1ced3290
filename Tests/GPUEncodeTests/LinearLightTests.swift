import Foundation
import XCTest

/// `"light": "linear"` presets: blurs and blends computed on linear RGB (the BT.709 transfer function undone at
/// the chain's start, applied again at its end). The oracle is the published transfer function and the
/// discrete Gaussian in float64, here; the default (gamma) light is checked against the same edge.
final class LinearLightTests: GPUEncodeTestCase {
    /// The BT.709 OETF (linear light to R'G'B').
    private static func encode(_ l: Double) -> Double { l < 0.018 ? 4.5 * l : 1.099 * pow(l, 0.45) - 0.099 }

    /// A black | white edge (Y' 16 | 235, grey) blurred with sigma 3 across the columns of one row: in linear
    /// light the row is encode(Gaussian of 0 | 1), in gamma light the Gaussian of the codes. Measured: within
    /// 0.6 code values of both references on the chain paths (direct: chain then NV12; rgba), pixel buffers
    /// and client memory. At the edge itself linear light gives 136 and 160 (gamma 83 and 111).
    func testGaussianBlurAcrossAnEdgeInLinearLight() throws {
        let input = scratch("edge.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                                         "color=black:size=128x64:rate=25,geq=lum='if(lt(X,64),16,235)':cb=128:cr=128",
                                         "-t", "0.2", "-pix_fmt", "yuv420p", "-colorspace", "bt709", "-color_range", "tv", "-c:v", "ffv1", input.path])
        let sigma = 3.0, radius = 9
        var w = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = w.reduce(0, +)
        w = w.map { $0 / total }
        let blurred = (0..<128).map { x in (-radius...radius).reduce(0.0) { $0 + w[$1 + radius] * (min(max(x + $1, 0), 127) >= 64 ? 1 : 0) } }
        for light in ["linear", "gamma"] {
            let preset = scratch("\(light).json")
            try Data(#"{"version": 2, "name": "edge", "light": "\#(light)", "filters": [{"filter": "gaussianBlur", "sigma": 3, "quality": "exact"}]}"#.utf8)
                .write(to: preset)
            let expected = blurred.map { 16 + 219 * (light == "linear" ? Self.encode($0) : $0) }
            for (path, transfer) in [("direct", "pbo"), ("direct", "client"), ("rgba", "client")] {
                let row = try run(input, preset: preset, path: path, transfer: transfer, width: 128, height: 64, row: 32)
                let worst = zip(row, expected).map { abs($0 - $1) }.max() ?? 99
                print("\(light) light blur \(path)/\(transfer): at the edge \(row[63]), \(row[64]) (expected \(expected[63]), \(expected[64])); worst \(worst)")
                XCTAssertLessThanOrEqual(worst, 1.0, "\(light) light, \(path)/\(transfer): worst error \(worst) code values; row \(row[56..<72])")
            }
        }
    }

    /// A blend fused into the single pass (point filters only: the packed pass and, for 4:2:2, the per-plane
    /// passes): black under white at opacity 0.5 is 50% light, encode(0.5) = 0.7055, Y' 170.5 (gamma: 125.5).
    func testHalfBlendIsHalfTheLight() throws {
        for format in ["yuv420p", "yuv422p"] {
            let input = scratch("black-\(format).mkv")
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:size=64x32:rate=25", "-t", "0.2",
                                             "-pix_fmt", format, "-colorspace", "bt709", "-color_range", "tv", "-c:v", "ffv1", input.path])
            for light in ["linear", "gamma"] {
                let preset = scratch("blend-\(light).json")
                try Data(#"{"version": 2, "name": "half", "light": "\#(light)", "filters": [{"filter": "normal", "with": "rgb(255, 255, 255)", "opacity": 0.5}]}"#.utf8)
                    .write(to: preset)
                let expected = 16 + 219 * (light == "linear" ? Self.encode(0.5) : 0.5)
                for (path, transfer) in [("direct", "pbo"), ("direct", "client"), ("rgba", "client")] {
                    let row = try run(input, preset: preset, path: path, transfer: transfer, width: 64, height: 32, row: 10)
                    let worst = row.map { abs($0 - expected) }.max() ?? 99
                    print("\(format) \(light) light blend \(path)/\(transfer): Y' \(row[10]) (expected \(expected))")
                    XCTAssertLessThanOrEqual(worst, 1.0, "\(format) \(light) light, \(path)/\(transfer): Y' \(row[10]), expected \(expected)")
                }
            }
        }
    }

    func testUnknownLightIsAPresetError() throws {
        let preset = scratch("bad.json")
        try Data(#"{"version": 2, "name": "bad", "light": "linaer", "filters": [{"filter": "sepia"}]}"#.utf8).write(to: preset)
        let result = try gpuencode(["validate", preset.path])
        XCTAssertEqual(result.status, ExitCode.badPreset, result.summary)
        XCTAssertTrue((result.stdout + result.stderr).contains(#"unknown light "linaer"; expected one of gamma, linear"#), result.stdout + result.stderr)
        // presets show writes it back; the schema knows it.
        try Data(#"{"version": 2, "name": "ok", "light": "linear", "filters": [{"filter": "sepia"}]}"#.utf8).write(to: preset)
        let shown = try gpuencode(["presets", "show", preset.path])
        XCTAssertEqual(shown.status, ExitCode.ok, shown.summary)
        XCTAssertTrue(shown.stdout.contains(#""light": "linear""#), shown.stdout)
        let schema = try gpuencode(["presets", "schema"])
        XCTAssertTrue(schema.stdout.contains(#""light""#), "the schema has no light member")
    }

    /// Row `row` of the output's Y plane, as Doubles.
    private func run(_ input: URL, preset: URL, path: String, transfer: String, width: Int, height: Int, row: Int) throws -> [Double] {
        let output = scratch("\(preset.deletingPathExtension().lastPathComponent)-\(input.deletingPathExtension().lastPathComponent)-\(path)-\(transfer).mkv")
        let result = try gpuencode([input.path, output.path, "--preset", preset.path, "--crf", "0", "--x264-preset", "ultrafast", "--render-path", path],
                                   environment: ProcessInfo.processInfo.environment.merging(["GPUENCODE_TRANSFER": transfer]) { $1 })
        guard result.status == ExitCode.ok else { throw OracleError("gpuencode failed: \(result.summary)") }
        let decoded = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-frames:v", "1",
                                                           "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        return (0..<width).map { Double(decoded[row * width + $0]) }
    }
}
