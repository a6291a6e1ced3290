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
