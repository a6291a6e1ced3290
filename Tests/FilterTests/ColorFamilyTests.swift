import GPUEncodeKit
import XCTest

/// ColorFilters.swift: the family list itself.
final class ColorFamilyTests: FilterTestCase {
    func testFamilyListsEveryColourFilterWithDocumentedParameters() throws {
        let names = ColorFilters.all.map(\.name)
        XCTAssertEqual(names, ["sepia", "grayscale", "colorMatrix", "brightness", "contrast", "saturation", "exposure", "gamma",
                               "rgb", "hue", "vibrance", "whiteBalance", "levels", "highlightShadow", "colorInvert", "monochrome",
                               "falseColor", "opacity", "luminanceThreshold", "haze", "colorControls", "hueAdjust",
                               "adaptiveThreshold"])
        for d in ColorFilters.all {
            XCTAssertEqual(d.category, .color, d.name)
            XCTAssertNotNil(FilterRegistry.named(d.name), d.name)
            XCTAssertFalse(d.summary.isEmpty, d.name)
            XCTAssertTrue(d.isPoint || d.name == "adaptiveThreshold", "\(d.name) should be a point filter")
            for p in d.parameters {
                XCTAssertFalse(p.summary.isEmpty, "\(d.name).\(p.name)")
                switch (p.type, p.defaultValue) {
                case (.float(let r), .float(let v)):
                    XCTAssertTrue(r.contains(v), "\(d.name).\(p.name) default \(v) outside \(r)")
                case (.vector(let n, let r), .vector(let v)):
                    XCTAssertEqual(v.count, n, "\(d.name).\(p.name)")
                    XCTAssertTrue(v.allSatisfy(r.contains), "\(d.name).\(p.name) default \(v) outside \(r)")
                default:
                    break
                }
            }
            XCTAssertNil(d.check?(FilterInstance(d)), "\(d.name): defaults fail its check")
        }
    }

    func testAChainOfColourFiltersFusesLikeSeparatePasses() throws {
        let chain = [
            try filter("exposure", ["exposure": .float(0.3)]),
            try filter("hue", ["hue": .float(30)]),
            try filter("vibrance", ["vibrance": .float(0.5)]),
            try filter("levels", ["gamma": .vector([1.2, 1, 0.8])]),
            try filter("monochrome", ["intensity": .float(0.3)]),
        ]
        let fused = try render(chain)
        let unfused = try render(chain, fuse: false)
        assertMatches(fused, tolerance: 1, "fused vs unfused") { x, y in TestImages.color(unfused, x, y) }
    }
}
