import Foundation
import XCTest

/// `gpuencode validate`: every error of every file in one run, with positions; warnings apart;
/// a JSON report; exit 0 or 67.
final class ValidateCommandTests: GPUEncodeTestCase {
    private func write(_ name: String, _ text: String) throws -> String {
        let url = scratch(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testEveryErrorWithPositionsAndExit67() throws {
        let bad = try write("bad.json", """
        {"version": 1, "name": "bad",
         "filters": [
           {"filter": "sepiaa"},
           {"filter": "contrast", "contrst": 2},
           {"filter": "saturation", "saturation": 7}
         ]}
        """)
        let good = try write("good.json", #"{"version": 1, "name": "good", "filters": [{"filter": "sepia", "intensity": 1}]}"#)
        let result = try gpuencode(["validate", good, bad])
        XCTAssertEqual(result.status, ExitCode.badPreset, result.summary)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(bad):3:15: error: filters[0].filter:") && $0.contains("did you mean \"sepia\"") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(bad):4:38: error: filters[1].contrst:") && $0.contains("did you mean \"contrast\"") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(bad):5:43: error: filters[2].saturation:") && $0.contains("out of range") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(good):1:") && $0.contains("warning: filters[0].intensity") }, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains(": error: ") }.count, 3)

        // Warnings alone pass.
        XCTAssertEqual(try gpuencode(["validate", good]).status, 0)
    }

    func testJSONReportParses() throws {
        let bad = try write("bad.json", """
        {"version": 1, "name": "g", "graph": {"nodes": {
          "a": {"filter": "sepia", "inputs": ["b"]},
          "b": {"filter": "grayscale", "inputs": ["a"]},
          "spare": {"filter": "screen", "inputs": ["source"]}
        }, "output": "a"}}
        """)
        let result = try gpuencode(["validate", "--json", bad])
        XCTAssertEqual(result.status, ExitCode.badPreset, result.summary)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(report.count, 1)
        XCTAssertEqual(report[0]["file"] as? String, bad)
        XCTAssertEqual(report[0]["valid"] as? Bool, false)
        let errors = try XCTUnwrap(report[0]["errors"] as? [[String: Any]])
        XCTAssertEqual(errors.count, 2, "\(errors)")
        for e in errors {
            XCTAssertEqual(e["severity"] as? String, "error")
            XCTAssertNotNil(e["line"] as? Int)
            XCTAssertNotNil(e["column"] as? Int)
            XCTAssertNotNil(e["path"] as? String)
        }
        XCTAssertTrue(errors.contains { ($0["message"] as? String)?.contains("cycle: a -> b -> a") == true && $0["line"] as? Int == 2 })
        XCTAssertTrue(errors.contains { $0["path"] as? String == "graph.nodes.spare.inputs" && ($0["message"] as? String)?.contains("takes 2 inputs") == true })
    }

    func testShaderCompileErrorHasTheShadersLine() throws {
        let source = "varying highp vec2 textureCoordinate;\\nuniform sampler2D inputImageTexture;\\nvoid main() {\\n  gl_FragColor = texture2D(inputImageTexture, textureCoordinate) * missingThing;\\n}\\n"
        let file = try write("shader.json", #"{"version": 1, "name": "s", "filters": [{"filter": "sepia"}, {"filter": "shader", "source": "\#(source)"}]}"#)
        let result = try gpuencode(["validate", "--gpu", "software", file])
        XCTAssertEqual(result.status, ExitCode.badPreset, result.summary)
        XCTAssertTrue(result.stdout.contains("\(file):1:"), result.stdout)
        XCTAssertTrue(result.stdout.contains("filters[1]"), result.stdout)
        XCTAssertTrue(result.stdout.contains("line 4"), result.stdout)
        XCTAssertTrue(result.stdout.contains("missingThing"), result.stdout)
    }

    func testUnreadableFileIsAnError() throws {
        let result = try gpuencode(["validate", scratch("missing.json").path])
        XCTAssertEqual(result.status, ExitCode.badPreset)
        XCTAssertTrue(result.stdout.contains("missing.json: error: cannot read preset"), result.stdout)
    }
}
