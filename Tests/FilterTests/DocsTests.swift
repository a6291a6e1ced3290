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

    static var presetsPage: String {
        get throws {
            var root = URL(fileURLWithPath: #filePath)
            while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
            return try String(contentsOf: root.deletingLastPathComponent().appendingPathComponent("docs/presets.md"), encoding: .utf8)
        }
    }

    /// docs/presets.md's list of file parameters is FilterDocs.fileParameters() (it called
    /// toneCurve's `acv` `file` when it was written by hand).
    func testPresetsPageListsTheFileParametersAsDeclared() throws {
        let page = try Self.presetsPage
        let start = try XCTUnwrap(page.range(of: "<!-- generated: file-parameters -->")), end = try XCTUnwrap(page.range(of: "<!-- /generated -->"))
        XCTAssertEqual(String(page[start.upperBound..<end.lowerBound]), FilterDocs.fileParameters(),
                       "docs/presets.md's file parameters differ from the declarations: paste FilterDocs.fileParameters() between the markers")
        XCTAssertTrue(FilterDocs.fileParameters().contains("`toneCurve`'s `acv`"))
    }

    /// The custom shader built-ins table of docs/presets.md is ShaderFilter.builtins.
    func testPresetsPageListsTheShaderBuiltins() throws {
        let page = try Self.presetsPage
        let rows = ShaderFilter.builtins.map { "| `\($0.name)` | \($0.type) | \($0.meaning) |" }.joined(separator: "\n")
        XCTAssertTrue(page.contains("| name | type | what |\n|---|---|---|\n" + rows + "\n"), "docs/presets.md's shader built-ins table differs from ShaderFilter.builtins:\n\(rows)")
    }

    /// Every JSON example of docs/presets.md is read by the preset reader without an error (files it
    /// names do not exist here: only "cannot read" errors are allowed, and a lone filter's missing node). A filter example is read as a
    /// chain of that filter, a `"filters": [...]` fragment as a preset with it.
    func testPresetsPageExamplesAreValid() throws {
        let page = try Self.presetsPage
        var examples: [String] = []
        var rest = page[...]
        while let open = rest.range(of: "```json\n"), let close = rest[open.upperBound...].range(of: "```") {
            let block = String(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
            if block.hasPrefix("[") { continue }  // validate --json's output
            if block.hasPrefix("\"filters\"") { examples.append(#"{"version": 2, "name": "doc", "# + block + "}"); continue }
            // Top-level objects, one or several per block.
            var depth = 0, inString = false, escaped = false, start: String.Index? = nil
            for i in block.indices {
                let c = block[i]
                if inString { if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }; continue }
                if c == "\"" { inString = true } else if c == "{" { if depth == 0 { start = i }; depth += 1 } else if c == "}" {
                    depth -= 1
                    if depth == 0, let s = start {
                        let object = String(block[s...i])
                        examples.append(object.contains("\"version\"") ? object : #"{"version": 2, "name": "doc", "filters": ["# + object + "]}")
                    }
                }
            }
        }
        XCTAssertGreaterThan(examples.count, 20)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("docs-examples-\(UUID().uuidString)").path
        for text in examples {
            let check = Preset.check(json: text, origin: folder + "/example.json")
            // A lone filter example reading {"node": "toned"} has no "toned" before it.
            let errors = check.errors.filter { !$0.message.contains("cannot read") && !$0.message.hasPrefix("no earlier filter has id") }
            XCTAssertTrue(errors.isEmpty, "\(text)\n\(errors)")
        }
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
