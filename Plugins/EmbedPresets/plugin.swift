import Foundation
import PackagePlugin

/// Compiles presets/*.json into the library as string literals, so built-in presets need no
/// files at run time and a statically linked binary carries them.
@main
struct EmbedPresets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let presetsDir = context.package.directoryURL.appending(path: "presets")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: presetsDir.path())) ?? []
        let inputs = names.filter { $0.hasSuffix(".json") && $0 != "schema.json" }.sorted()
            .map { presetsDir.appending(path: $0) }
        let assetsDir = presetsDir.appending(path: "assets")
        let assetNames = (try? FileManager.default.contentsOfDirectory(atPath: assetsDir.path())) ?? []
        let assets = assetNames.filter { !$0.hasPrefix(".") }.sorted().map { assetsDir.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuiltinPresets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) presets",
                executable: try context.tool(named: "PresetEmbedder").url,
                arguments: [output.path()] + (inputs + assets).map { $0.path() },
                inputFiles: inputs + assets,
                outputFiles: [output]
            )
        ]
    }
}
