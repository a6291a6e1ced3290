@testable import GPUEncodeKit
import Foundation
import XCTest

/// The preset format beyond plain chains: graphs, collected errors, warnings, extends, encode,
/// migration, show output and the schema.
final class PresetFormatTests: XCTestCase {
    // Presets load in this process: their pictures and movies decode through the FFmpeg decoder
    // the command line installs at start.
    override class func setUp() {
        super.setUp()
        FilterMedia.install(FFmpegFilterMedia())
    }

    private func check(_ json: String, origin: String = "p.json") -> PresetCheck { Preset.check(json: json, origin: origin) }

    private func scratchDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("preset-format-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    func testGraphCompilesToChainWithIdsAndRestarts() throws {
        let p = try Preset.parse(json: """
        {"version": 1, "name": "g", "graph": {"nodes": {
          "blurred": {"filter": "gaussianBlur", "sigma": 4, "inputs": ["source"]},
          "mix": {"filter": "screen", "inputs": ["source", "blurred"]}
        }, "output": "mix"}}
        """, origin: "g.json")
        XCTAssertEqual(p.filters.map(\.declaration.name), ["gaussianBlur", NodeInputFilter.name, "screen"])
        XCTAssertEqual(p.filters.map(\.id), ["blurred", nil, "mix"])
        XCTAssertEqual(p.filters[1].string("node"), "source")
        XCTAssertEqual(p.filters[2].nodeReference, "blurred")
        XCTAssertEqual(p.filters[0].values["sigma"], .float(4))
    }

    func testGraphErrorsNameTheNodes() {
        let r = check("""
        {"version": 1, "name": "g", "graph": {"nodes": {
          "a": {"filter": "sepia", "inputs": ["b"]},
          "b": {"filter": "grayscale", "inputs": ["a"]},
          "c": {"filter": "screen", "inputs": ["a"]},
          "d": {"filter": "sepia", "inputs": ["source", "a"]},
          "e": {"filter": "sepia", "inputs": ["blured"]},
          "blurred": {"filter": "gaussianBlur", "inputs": ["source"]}
        }, "output": "c"}}
        """)
        let text = r.errors.map(\.description)
        XCTAssertNil(r.preset)
        func has(_ parts: String...) {
            XCTAssertTrue(text.contains { t in parts.allSatisfy { t.contains($0) } }, "no error with \(parts) in \(text)")
        }
        has("2:8", "graph.nodes.a", "cycle: a -> b -> a")
        has("4:39", "graph.nodes.c.inputs", "screen is a blend and takes 2 inputs", "found 1")
        has("5:38", "graph.nodes.d.inputs", "sepia takes 1 input, found 2")
        has("6:39", "graph.nodes.e.inputs[0]", "no node named \"blured\"", "did you mean \"blurred\"")
        XCTAssertEqual(r.errors.count, 4, "\(text)")
    }

    func testUnusedNodeIsAWarningNotAnError() throws {
        let r = check("""
        {"version": 1, "name": "g", "graph": {"nodes": {
          "spare": {"filter": "grayscale", "inputs": ["source"]},
          "out": {"filter": "sepia", "inputs": ["source"]}
        }, "output": "out"}}
        """)
        XCTAssertTrue(r.errors.isEmpty, "\(r.errors)")
        XCTAssertNotNil(r.preset)
        XCTAssertEqual(r.preset?.filters.map(\.declaration.name), ["sepia"])
        XCTAssertEqual(r.warnings.count, 1)
        XCTAssertEqual(r.warnings.first?.path, "graph.nodes.spare")
        XCTAssertEqual(r.warnings.first?.line, 2)
        XCTAssertTrue(r.warnings.first?.message.contains("not used") ?? false)
    }

    func testEveryErrorIsReportedInFileOrder() {
        let r = check("""
        {"version": 1, "name": "m", "descripton": "x",
         "filters": [
           {"filter": "sepiaa"},
           {"filter": "contrast", "contrst": 2},
           {"filter": "saturation", "saturation": 7, "id": "s"},
           {"filter": "screen", "with": {"node": "nope"}}
         ],
         "encode": {"crf": 99}}
        """)
        let got = r.errors.map { "\($0.line):\($0.column) \($0.path)" }
        XCTAssertEqual(got, ["1:43 descripton", "3:15 filters[0].filter", "4:38 filters[1].contrst",
                             "5:43 filters[2].saturation", "6:42 filters[3].with.node", "8:20 encode.crf"])
        XCTAssertTrue(r.errors[0].message.contains("did you mean \"description\""))
        XCTAssertTrue(r.errors[1].message.contains("did you mean \"sepia\""))
        XCTAssertTrue(r.errors[2].message.contains("did you mean \"contrast\""))
        XCTAssertTrue(r.errors[3].message.contains("out of range 0...2"))
    }

    func testDefaultValueAndUnusedIdWarnings() {
        let r = check(#"{"version": 1, "name": "w", "filters": [{"filter": "sepia", "intensity": 1, "id": "x"}]}"#)
        XCTAssertTrue(r.errors.isEmpty)
        XCTAssertEqual(Set(r.warnings.map(\.path)), ["filters[0].intensity", "filters[0].id"])
    }

    func testChainRestartStep() throws {
        let p = try Preset.parse(json: #"{"version": 1, "name": "r", "filters": [{"filter": "sepia", "id": "t"}, {"filter": "grayscale"}, {"node": "t"}]}"#, origin: "r.json")
        XCTAssertEqual(p.filters.last?.declaration.name, NodeInputFilter.name)
        XCTAssertThrowsError(try Preset.parse(json: #"{"version": 1, "name": "r", "filters": [{"node": "later"}]}"#, origin: "r.json"))
    }

    func testEncodeSettings() throws {
        let p = try Preset.parse(json: #"{"version": 1, "name": "e", "filters": [], "encode": {"crf": 18, "x264Preset": "slow", "tune": "film", "keyint": 12}}"#, origin: "e.json")
        // Version 1's x264Preset is read as speed (and named as written in errors).
        XCTAssertEqual(p.encode, PresetEncodeSettings(speed: "slow", crf: 18, keyint: 12, tune: "film"))
        let r = check(#"{"version": 1, "name": "e", "filters": [], "encode": {"x264Preset": "slwo", "keyint": 0, "bitrat": 1}}"#)
        XCTAssertEqual(r.errors.map(\.path), ["encode.x264Preset", "encode.keyint", "encode.bitrat"])
        XCTAssertTrue(r.errors[0].message.contains("did you mean \"slow\""), r.errors[0].message)
        let v2 = check(#"{"version": 2, "name": "e", "filters": [], "encode": {"speed": "slwo", "x264Preset": "slow", "codec": "av1", "crf": 0, "tune": "film"}}"#)
        XCTAssertEqual(v2.errors.map(\.path), ["encode.speed", "encode.x264Preset", "encode.crf"])
        XCTAssertTrue(v2.errors[1].message.contains("called \"speed\""), v2.errors[1].message)
    }

    /// Version 2's "encode" takes every preset setting of the command line under its key, with
    /// its rule and JSON type; `presets show` writes them back; machine settings are refused.
    func testEncodeBlockTakesThePresetSettings() throws {
        let json = #"{"version": 2, "name": "e", "filters": [], "encode": {"codec": "hevc", "speed": "slow", "crf": 22.5, "bitrate": "4M", "keyint": 48, "tune": "grain", "profile": "main", "x265Params": "bframes=2", "svtav1Params": "tile-rows=1", "audio": "opus", "audioBitrate": 96000, "stripMetadata": true, "noLocation": false}}"#
        let p = try Preset.parse(json: json, origin: "e.json")
        var expected = PresetEncodeSettings(codec: .hevc, speed: "slow", crf: 22.5, bitrate: 4_000_000, keyint: 48, tune: "grain", profile: "main")
        expected.x265Params = "bframes=2"
        expected.svtav1Params = "tile-rows=1"
        expected.audio = .opus
        expected.audioBitrate = 96_000
        expected.stripMetadata = true
        expected.dropLocation = false
        XCTAssertEqual(p.encode, expected)
        let back = try Preset.parse(json: PresetWriter.text(p), origin: "show.json")
        XCTAssertEqual(back.encode, expected, "presets show writes every setting back")
        XCTAssertTrue(EncodeSetting.presetKeys.allSatisfy { PresetSchema.text().contains("\"\($0)\"") })

        let r = check(#"{"version": 2, "name": "e", "filters": [], "encode": {"crf": "20", "threads": 2, "encoder": "nvenc", "stripMetadata": 1, "codec": "hevc_nvenc", "audioTracks": [1]}}"#)
        XCTAssertEqual(r.errors.map(\.path), ["encode.crf", "encode.threads", "encode.encoder", "encode.stripMetadata", "encode.codec", "encode.audioTracks"])
        XCTAssertTrue(r.errors[0].message.contains("expected a number"), r.errors[0].message)
        XCTAssertTrue(r.errors[4].message.contains("--encoder nvenc"), r.errors[4].message)
        // Without a codec, crf is checked against the widest scale (AV1's 63); with one, against its own.
        XCTAssertTrue(check(#"{"version": 2, "name": "e", "filters": [], "encode": {"crf": 60}}"#).errors.isEmpty)
        XCTAssertEqual(check(#"{"version": 2, "name": "e", "filters": [], "encode": {"crf": 64}}"#).errors.map(\.path), ["encode.crf"])
        XCTAssertEqual(check(#"{"version": 2, "name": "e", "filters": [], "encode": {"codec": "h264", "crf": 60}}"#).errors.map(\.path), ["encode.crf"])
    }

    func testExtendsOverridesByIdAndIndex() throws {
        let dir = try scratchDirectory()
        try """
        {"version": 1, "name": "base", "description": "the base", "tags": ["warm"], "encode": {"crf": 20, "keyint": 30},
         "filters": [{"filter": "sepia", "intensity": 0.5, "id": "tone"}, {"filter": "contrast", "contrast": 1.5}, {"node": "tone"}]}
        """.write(to: dir.appendingPathComponent("base.json"), atomically: true, encoding: .utf8)
        let childPath = dir.appendingPathComponent("child.json").path
        try """
        {"version": 1, "name": "child", "extends": "base.json", "encode": {"crf": 16},
         "parameters": {"tone": {"intensity": 0.25}, "1": {"contrast": 2}}}
        """.write(toFile: childPath, atomically: true, encoding: .utf8)
        let p = try Preset.loadFile(childPath)
        XCTAssertEqual(p.name, "child")
        XCTAssertEqual(p.description, "the base")
        XCTAssertEqual(p.tags, ["warm"])
        XCTAssertEqual(p.encode, PresetEncodeSettings(crf: 16, keyint: 30))
        XCTAssertEqual(p.filters[0].values["intensity"], .float(0.25))
        XCTAssertEqual(p.filters[0].id, "tone")
        XCTAssertEqual(p.filters[1].values["contrast"], .float(2))
        XCTAssertEqual(p.ancestry, [dir.appendingPathComponent("base.json").path])

        // Built-in parents, and errors in overrides name the child's file and the key.
        let t = try Preset.parse(json: #"{"version": 1, "name": "t", "extends": "toaster", "parameters": {"1": {"opacity": 0.5}}}"#, origin: "t.json")
        XCTAssertEqual(t.filters[1].values["opacity"], .float(0.5))
        XCTAssertNotNil(t.filters[1].overlay.first)
        let bad = check(#"{"version": 1, "name": "t", "extends": "toastr", "parameters": {}}"#)
        XCTAssertTrue(bad.errors.first?.message.contains("did you mean \"toaster\"") ?? false, "\(bad.errors)")
        let badKey = check(#"{"version": 1, "name": "t", "extends": "toaster", "parameters": {"9": {"opacity": 0.5}, "1": {"opacty": 1}}}"#)
        XCTAssertEqual(badKey.errors.map(\.path), ["parameters.9", "parameters.1.opacty"])
    }

    func testExtendsCycleNamesTheFiles() throws {
        let dir = try scratchDirectory()
        try #"{"version": 1, "name": "a", "extends": "b.json"}"#.write(to: dir.appendingPathComponent("a.json"), atomically: true, encoding: .utf8)
        try #"{"version": 1, "name": "b", "extends": "./a.json"}"#.write(to: dir.appendingPathComponent("b.json"), atomically: true, encoding: .utf8)
        let a = dir.appendingPathComponent("a.json").path, b = dir.appendingPathComponent("b.json").path
        XCTAssertThrowsError(try Preset.loadFile(a)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("extends cycle: \(a) -> \(b) -> \(a)"), text)
            XCTAssertEqual((error as? GPUEncodeError)?.exitCode, 67)
        }
    }

    func testVersion0IsUpgraded() throws {
        let v0 = """
        {"version": 0, "name": "old", "filters": [
          {"type": "GPUImageGaussianBlurFilter", "blurRadiusInPixels": 3},
          {"type": "GPUImageColorMatrixFilter", "colorMatrix": [[0,1,0,0],[1,0,0,0],[0,0,1,0],[0,0,0,1]]},
          {"type": "GPUImageScreenBlendFilter", "with": {"type": "GPUImageSolidColorGenerator", "color": "#204060"}},
          {"type": "GPUImageVignetteFilter", "vignetteEnd": 0.9}
        ]}
        """
        let p = try Preset.parse(json: v0, origin: "old.json")
        XCTAssertEqual(p.version, 0)
        XCTAssertEqual(p.filters.map(\.declaration.name), ["gaussianBlur", "colorMatrix", "screen", "vignette"])
        XCTAssertEqual(p.filters[0].values["sigma"], .float(3))
        XCTAssertEqual(p.filters[1].values["matrix"]?.doubles.prefix(2), [0, 1])
        XCTAssertEqual(p.filters[2].overlay.first?.declaration.name, "solidColor")
        XCTAssertEqual(p.filters[3].values["end"], .float(0.9))
        // An unknown GPUImage class keeps its position and gets a suggestion.
        let r = check(#"{"version": 0, "name": "old", "filters": [{"type": "GPUImageSepaFilter"}]}"#)
        XCTAssertEqual(r.errors.first?.path, "filters[0].filter")
        XCTAssertEqual(r.errors.first?.column, 52)
        XCTAssertTrue(r.errors.first?.message.contains("did you mean \"sepia\"") ?? false)
        // The written upgrade is the current version and loads to the same chain.
        let text = try PresetFile.upgrade(v0, origin: "old.json")
        XCTAssertTrue(text.contains("\"version\": \(Preset.currentVersion)"))
        XCTAssertFalse(text.contains("GPUImage"))
        let q = try Preset.parse(json: text, origin: "new.json")
        XCTAssertEqual(q.filters.map(\.values), p.filters.map(\.values))
        // Newer versions are refused clearly.
        XCTAssertTrue(check(#"{"version": 3, "name": "n", "filters": []}"#).errors.first?.message.contains("newer gpuencode") ?? false)
    }

    func testShowOutputLoadsToTheSameFilters() throws {
        for name in Preset.builtinNames + ["graph"] {
            let p: Preset
            if name == "graph" {
                p = try Preset.parse(json: """
                {"version": 1, "name": "graph", "graph": {"nodes": {
                  "b": {"filter": "boxBlur", "inputs": ["source"]},
                  "k": {"filter": "sepia", "intensity": {"keyframes": [[0, 0], [2, 1]], "easing": "smooth"}, "inputs": ["source"]},
                  "m": {"filter": "softLight", "inputs": ["k", "b"]}}, "output": "m"}}
                """, origin: "graph.json")
            } else {
                p = try Preset.load(name)
            }
            let text = PresetWriter.text(p)
            let q = try Preset.parse(json: text, origin: "builtin:\(name)")
            XCTAssertEqual(q.filters.map(\.declaration.name), p.filters.map(\.declaration.name), name)
            XCTAssertEqual(q.filters.map(\.id), p.filters.map(\.id), name)
            for (a, b) in zip(q.filters, p.filters) {
                for (key, v) in b.values {
                    // presets show leaves out values at their default: they load as the default.
                    var w = a.values[key] ?? a.declaration.parameter(named: key)!.defaultValue
                    // A built-in's embedded file is written builtin:assets/NAME: the same file.
                    if case .string(let path) = w, path.hasPrefix(ResourceContext.builtinPrefix) {
                        w = .string(String(path.dropFirst(ResourceContext.builtinPrefix.count)))
                    }
                    if case .vector(let x) = v, case .vector(let y) = w {
                        XCTAssertEqual(x.count, y.count)
                        for (s, t) in zip(x, y) { XCTAssertEqual(s, t, accuracy: 1e-9, "\(name).\(key)") }
                    } else {
                        XCTAssertEqual(w, v, "\(name).\(key)")
                    }
                }
            }
        }
    }

    func testJSONWriterIsStableAndParsesBack() throws {
        let value = JSONValue.object([("b", .number(1.5)), ("a", .array([.number(1), .string("x\"y\n")])), ("c", .object([]))])
        let text = JSONWriter.write(value)
        XCTAssertEqual(text, "{\n  \"b\": 1.5,\n  \"a\": [1, \"x\\\"y\\n\"],\n  \"c\": {}\n}\n")
        let back = try JSONParser.parse(text)
        XCTAssertEqual(back.members.map(\.key), ["b", "a", "c"])
    }

    /// presets/schema.json is generated from the declarations; regenerate it with
    /// `gpuencode presets schema -o presets/schema.json -y`.
    func testSchemaIsUpToDateAndValidJSON() throws {
        var root = URL(fileURLWithPath: #filePath)
        while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
        let file = root.deletingLastPathComponent().appendingPathComponent("presets/schema.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertEqual(text, PresetSchema.text(), "presets/schema.json is stale: run `.build/debug/gpuencode presets schema -o presets/schema.json -y`")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        XCTAssertEqual(object?["$schema"] as? String, "https://json-schema.org/draft/2020-12/schema")
        let defs = object?["$defs"] as? [String: Any]
        let filters = defs?["filters"] as? [String: Any]
        XCTAssertEqual(Set(filters?.keys.map { $0 } ?? []), Set(FilterRegistry.all.map(\.name)))
        let sepia = (filters?["sepia"] as? [String: Any])?["properties"] as? [String: Any]
        XCTAssertNotNil(sepia?["intensity"])
    }
}
