import GPUEncodeKit
import XCTest

// Filters are run for real (EGL + GLES, llvmpipe on machines without a GPU) through
// ImageRenderer and compared with references computed here on the CPU in Double precision from
// the filters' published definitions (GPUImage, Core Image, ISO 32000), never from our shaders.

/// RGBA in 0...1.
typealias RGBA = SIMD4<Double>

/// One GL context for the whole test process (contexts are per thread; XCTest runs tests on one).
enum SharedGL {
    nonisolated(unsafe) static var context: GLContext? = nil

    static func ensure() throws {
        if context != nil { return }
        let selection = ProcessInfo.processInfo.environment["GPUENCODE_GPU"].flatMap(GPUSelection.init(rawValue:)) ?? .auto
        context = try GLContext(selection: selection)
    }
}

/// A small synthetic picture with what filters must get right: smooth gradients in every channel,
/// hard edges, saturated primaries and secondaries, near-black and near-white, and partial alpha
/// nowhere (video is opaque). 64x48 so a full CPU reference of a blur stays fast.
enum TestImages {
    static let width = 64
    static let height = 48

    static let pattern: RGBAImage = RGBAImage(width: width, height: height) { x, y in
        let saturated: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255), (255, 255, 255), (0, 0, 0)]
        if y < 12 {
            // Bars of saturated colours with hard edges.
            let c = saturated[(x / 8) % saturated.count]
            return (c.0, c.1, c.2, 255)
        } else if y < 36 {
            // Gradients: red across, green down, blue diagonal.
            let r = UInt8(x * 255 / (width - 1))
            let g = UInt8((y - 12) * 255 / 23)
            let b = UInt8(((x + y) * 255 / (width + height - 2)))
            return (r, g, b, 255)
        } else {
            // A checkerboard of near-black and near-white with a mid-grey stripe.
            if x >= 28 && x < 36 { return (128, 128, 128, 255) }
            let on = ((x / 4) + (y / 4)) % 2 == 0
            return on ? (250, 245, 240, 255) : (5, 10, 15, 255)
        }
    }

    static func color(_ image: RGBAImage, _ x: Int, _ y: Int) -> RGBA {
        let p = image[x, y]
        return RGBA(Double(p.0), Double(p.1), Double(p.2), Double(p.3)) / 255
    }

    /// Clamp-to-edge bilinear sampling at texture coordinate (u, v) in 0...1, as GL's
    /// `texture()` with GL_LINEAR and GL_CLAMP_TO_EDGE does.
    static func sample(_ image: RGBAImage, _ u: Double, _ v: Double) -> RGBA {
        let fx = u * Double(image.width) - 0.5, fy = v * Double(image.height) - 0.5
        let x0 = Int(fx.rounded(.down)), y0 = Int(fy.rounded(.down))
        let tx = fx - Double(x0), ty = fy - Double(y0)
        func at(_ x: Int, _ y: Int) -> RGBA { color(image, min(max(x, 0), image.width - 1), min(max(y, 0), image.height - 1)) }
        let top = at(x0, y0) * (1 - tx) + at(x0 + 1, y0) * tx
        let bottom = at(x0, y0 + 1) * (1 - tx) + at(x0 + 1, y0 + 1) * tx
        return top * (1 - ty) + bottom * ty
    }

    /// Clamp-to-edge nearest pixel.
    static func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> RGBA {
        color(image, min(max(x, 0), image.width - 1), min(max(y, 0), image.height - 1))
    }
}

class FilterTestCase: XCTestCase {
    // The image, lookup and video filters decode their files through the FFmpeg decoder that the
    // command line installs at start (the filters layer has no FFmpeg).
    override class func setUp() {
        super.setUp()
        FilterMedia.install(FFmpegFilterMedia())
    }

    override func setUpWithError() throws {
        try SharedGL.ensure()
    }

    /// A filter by name with parameters (the test fails if the name or a parameter is unknown).
    func filter(_ name: String, _ values: [String: ParameterValue] = [:], with overlay: FilterInstance? = nil,
                file: StaticString = #filePath, line: UInt = #line) throws -> FilterInstance {
        guard let d = FilterRegistry.named(name) else {
            XCTFail("no filter named \(name)", file: file, line: line)
            throw XCTSkip("missing filter")
        }
        for key in values.keys where d.parameter(named: key) == nil {
            XCTFail("\(name) has no parameter \(key)", file: file, line: line)
        }
        return try FilterInstance(d, values: values, overlay: overlay).prepared()
    }

    /// Renders `filters` over `image` on the GPU.
    func render(_ filters: [FilterInstance], _ image: RGBAImage = TestImages.pattern, fuse: Bool = true,
                time: Double = 0) throws -> RGBAImage {
        let renderer = try ImageRenderer(width: image.width, height: image.height, filters: filters, fuse: fuse)
        return try renderer.render(image, time: time)
    }

    /// Compares every pixel of `output` with `reference(x, y)` (RGBA in 0...1, clamped here) and
    /// fails with the worst pixel when any channel is further than `tolerance` code values.
    func assertMatches(_ output: RGBAImage, tolerance: Double = 2, alpha: Bool = true, _ what: String = "",
                       file: StaticString = #filePath, line: UInt = #line, reference: (Int, Int) -> RGBA) {
        var worst = 0.0
        var at = (0, 0, RGBA(), RGBA())
        for y in 0..<output.height {
            for x in 0..<output.width {
                let expected = simd_clamp01(reference(x, y)) * 255
                let got = TestImages.color(output, x, y) * 255
                for c in 0..<(alpha ? 4 : 3) where abs(expected[c] - got[c]) > worst {
                    worst = abs(expected[c] - got[c])
                    at = (x, y, expected, got)
                }
            }
        }
        XCTAssertLessThanOrEqual(worst, tolerance,
                                 "\(what) worst error \(String(format: "%.2f", worst)) code values at (\(at.0), \(at.1)): expected \(fmt(at.2)), got \(fmt(at.3))",
                                 file: file, line: line)
    }

    /// A point filter's reference: `f` maps the input colour (and normalised position) to the output.
    func assertPointFilter(_ filters: [FilterInstance], tolerance: Double = 2, _ what: String = "",
                           file: StaticString = #filePath, line: UInt = #line, _ f: (RGBA, SIMD2<Double>) -> RGBA) throws {
        let image = TestImages.pattern
        let out = try render(filters, image)
        assertMatches(out, tolerance: tolerance, what, file: file, line: line) { x, y in
            let uv = SIMD2((Double(x) + 0.5) / Double(image.width), (Double(y) + 0.5) / Double(image.height))
            return f(TestImages.color(image, x, y), uv)
        }
    }

    private func fmt(_ v: RGBA) -> String { "(\((0..<4).map { String(format: "%.1f", v[$0]) }.joined(separator: ", ")))" }
}

func simd_clamp01(_ v: RGBA) -> RGBA { RGBA((0..<4).map { min(max(v[$0], 0), 1) }) }

func luminance709(_ c: RGBA) -> Double { 0.2125 * c.x + 0.7154 * c.y + 0.0721 * c.z }

extension RGBA {
    var rgb: SIMD3<Double> { SIMD3(x, y, z) }
    init(_ rgb: SIMD3<Double>, _ a: Double) { self.init(rgb.x, rgb.y, rgb.z, a) }
}
