// Usage: PresetEmbedder OUTPUT.swift FILE...
// Writes a Swift source file holding each preset's JSON text keyed by its file stem, and every other
// file (presets/assets: LUTs, images, shaders) as base64 keyed by "assets/NAME". Base64 in a string
// literal compiles quickly where a large array literal would not.
import Foundation

let args = CommandLine.arguments
guard args.count >= 2 else {
    FileHandle.standardError.write("usage: PresetEmbedder OUTPUT.swift PRESET.json...\n".data(using: .utf8)!)
    exit(2)
}
var source = "// Generated from presets/*.json by the EmbedPresets plugin. Do not edit.\n"
source += "enum BuiltinPresetSources {\n    static let all: [(name: String, json: String)] = [\n"
let paths = args.dropFirst(2).sorted()
for path in paths where path.hasSuffix(".json") {
    let url = URL(fileURLWithPath: path)
    let name = url.deletingPathExtension().lastPathComponent
    let text = try String(contentsOf: url, encoding: .utf8)
    // A raw string with enough #s that the JSON cannot terminate it early.
    var hashes = "#"
    while text.contains("\"" + hashes) { hashes += "#" }
    source += "        (\(String(reflecting: name)), \(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)),\n"
}
source += "    ]\n\n    static let assets: [String: String] = [\n"
for path in paths where !path.hasSuffix(".json") {
    let url = URL(fileURLWithPath: path)
    let data = try Data(contentsOf: url)
    source += "        \"assets/\(url.lastPathComponent)\": \"\(data.base64EncodedString())\",\n"
}
source += paths.contains(where: { !$0.hasSuffix(".json") }) ? "    ]\n}\n" : "    :]\n}\n"
try source.write(to: URL(fileURLWithPath: args[1]), atomically: true, encoding: .utf8)
