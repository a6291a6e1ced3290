import ArgumentParser
import GPUEncodeKit
import Glibc

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List, show, upgrade and describe presets.",
        discussion: """
        Presets are found by name in the --preset-dir folders (in the order given), then in \
        $XDG_CONFIG_HOME/gpuencode/presets (default ~/.config/gpuencode/presets), then among the \
        built-ins: NAME.json, first found wins, so a user preset can shadow a built-in one. \
        docs/presets.md describes the format.

        EXAMPLES:
          gpuencode presets                              every preset, where it comes from, what it does
          gpuencode presets show toaster                 the resolved preset as JSON
          gpuencode presets upgrade old.json -o new.json rewrite an old-version preset as the current version
          gpuencode presets schema > presets/schema.json the JSON Schema of the format
        """,
        subcommands: [List.self, Show.self, Upgrade.self, Schema.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List built-in and user presets (the default).")

        @Option(name: .customLong("preset-dir"), help: ArgumentHelp("A folder of NAME.json presets searched before the user folder; repeatable.", valueName: "dir"))
        var presetDirs: [String] = []

        @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

        func run() throws {
            let allowed: AllowedPaths
            do { allowed = try readAccess.allowed() } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
            let library = PresetLibrary(commandLine: presetDirs, allowed: allowed)
            let entries = library.entries()
            let sources = entries.map { $0.isBuiltin ? "built-in" : $0.origin }
            let nameWidth = (entries.map(\.name.count).max() ?? 0) + 2
            let sourceWidth = min((sources.map(\.count).max() ?? 0), 48) + 2
            let order = (library.directories + ["built-in"]).joined(separator: ", then ")
            print("Presets (a name is looked up in \(order)):")
            for (entry, source) in zip(entries, sources) {
                var note = ""
                if let by = entry.shadowedBy {
                    note = " [shadowed by \(by.hasPrefix("builtin:") ? "the built-in" : by)]"
                } else if !entry.isBuiltin && Preset.builtinNames.contains(entry.name) {
                    note = " [shadows the built-in \(entry.name)]"
                }
                print("  \(entry.name.padding(nameWidth))\(source.padding(sourceWidth))\(entry.description)\(note)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print a preset as the program runs it: JSON, version \(Preset.currentVersion), chain form.",
            usage: "gpuencode presets show <name|file> [--preset-dir <dir> ...] [<options>]",
            discussion: """
            `extends` is applied, old versions are upgraded, every parameter that differs from its \
            default is written with its value, and a graph is compiled into its chain (nodes keep their \
            names as ids; {"node": NAME} steps bring back an earlier node's picture). File names (LUTs, \
            images, curves, shader files) are made absolute, so the output loads as a preset of its own \
            from any folder (with --allow-path for the folder of those files).
            """
        )

        @Argument(help: "A preset name or a path to a preset file.", completion: .presets)
        var name: String

        @Option(name: .customLong("preset-dir"), help: ArgumentHelp("A folder of NAME.json presets searched before the user folder; repeatable.", valueName: "dir"))
        var presetDirs: [String] = []

        @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

        func run() throws {
            do {
                let preset = try PresetLibrary(commandLine: presetDirs, allowed: try readAccess.allowed()).load(name)
                print(PresetWriter.text(preset), terminator: "")
            } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
        }
    }

    struct Upgrade: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade",
            abstract: "Rewrite a preset of an older format version as version \(Preset.currentVersion).",
            discussion: "The preset is checked first; the upgraded JSON goes to stdout, or to -o FILE."
        )

        @Argument(help: "The preset file.")
        var file: String

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write here instead of stdout.", valueName: "file"))
        var output: String?

        @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
        var overwrite = false

        func run() throws {
            do {
                let text = try PresetFile.upgrade(try PresetFile.read(file), origin: file)
                if let output {
                    try PresetFile.write(text, to: output, overwrite: overwrite)
                } else {
                    print(text, terminator: "")
                }
            } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
        }
    }

    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema",
            abstract: "Print the JSON Schema (draft 2020-12) of the preset format, made from the filter declarations.",
            discussion: "presets/schema.json holds it: gpuencode presets schema -o presets/schema.json -y"
        )

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write here instead of stdout.", valueName: "file"))
        var output: String?

        @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
        var overwrite = false

        func run() throws {
            let text = PresetSchema.text()
            guard let output else { print(text, terminator: ""); return }
            do { try PresetFile.write(text, to: output, overwrite: overwrite) } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
        }
    }
}
