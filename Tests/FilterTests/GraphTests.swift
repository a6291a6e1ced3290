@testable import GPUEncodeKit
import XCTest

/// A graph preset is compiled into a chain with ids and restarts; rendered, it must equal the chain
/// an author would write by hand for the same picture.
final class GraphTests: FilterTestCase {
    private func preset(_ body: String) throws -> Preset {
        try Preset.parse(json: #"{"version": 1, "name": "g", \#(body)}"#, origin: "/tmp/g.json")
    }

    func testBranchAndBlendRendersLikeTheEquivalentChain() throws {
        // source -> blur -> sepia, screened over the untouched source.
        let graph = try preset(#"""
        "graph": {"nodes": {
            "mix": {"filter": "screen", "inputs": ["source", "toned"]},
            "blurred": {"filter": "gaussianBlur", "sigma": 2, "inputs": ["source"]},
            "toned": {"filter": "sepia", "intensity": 0.8, "inputs": ["blurred"]}
          }, "output": "mix"}
        """#)
        let chain = try preset(#"""
        "filters": [
          {"filter": "gaussianBlur", "sigma": 2},
          {"filter": "sepia", "intensity": 0.8, "id": "toned"},
          {"node": "source"},
          {"filter": "screen", "with": {"node": "toned"}}
        ]
        """#)
        XCTAssertEqual(graph.filters.map(\.declaration.name), ["gaussianBlur", "sepia", NodeInputFilter.name, "screen"])
        let a = try render(graph.filters), b = try render(chain.filters)
        assertMatches(a, tolerance: 0) { x, y in TestImages.color(b, x, y) }
        // And the picture is the screen blend of the source with the toned blur.
        let toned = try render([try filter("gaussianBlur", ["sigma": .float(2)]), try filter("sepia", ["intensity": .float(0.8)])])
        assertMatches(a, tolerance: 1) { x, y in
            let s = TestImages.color(TestImages.pattern, x, y), t = TestImages.color(toned, x, y)
            return RGBA(s.rgb + t.rgb - s.rgb * t.rgb, 1)
        }
    }

    func testTwoBranchesFromOneNode() throws {
        // One blur feeds two branches (grayscale, colorInvert) that are multiplied together.
        let graph = try preset(#"""
        "graph": {"nodes": {
            "blurred": {"filter": "gaussianBlur", "sigma": 1, "inputs": ["source"]},
            "gray": {"filter": "grayscale", "inputs": ["blurred"]},
            "inverted": {"filter": "colorInvert", "inputs": ["blurred"]},
            "out": {"filter": "multiply", "inputs": ["gray", "inverted"]}
          }, "output": "out"}
        """#)
        let blurred = try render([try filter("gaussianBlur", ["sigma": .float(1)])])
        let out = try render(graph.filters)
        assertMatches(out, tolerance: 2) { x, y in
            let c = TestImages.color(blurred, x, y)
            let g = (luminance709(c) * 255).rounded() / 255
            let inv = SIMD3(1, 1, 1) - c.rgb
            return RGBA(SIMD3(g, g, g) * inv, 1)
        }
    }

    func testInlineSecondInputAndGenerators() throws {
        let graph = try preset(#"""
        "graph": {"nodes": {
            "tint": {"filter": "multiply", "inputs": ["source", "#ff8000"]}
          }, "output": "tint"}
        """#)
        try assertPointFilter(graph.filters) { c, _ in RGBA(c.x, c.y * 128 / 255, 0, c.w) }
    }
}
