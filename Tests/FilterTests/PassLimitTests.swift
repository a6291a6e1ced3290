@testable import GPUEncodeKit
@testable import GPUEncodeRender
import XCTest

/// Chains larger than one shader can hold: the plan cuts them into passes within the GPU's limits
/// (counted from the GLSL before compiling), and the picture equals one pass per filter, since each
/// fused filter is rounded to 8 bits as if it had a pass of its own.
final class PassLimitTests: FilterTestCase {
    /// Tone curves that differ, so a filter out of place or skipped shows.
    private func toneCurves(_ n: Int) throws -> [FilterInstance] {
        try (0..<n).map { i in
            let mid = 0.35 + 0.3 * Double(i % 5) / 4
            return try filter("toneCurve", ["rgb": .points([[0, 0.02], [0.5, mid], [1, 0.98]])])
        }
    }

    private func preset(_ body: String) throws -> Preset {
        try Preset.parse(json: #"{"version": 1, "name": "p", \#(body)}"#, origin: "/tmp/p.json")
    }

    func testToneCurveTableIsCountedAsItsVectors() {
        let glsl = FilterCodegen.function(FilterInstance(ToneCurveFilter.declaration), prefix: "f0_")
        XCTAssertEqual(ShaderNeeds(glsl: glsl), ShaderNeeds(uniformVectors: ToneCurveFilter.count, samplers: 0))
    }

    func testDeclarationsAreCountedFromTheGLSL() {
        let glsl = """
        #define TAPS 7
        const int N = 3;
        // uniform vec4 commented[1000];
        uniform highp float a, b[TAPS];
        uniform mat3 m[N];
        uniform sampler2D t1, t2[2];
        /* uniform vec4 also[1000]; */
        uniform Block { vec4 x[100]; };
        """
        XCTAssertEqual(ShaderNeeds(glsl: glsl), ShaderNeeds(uniformVectors: 1 + 7 + 9, samplers: 3))
        XCTAssertTrue(ShaderNeeds(glsl: "uniform float w[2 * 4];").unknown)
    }

    /// 16 fused tone curves failed to link on llvmpipe ("Too many fragment shader default uniform
    /// block components"); 20 must run and equal the chain split into one pass per filter.
    func testTwentyToneCurvesRunAndMatchOnePassPerFilter() throws {
        let chain = try toneCurves(20)
        let fused = try render(chain)
        let split = try render(chain, fuse: false)
        XCTAssertEqual(fused, split)
        // And the plan really needed more than one pass on this GPU or the smallest ES 3 GPU.
        let limits = GPULimits.current()
        let passes = try FrameRenderer.passPlan(chain, limits: limits)
        XCTAssertGreaterThan(passes.count, 1, passes.joined(separator: "\n"))
    }

    /// The plan follows the limits it is given: on a GPU with the ES 3.0 minimum (224 vectors) each
    /// tone curve needs a pass of its own, and the picture is still the same.
    func testSmallGPUSplitsEveryToneCurveAndGivesTheSamePicture() throws {
        let chain = try toneCurves(4)
        let small = GPULimits(uniformVectors: ToneCurveFilter.count + 30, textureUnits: 16, combinedTextureUnits: 32,
                              drawBuffers: 4, maxTextureSize: 2048)
        let passes = try FrameRenderer.passPlan(chain, limits: small)
        XCTAssertEqual(passes.count, 4, passes.joined(separator: "\n"))   // the source with the first curve, then one per curve
        let image = TestImages.pattern
        let out = try ImageRenderer(width: image.width, height: image.height, filters: chain, limits: small).render(image)
        XCTAssertEqual(out, try render(chain, fuse: false))
    }

    func testHundredFilterChainRunsLikeOnePassPerFilter() throws {
        var chain: [FilterInstance] = []
        for i in 0..<100 {
            switch i % 4 {
            case 0: chain.append(try filter("contrast", ["contrast": .float(1.05)]))
            case 1: chain.append(try filter("brightness", ["brightness": .float(-0.01)]))
            case 2: chain.append(try filter("toneCurve", ["rgb": .points([[0, 0.01], [0.5, 0.52], [1, 0.99]])]))
            default: chain.append(try filter("saturation", ["saturation": .float(1.02)]))
            }
        }
        XCTAssertEqual(try render(chain), try render(chain, fuse: false))
    }

    /// Every blend that reads a node takes a sampler: 60 of them cannot share one shader (32 on
    /// llvmpipe, 16 at least). Validate's plan and the renderer agree, and the picture equals the unfused one.
    func testManyNodeReadsSplitBySamplers() throws {
        let steps = [#"{"filter": "sepia", "id": "a"}"#] + Array(repeating: #"{"filter": "multiply", "with": {"node": "a"}}"#, count: 60)
        let p = try preset(#""filters": [\#(steps.joined(separator: ","))]"#)
        XCTAssertTrue(PresetPassCheck.check(p, limits: GPULimits.current()).errors.isEmpty)
        XCTAssertEqual(try render(p.filters), try render(p.filters, fuse: false))
    }

    /// A fan-out graph: 40 branches from the source, lightened together (more samplers than a shader has).
    func testFanOutGraphBeyondOneShadersSamplersRuns() throws {
        var nodes = (0..<40).map { #""n\#($0)": {"filter": "brightness", "brightness": \#(Double($0 % 7) / 200), "inputs": ["source"]}"# }
        var previous = "n0"
        for i in 1..<40 {
            nodes.append(#""b\#(i)": {"filter": "lighten", "inputs": ["\#(previous)", "n\#(i)"]}"#)
            previous = "b\(i)"
        }
        let p = try preset(#""graph": {"nodes": {\#(nodes.joined(separator: ","))}, "output": "\#(previous)"}"#)
        let check = PresetPassCheck.check(p, limits: GPULimits.current())
        XCTAssertTrue(check.errors.isEmpty, "\(check.errors)")
        let out = try render(p.filters)
        // Lighten of every branch: the brightest, +6/200.
        assertMatches(out, tolerance: 1) { x, y in
            let c = TestImages.color(TestImages.pattern, x, y)
            return RGBA(c.rgb + SIMD3(repeating: 6.0 / 200), 1)
        }
    }

    /// One filter that no shader of this GPU can hold: the plan (validate) and the renderer (the run)
    /// refuse it with the same preset error, before anything is compiled.
    func testSingleFilterBeyondTheLimitsIsRefusedByBoth() throws {
        let vectors = GPULimits.current().uniformVectors + 10
        let p = try preset(#"""
        "filters": [{"filter": "shader", "source": "uniform vec4 big[\#(vectors)];\nvoid main() { gl_FragColor = texture2D(inputImageTexture, textureCoordinate) + 0.0 * big[int(textureCoordinate.x * 3.0)]; }"}]
        """#)
        let check = PresetPassCheck.check(p, limits: GPULimits.current())
        XCTAssertEqual(check.errors.count, 1)
        XCTAssertTrue(check.errors.first?.message.contains("no split of the chain can help") ?? false, "\(check.errors)")
        XCTAssertThrowsError(try render(p.filters)) { error in
            XCTAssertEqual((error as? GPUEncodeError)?.exitCode, 67)
            XCTAssertEqual((error as? GPUEncodeError)?.message, check.errors.first?.message)
        }
    }

    func testTooManyPassesAreRefusedAtTheFilterThatCrossesTheBound() throws {
        let toon = try filter("smoothToon")
        XCTAssertThrowsError(try FrameRenderer.passPlan(Array(repeating: toon, count: 86), limits: GPULimits.current())) { error in
            XCTAssertTrue("\(error)".contains("filters[85]"), "\(error)")
        }
        XCTAssertNoThrow(try FrameRenderer.passPlan(Array(repeating: toon, count: 85), limits: GPULimits.current()))
    }
}
