import Foundation
import GPUEncodeKit
import XCTest

/// The `shader` filter: GPUImage-style GLSL from a preset, its declared parameters, and errors in
/// the author's terms.
final class CustomFilterTests: FilterTestCase {
    private let invertMix = """
    varying highp vec2 textureCoordinate;
    uniform sampler2D inputImageTexture;
    uniform lowp float amount;
    void main() {
        lowp vec4 c = texture2D(inputImageTexture, textureCoordinate);
        gl_FragColor = vec4(mix(c.rgb, vec3(1.0) - c.rgb, amount), c.a);
    }
    """

    private func preset(_ filter: String, origin: String = "/tmp/custom.json") throws -> Preset {
        try Preset.parse(json: #"{"version": 1, "name": "custom", "filters": [\#(filter)]}"#, origin: origin)
    }

    private func jsonString(_ s: String) -> String {
        String(data: try! JSONSerialization.data(withJSONObject: [s], options: [.fragmentsAllowed]), encoding: .utf8)!.dropFirst().dropLast().description
    }

    func testInlineShaderWithDeclaredParameter() throws {
        let p = try preset(#"{"filter": "shader", "source": \#(jsonString(invertMix)), "parameters": {"amount": {"type": "float", "default": 0.5, "range": [0, 1]}}, "amount": 0.25}"#)
        let out = try render(p.filters)
        assertMatches(out) { x, y in
            let c = TestImages.color(TestImages.pattern, x, y)
            return RGBA(c.rgb * 0.75 + (SIMD3(1, 1, 1) - c.rgb) * 0.25, c.w)
        }
    }

    func testDefaultIsUsedAndBuiltinsExist() throws {
        // texelWidth/Height: sampling one pixel to the left, as GPUImage's 3x3 filters do.
        let shader = """
        varying highp vec2 textureCoordinate;
        uniform sampler2D inputImageTexture;
        uniform float shift;
        void main() {
            gl_FragColor = texture2D(inputImageTexture, textureCoordinate - vec2(texelWidth * shift, 0.0));
        }
        """
        let p = try preset(#"{"filter": "shader", "source": \#(jsonString(shader)), "parameters": {"shift": {"default": 1}}}"#)
        XCTAssertEqual(p.filters[0].values["shift"], .float(1))
        let out = try render(p.filters)
        assertMatches(out, tolerance: 0) { x, y in TestImages.pixel(TestImages.pattern, x - 1, y) }
    }

    func testShaderFileResolvesBesideThePreset() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("custom-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(invertMix.utf8).write(to: dir.appendingPathComponent("invert.frag"))
        let p = try preset(#"{"filter": "shader", "file": "invert.frag", "parameters": {"amount": {"default": 1}}}"#,
                           origin: dir.appendingPathComponent("p.json").path)
        let out = try render(p.filters)
        assertMatches(out) { x, y in
            let c = TestImages.color(TestImages.pattern, x, y)
            return RGBA(SIMD3(1, 1, 1) - c.rgb, c.w)
        }
    }

    func testCompileErrorNamesPresetAndShaderLine() throws {
        let broken = """
        varying highp vec2 textureCoordinate;
        uniform sampler2D inputImageTexture;
        void main() {
            gl_FragColor = texture2D(inputImageTexture, textureCoordinate) * undefinedThing;
        }
        """
        let p = try preset(#"{"filter": "sepia"}, {"filter": "shader", "source": \#(jsonString(broken))}"#, origin: "/tmp/looks/broken.json")
        XCTAssertThrowsError(try render(p.filters)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("/tmp/looks/broken.json"), text)
            XCTAssertTrue(text.contains("filters[1] shader"), text)
            XCTAssertTrue(text.contains("line 4"), text)
            XCTAssertTrue(text.contains("undefinedThing"), text)
        }
    }

    func testBadParameterDeclarationsAreRejected() {
        XCTAssertThrowsError(try preset(#"{"filter": "shader", "source": "void main() {}", "parameters": {"x": {"type": "matrix"}}}"#)) {
            XCTAssertTrue("\($0)".contains("unknown type \"matrix\""), "\($0)")
        }
        XCTAssertThrowsError(try preset(#"{"filter": "shader", "source": "void main() {}", "parameters": {"x": {"range": [0, 1]}}, "x": 3}"#)) {
            XCTAssertTrue("\($0)".contains("out of range 0...1"), "\($0)")
        }
        XCTAssertThrowsError(try preset(#"{"filter": "shader"}"#)) {
            XCTAssertTrue("\($0)".contains("missing \"source\""), "\($0)")
        }
    }
}

/// `averageColor`: a GPU reduction whose result later filters can read.
final class AverageColorTests: FilterTestCase {
    private func mean(_ image: RGBAImage) -> RGBA {
        var s = RGBA()
        for y in 0..<image.height { for x in 0..<image.width { s += TestImages.color(image, x, y) } }
        return s / Double(image.width * image.height)
    }

    func testMeanOfThePictureAndPassThrough() throws {
        // Sizes that are not multiples of 4 exercise the partial blocks at the edges.
        for (w, h) in [(64, 48), (61, 37), (300, 7)] {
            let image = RGBAImage(width: w, height: h) { x, y in
                (UInt8((x * 255) / max(w - 1, 1)), UInt8((y * 97 + x * 13) % 256), UInt8(x < w / 3 ? 255 : 20), 255)
            }
            let renderer = try ImageRenderer(width: w, height: h, filters: [try filter("averageColor")])
            let out = try renderer.render(image)
            XCTAssertEqual(out, image, "the picture passes through unchanged")
            let measured = renderer.statistics.first { $0.name == "averageColor" }?.value ?? []
            let expected = mean(image)
            XCTAssertEqual(measured.count, 4)
            // Each 4x4 reduction level rounds to 8 bits: a few levels of half a code value at most.
            for c in 0..<4 { XCTAssertEqual(measured[c] * 255, expected[c] * 255, accuracy: 1.5, "\(w)x\(h) channel \(c)") }
        }
    }

    func testLaterShaderReadsTheAverage() throws {
        let shader = """
        varying highp vec2 textureCoordinate;
        uniform sampler2D inputImageTexture;
        void main() { gl_FragColor = vec4(averageColor.rgb, 1.0); }
        """
        let json = try JSONSerialization.data(withJSONObject: ["version": 1, "name": "a", "filters": [["filter": "averageColor"], ["filter": "shader", "source": shader]]] as [String: Any])
        let preset = try Preset.parse(json: String(decoding: json, as: UTF8.self), origin: "/tmp/a.json")
        let out = try render(preset.filters)
        let expected = mean(TestImages.pattern)
        assertMatches(out, tolerance: 2) { _, _ in RGBA(expected.rgb, 1) }
    }
}
