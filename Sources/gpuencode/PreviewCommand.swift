import ArgumentParser
import CShim
import GPUEncodeKit
import Glibc

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Render one filtered frame of a movie (or a still image) to a PNG or JPEG.",
        discussion: """
        The frame goes through exactly what a transcode does to it (colour conversion, rotation, the \
        preset's filters), so the picture is what the video will look like.

        EXAMPLES:
          gpuencode preview in.mp4 --preset sepia -o sepia.png
          gpuencode preview in.mp4 --preset ./look.json --at 12.5 -o look.jpg
          gpuencode preview photo.jpg --preset toaster -o toaster.png
          gpuencode preview in.mp4 --preset sepia --compare -o split.png         (original | sepia)
          gpuencode preview in.mp4 --preset noir --compare-with mono --split-angle 90 -o vs.png
          gpuencode preview in.mp4 --preset ./look.json --watch -o look.png      (re-render on every save)

        --compare shows the original on the left and the preset on the right, divided at --split \
        (0...1) by a line at --split-angle degrees (0 vertical, 90 horizontal: original on top), each \
        side labelled. --watch keeps running after the first picture: whenever the preset file, a \
        file it reads (LUT, picture, shader) or the input changes, the picture is rendered again and \
        one line is printed; a broken preset prints its error and the watch goes on. Ctrl-C ends it \
        (exit 0).
        """
    )

    @Argument(help: "A movie, or a PNG/JPEG still image.")
    var input: String

    @Option(name: .long, help: ArgumentHelp("A built-in preset name or a path to a preset JSON file.", valueName: "name|file"), completion: .presets)
    var preset: String = "identity"

    @Option(name: .customLong("preset-dir"), help: ArgumentHelp("Also look for presets in this folder (repeatable).", valueName: "dir"))
    var presetDirs: [String] = []

    @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

    @OptionGroup var inlineFilters: FilterOptions

    func library() throws -> PresetLibrary { PresetLibrary(commandLine: presetDirs, allowed: try readAccess.allowed()) }

    @Option(help: ArgumentHelp("Time of the frame in seconds from the start (the first frame at or after it). Default: 10% of the way into the video, a more typical frame than the first, which is often black (the first frame when the length is unknown).", valueName: "seconds"))
    var at: Double?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The picture to write: .png or .jpg.", valueName: "file"))
    var output: String

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
    var overwrite = false

    @OptionGroup var gpuOptions: GPUOptions

    @Flag(name: .shortAndLong, help: "Print the frame time and the renderer.")
    var verbose = false

    @OptionGroup var comparison: CompareOptions

    @Flag(help: "Keep running: render again whenever the preset or a file it reads changes (polled 4 times a second); Ctrl-C stops.")
    var watch = false

    func validate() throws {
        try comparison.validate(animate: false)
        if let at, !Preview.timeRange.contains(at) {
            throw ValidationError("--at must be a time from 0 to \(roundedSeconds(Preview.timeRange.upperBound, places: 0)) seconds")
        }
        guard ImageIO.isImagePath(output) else { throw ValidationError("-o must name a .png or .jpg file") }
    }

    func run() throws {
        MediaLog.setLevel(verbose: verbose)
        do {
            let selection = try gpuOptions.selection()
            if !overwrite && access(output, F_OK) == 0 { throw GPUEncodeError(.outputCreate, path: output, "already exists (use -y to overwrite)") }
            if watch {
                try Watcher(command: self, gpu: selection).run()
                return
            }
            let preset = try loadPreset()
            let session = try Preview.Session(input: input, at: at, gpu: selection)
            let image = try session.render(preset.filters, light: preset.light)
            // From here until the picture is in place, SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ remove the
            // temporary and exit 128+signal instead of leaving it (before, the default action is harmless).
            gpuencode_install_signal_handlers()
            try ImageIO.write(image, to: output, overwrite: overwrite, stopIfInterrupted: true)
            if verbose {
                let when = session.time.map { "frame at \(roundedSeconds($0, places: 3)) s" } ?? "still image"
                fputs("gpuencode: wrote \(output): \(image.width)x\(image.height), \(when), preset \(preset.name), \(session.renderer)\n", stderr)
            }
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
    }

    /// The preset, or the comparison built from it.
    func loadPreset() throws -> Preset {
        let library = try library()
        let base = try inlineFilters.apply(to: try library.load(preset), allowed: try readAccess.allowed())
        return try comparison.apply(to: base, duration: nil, library: library)
    }

    /// `--watch`: polls the files behind the picture and renders again when one changes.
    private struct Watcher {
        let command: PreviewCommand
        let gpu: GPUSelection
        static let interval: useconds_t = 250_000

        func run() throws {
            gpuencode_install_signal_handlers()
            var session = try Preview.Session(input: command.input, at: command.at, gpu: gpu)
            var written = false
            var watched: [String: [Int]] = [:]
            var renders = 0
            /// Renders once; a preset error is printed and leaves the last good picture in place.
            func render() throws {
                var files = [command.input] + [command.preset, command.comparison.compareWith].compactMap { $0 }.filter(Preset.isFileSpec)
                let start = monotonicSeconds()
                do {
                    let preset = try command.loadPreset()
                    files += Preview.files(of: preset)
                    if let b = command.comparison.compareWith { files += Preview.files(of: try command.library().load(b)) }
                    let image = try session.render(preset.filters, light: preset.light)
                    try ImageIO.write(image, to: command.output, overwrite: command.overwrite || written)
                    written = true
                    renders += 1
                    let ms = Int(((monotonicSeconds() - start) * 1000).rounded())
                    print("render \(renders): wrote \(command.output) (\(image.width)x\(image.height), preset \(preset.name)) in \(ms) ms")
                } catch let error as GPUEncodeError where error.exitCode == 67 {
                    fputs("gpuencode: error: \(error.description)\n", stderr)
                }
                fflush(stdout)
                // Files that vanished since stay watched, so their return is noticed.
                var next: [String: [Int]] = [:]
                for f in Set(files).union(watched.keys) { next[f] = stamp(f) }
                watched = next
            }
            try render()
            while gpuencode_interrupt_signal() == 0 {
                usleep(Watcher.interval)
                if gpuencode_interrupt_signal() != 0 { break }
                let changed = watched.keys.sorted().filter { stamp($0) != watched[$0] }
                guard !changed.isEmpty else { continue }
                if changed.contains(command.input) {
                    do { session = try Preview.Session(input: command.input, at: command.at, gpu: gpu) } catch let error as GPUEncodeError {
                        // A half-written input: keep the old picture and try again on the next change.
                        fputs("gpuencode: error: \(error.description)\n", stderr)
                        watched[command.input] = stamp(command.input)
                        continue
                    }
                }
                try render()
            }
            let signal = gpuencode_interrupt_signal()
            if signal != SIGINT { throw ExitCode(128 + signal) }
        }

        /// What tells a file's change: modification time, size and inode (editors that save by
        /// renaming a new file over the old one change only the inode on coarse clocks); [] if absent.
        func stamp(_ path: String) -> [Int] {
            var st = stat()
            guard stat(path, &st) == 0 else { return [] }
            return [Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), Int(st.st_size), Int(truncatingIfNeeded: st.st_ino)]
        }

        func monotonicSeconds() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
    }
}

/// `--compare`, `--compare-with`, `--split`, `--split-angle` (and the transcode's `--split-animate`).
struct CompareOptions: ParsableArguments {
    @Flag(help: "Show the original beside the preset, divided by a line (--split, --split-angle), each side labelled.")
    var compare = false

    @Option(name: .customLong("compare-with"), help: ArgumentHelp("Compare with this preset instead of the original (implies --compare).", valueName: "name|file"))
    var compareWith: String?

    @Option(help: ArgumentHelp("Where the divider crosses, 0...1 (default 0.5): the fraction showing the original (left, or top).", valueName: "fraction"))
    var split: Double?

    @Option(name: .customLong("split-angle"), help: ArgumentHelp("The divider's angle in degrees: 0 vertical (default), 90 horizontal, 45 diagonal.", valueName: "degrees"))
    var splitAngle: Double?

    var enabled: Bool { compare || compareWith != nil }

    func validate(animate: Bool) throws {
        if !enabled {
            if split != nil { throw ValidationError("--split needs --compare or --compare-with") }
            if splitAngle != nil { throw ValidationError("--split-angle needs --compare or --compare-with") }
            if animate { throw ValidationError("--split-animate needs --compare or --compare-with") }
        }
        if let split, !(0...1).contains(split) { throw ValidationError("--split must be between 0 and 1") }
        if let splitAngle, !(-360...360).contains(splitAngle) { throw ValidationError("--split-angle must be between -360 and 360") }
    }

    /// `preset` as it is, or compared as asked. `duration` (seconds) makes the divider sweep.
    func apply(to preset: Preset, duration: Double?, animate: Bool = false, library: PresetLibrary = PresetLibrary()) throws -> Preset {
        guard enabled else { return preset }
        let b = try compareWith.map { try library.load($0) }
        return try Comparison.make(a: preset, b: b, split: split ?? 0.5, angle: splitAngle ?? 0, animate: animate, duration: duration)
    }
}

extension Preset {
    /// Whether a --preset value names a file (as `Preset.load` reads it) rather than a built-in.
    static func isFileSpec(_ spec: String) -> Bool { spec.contains("/") || spec.hasSuffix(".json") }
}
