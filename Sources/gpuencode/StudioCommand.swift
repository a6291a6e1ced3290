import ArgumentParser
import Dispatch
import GPUEncodeKit
import GPUEncodeStudio
import Glibc

struct StudioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "Edit a preset in the browser: a split view of the original and the look, live sliders, scrubbing, save.",
        usage: "gpuencode studio <input> [--preset <name|file>] [--port <n>] [<options>]",
        discussion: """
        Starts a web server on 127.0.0.1 and prints the address to open; the page shows the frame at \
        the scrubber's time rendered by the same GPU pipeline as a transcode. Drag across the picture to \
        move the divider between the original (or --compare-with's preset) and the preset; every slider, \
        colour, choice and file control comes from the filter declarations (`gpuencode filters NAME`), and \
        the JSON beside them can be edited directly, with errors shown at their line and column. Save \
        writes the preset atomically into its own folder (or an --allow-path folder).

        The address carries a random token that every request must show, so other local users and web \
        pages cannot use the server; it listens on 127.0.0.1 only. Ctrl-C stops it.

        Keys on the page: Left/Right step a frame (Shift: a second), Space plays the range, I and O set \
        the range's start and end.

        EXAMPLES:
          gpuencode studio in.mp4 --preset ./look.json     (Save writes look.json)
          gpuencode studio in.mp4 --preset sepia           (Save writes ./sepia.json)
          gpuencode studio in.mp4 --preset ./new.json      (created on the first Save)
          gpuencode studio in.mp4 --preset ./look.json --compare-with mono --port 8080
        """
    )

    @Argument(help: "A movie, or a PNG/JPEG still image.")
    var input: String

    @Option(name: .long, help: ArgumentHelp("The preset to edit: a file (created on the first Save if it does not exist) or a built-in or user preset name to start from.", valueName: "name|file"), completion: .presets)
    var preset: String = "identity"

    @Option(name: .customLong("compare-with"), help: ArgumentHelp("Show this preset on the other side of the divider instead of the original.", valueName: "name|file"))
    var compareWith: String?

    @Option(name: .customLong("preset-dir"), help: ArgumentHelp("Also look for presets in this folder (repeatable).", valueName: "dir"))
    var presetDirs: [String] = []

    @OptionGroup(title: "Files presets may read (and the studio may save into)") var readAccess: AllowPathOptions

    @Option(help: ArgumentHelp("The time shown first, in seconds (default: 10% of the way in).", valueName: "seconds"))
    var at: Double?

    @Option(help: ArgumentHelp("The port to listen on, on 127.0.0.1 (default 0: a free one, printed).", valueName: "n"))
    var port: Int?

    @OptionGroup var gpuOptions: GPUOptions

    func validate() throws {
        guard (0...65535).contains(port ?? 0) else { throw ValidationError("--port must be from 0 to 65535") }
        if let at, !Preview.timeRange.contains(at) { throw ValidationError("--at must be a time from 0 seconds") }
    }

    func run() throws {
        do {
            let allowed = try readAccess.allowed()
            let library = PresetLibrary(commandLine: presetDirs, allowed: allowed)
            let edited = try text(of: preset, library: library, creating: true)
            let compared = try compareWith.map { try text(of: $0, library: library, creating: false) }
            let options = Studio.Options(input: input, presetText: edited.text, presetName: edited.name, presetPath: edited.path,
                                         compareText: compared?.text, compareName: compared?.name, at: at, port: port ?? 0,
                                         allowed: allowed, gpu: try gpuOptions.selection())
            try serve(options)
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
    }

    /// Runs the server to its end on the concurrency runtime's threads while this one waits.
    private func serve(_ options: Studio.Options) throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        Task {
            do {
                try await Studio.serve(options) { url in
                    print("gpuencode studio: \(url)")
                    print("Open it in a browser on this machine; Ctrl-C stops.")
                    fflush(stdout)
                }
            } catch { failure = error }
            done.signal()
        }
        done.wait()
        if let failure {
            if let e = failure as? GPUEncodeError { throw e }
            // The bind failing (port in use, no permission) is the usual one.
            throw GPUEncodeError(.usage, "cannot serve on 127.0.0.1:\(options.port): \(failure)")
        }
    }

    /// A preset's text to edit: the file's (a template when `creating` and it does not exist yet),
    /// or a built-in's source; user presets by name are files.
    private func text(of spec: String, library: PresetLibrary, creating: Bool) throws -> (text: String, name: String, path: String?) {
        let origin = try library.resolve(spec)
        if origin.hasPrefix("builtin:") {
            let name = String(origin.dropFirst("builtin:".count))
            return (Preset.builtinSource(name) ?? "", name, nil)
        }
        let name = String(splitPath(origin).base.dropLast(origin.hasSuffix(".json") ? 5 : 0))
        if creating && !fileExists(origin) {
            guard isDirectory(splitPath(absolutePath(origin)).dir) else {
                throw GPUEncodeError(.usage, path: origin, "no such folder for the new preset")
            }
            return ("{\n  \"version\": 2,\n  \"name\": \(JSONWriter.quote(name)),\n  \"filters\": []\n}\n", name, origin)
        }
        // A FIFO, a folder or a device is a preset error of one line (67), as for --preset elsewhere.
        return (try PresetFile.read(origin), name, origin)
    }
}
