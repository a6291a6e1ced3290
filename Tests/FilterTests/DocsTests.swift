import Foundation
import GPUEncodeKit
import XCTest

final class DocsTests: XCTestCase {
    /// docs/filters.md is generated from the declarations; a filter added or changed without
    /// regenerating it fails here (regenerate: `gpuencode filters --markdown > docs/filters.md`).
    func testFilterReferenceIsUpToDate() throws {
        var root = URL(fileURLWithPath: #filePath)
        while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
        let file = root.deletingLastPathComponent().appendingPathComponent("docs/filters.md")
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertEqual(text, FilterDocs.markdown(), "docs/filters.md is stale: run `.build/debug/gpuencode filters --markdown > docs/filters.md`")
    }

    /// Every filter documents itself and its parameters.
    func testEveryFilterAndParameterHasASummary() {
        var names = Set<String>()
        for d in FilterRegistry.all {
            XCTAssertTrue(names.insert(d.name).inserted, "\(d.name) is declared twice")
            XCTAssertFalse(d.summary.isEmpty, d.name)
            XCTAssertTrue(d.name.first!.isLowercase && !d.name.contains("_"), "\(d.name) is not lowerCamelCase")
            for p in d.parameters { XCTAssertFalse(p.summary.isEmpty, "\(d.name).\(p.name)") }
        }
    }
}
