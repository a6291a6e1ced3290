import ArgumentParser
import CShim
import GPUEncodeBatch
import GPUEncodeKit
import Glibc


struct TranscodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Re-encode a movie through a GPU filter chain, keeping its audio, timing and orientation (the default command).",
        usage: "gpuencode <input> <output> [--preset <name|file>] [<options>]\n  gpuencode <command> ...   (gpuencode help <command>)",
        discussion: """
        Each video frame is decoded with FFmpeg, filtered on the GPU (OpenGL ES 3, headless EGL) and \
        re-encoded to H.264 (libx264), HEVC (libx265) or AV1 (libsvtav1). Audio the container's players \
        play is copied untouched, other audio is re-encoded in sync (--audio); subtitles are copied where \
        the container can hold them. Each \
        frame keeps its timestamp (variable frame rate stays variable), rotated phone videos come out \
        upright, and the output is tagged BT.709. The file appears only when it is complete.

        EXAMPLES:
          gpuencode in.mp4 out.m4v --preset sepia
          gpuencode phone.mov upright.mp4          (identity: turn upright, re-encode)
          gpuencode in.mkv out.mkv --preset ./my-look.json --crf 18 --speed slow
          gpuencode in.mp4 out.mp4 --codec hevc --crf 26    (HEVC, tagged hvc1)
          gpuencode in.mp4 out.webm -c:v libsvtav1 --speed fast
          gpuencode in.mp4 out.mp4 --preset grayscale --bitrate 4M -y
          gpuencode in.mp4 out.mp4 --filter 'sepia:intensity=0.5,vignette:end=0.9'
          gpuencode in.mp4 out.mp4 --preset toaster -vf gaussianBlur=2  (after it)
          gpuencode in.mp4 cmp.mp4 --preset sepia --compare --split-animate
          gpuencode photo.jpg toned.png --preset toaster          (pictures too)
          gpuencode in.mp4 out.mp4 --dry-run          (the plan; writes nothing)
          gpuencode in.mp4 out.mp4 --json > job.json  (what was done: docs/json.md)
          gpuencode in.mp4 out.mp4 -q -progress pipe:1            (ffmpeg's progress blocks for a script)

        CODECS (--codec, or ffmpeg's -c:v with an encoder name):
          codec  encoder    crf scale (default)           containers
          h264   libx264    0-51 (23), 0 is lossless      .mp4 .m4v .mov .mkv
          hevc   libx265    0-51 (28)                     .mp4 .m4v .mov .mkv
          av1    libsvtav1  1-63 (35), whole numbers      .mp4 .m4v .mkv .webm

        --speed takes x264's preset names for every codec; x264 and x265 get the name \
        itself, SVT-AV1 and NVENC their nearest preset:
          speed      SVT-AV1  NVENC
        \(EncoderSettings.speeds.map { "  \(padded($0, 11))\(padded(String(EncoderSettings.svtav1Presets[$0]!), 9))\(EncoderSettings.nvencPreset(forX264: $0))" }.joined(separator: "\n"))

        Each encoder's own options pass through --x264-params, --x265-params or --svtav1-params \
        (key=value:key=value, as in ffmpeg), each only with its codec.

        PRESETS: built-in \(Preset.builtinNames.joined(separator: ", ")), user presets (NAME.json in \
        --preset-dir folders or ~/.config/gpuencode/presets; `gpuencode presets` lists them all), or a \
        JSON file: {"version": \(Preset.currentVersion), "name": "warm", "filters": [{"filter": "sepia", "intensity": 0.5}]} \
        (docs/presets.md). A preset's "encode" settings (\(EncodeSetting.presetKeys.joined(separator: ", "))) \
        are used unless the same option is given on the command line: flag > preset > built-in default.

        GPU: --gpu auto (default) uses a hardware EGL device (e.g. NVIDIA) when there is one, else \
        Mesa's software renderer llvmpipe through the surfaceless platform, so it runs on any machine \
        without a display. GPUENCODE_GPU sets the default. -v prints the renderer used.

        NVIDIA: --hwaccel cuda decodes on NVDEC (frames stay on the GPU: copied \
        into the filters' textures through CUDA-GL interop); --hwaccel auto does so where it can and \
        decodes in software otherwise. --encoder nvenc encodes with h264_nvenc \
        or hevc_nvenc (FFmpeg 5.1 has no av1_nvenc: exit 69); --encoder auto \
        falls back to the software encoder with a warning where NVENC cannot \
        be opened. The defaults (software decoding and encoding) write the same \
        bytes on every machine. -v says which decoder and encoder ran.

        OTHER COMMANDS:
          gpuencode filters [NAME]        the filters, or one with its parameters
          gpuencode preview IN -o F.png   one filtered frame (--at, --compare, --watch)
          gpuencode studio IN --preset P  edit a preset in the browser: split view, sliders
          gpuencode contact-sheet IN -o F every preset on one frame, labelled
          gpuencode lut identity F.png    a lookup image to grade in an editor
          gpuencode presets [show NAME]   presets and where they come from; one as JSON
          gpuencode presets upgrade FILE  an older preset in the current format
          gpuencode validate FILE...      every error with line:column (--json)
          gpuencode batch IN... --out-dir D  many files in parallel, resumable, sharded
          gpuencode report merge A B...   join sharded batch reports (-o ALL.json)

        EXIT CODES:
        \(exitCodeTable.map { "  \($0.code)\(String(repeating: " ", count: max(1, 5 - String($0.code).count)))\($0.meaning)" }.joined(separator: "\n"))
        """,
    )

    @Argument(help: "Input movie (any format FFmpeg reads: MP4, MOV, MKV, WebM, AVI, TS...).", completion: .file())
    var input: String?

    @Argument(help: "Output file; the container follows the extension (.mp4, .m4v, .mov, .mkv; .webm for AV1).", completion: .file())
    var output: String?

    @Option(name: .long, help: ArgumentHelp("A preset name (user presets, then built-ins) or a path to a preset JSON file.", valueName: "name|file"), completion: .presets)
    var preset: String = "identity"

    @Option(name: .customLong("preset-dir"), help: ArgumentHelp("A folder of NAME.json presets searched before ~/.config/gpuencode/presets and the built-ins; repeatable.", valueName: "dir"))
    var presetDirs: [String] = []

    @OptionGroup var inlineFilters: FilterOptions

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists, or if another writer creates it while this run writes.")
    var overwrite = false

    @OptionGroup var gpuOptions: GPUOptions

    @OptionGroup(title: "Encoding (a flag wins over the preset's \"encode\" setting)") var encode: EncodeOptions

    @Option(name: .customLong("render-path"), help: ArgumentHelp("GPU passes: direct (default: fused Y and CbCr passes straight from the source) rgba (the straightforward path through a full-size RGBA picture), or unfused (one pass per filter through 8-bit textures, as GPUImage); the last two are for comparison.", valueName: "direct|rgba|unfused"), completion: .list(["direct", "rgba", "unfused"]))
    var renderPath: String = "direct"

    @Flag(name: .customLong("passes"), help: "Print the render graph after each compiler pass to stderr (the nodes, the conversions inserted, where the scale runs, what is baked and fused), then run.")
    var printPasses = false

    @Flag(name: .customLong("no-optimize"), help: "Compile the render graph without its optional passes (scale first, plane-native chains, baked colour, cheaper blurs): the exact reference the optimized plan is tested against. Slower.")
    var noOptimize = false

    @Flag(help: "Decode, filter and encode one frame at a time on one thread instead of pipelined. Slower; the output is byte-identical to a normal run (a check on the pipeline).")
    var deterministic = false

    @Flag(name: .shortAndLong, help: "Print the GPU renderer, stream details and notes.")
    var verbose = false

    @OptionGroup(title: "Progress") var progressOptions: ProgressOptions

    @Flag(help: "Print each frame's measurements (averageColor filters) on stdout, one line per frame: frame=N time=SECONDS averageColor=R,G,B,A (0-1).")
    var stats = false

    @Flag(name: .customLong("dry-run"), help: "Say what the transcode would do and write nothing: the input is opened and its streams mapped, the encoders opened, the GPU context made and the preset's filter chain compiled on it, so a problem a run would meet before its first frame exits with the run's code (66 bad input, 67 bad preset, 69 no GPU, 73 output exists...). The plan goes to stdout (with --json, the document does and the plan goes to stderr). No output file is written; the output's folder and the --progress-url file are checked by creating a file there and removing it at once.")
    var dryRun = false

    @Flag(help: "Print one JSON document on stdout when done: the input and its streams, what happens to each stream (encode, copy or drop, and why), the encode settings, the filters, the GPU, warnings, and the result (timings, frames, output size and bitrate). With --dry-run, what would be done. Also on failure, with the error and exit code. Human output stays on stderr. docs/json.md has the format.")
    var json = false

    @Flag(name: .customLong("list-presets"), help: "List the built-in presets and exit (`gpuencode presets` lists user presets too).")
    var listPresets = false

    @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

    @OptionGroup(title: "Comparison") var comparison: CompareOptions

    @Flag(name: .customLong("split-animate"), help: "With --compare: sweep the divider over the clip's duration, from all original at the start to all preset at the end.")
    var splitAnimate = false

    @Option(name: .customLong("benchmark-filters"), help: ArgumentHelp("Time the filter stage alone on N frames of INPUT held in memory (upload, filters, readback); no output file.", valueName: "N"))
    var benchmarkFilters: Int?

    mutating func validate() throws {
        if listPresets || benchmarkFilters != nil, json || dryRun {
            throw ValidationError("--json and --dry-run are for transcodes, not \(listPresets ? "--list-presets" : "--benchmark-filters")")
        }
        if listPresets { return }
        if let n = benchmarkFilters {
            guard (1...1_000_000).contains(n), input != nil else { throw ValidationError("--benchmark-filters N needs N from 1 to 1000000 and an input file") }
            return
        }
        guard input != nil, output != nil else { throw ValidationError("give an input and an output file, e.g. gpuencode in.mp4 out.mp4 --preset sepia") }
        try comparison.validate(animate: splitAnimate)
        _ = try encode.overrides(threadsMayBeAuto: true)
        guard ["direct", "rgba", "unfused"].contains(renderPath) else { throw ValidationError("--render-path must be direct, rgba or unfused") }
        // --json's document is the whole of stdout, so scripts can parse it.
        if json && stats { throw ValidationError("--json and --stats both write to stdout; give one of them") }
        if (json || dryRun) && ImageIO.isImagePath(output!) {
            throw ValidationError("--json and --dry-run are for movie outputs; \(output!) is a picture (gpuencode preview renders one)")
        }
        // stdout carries one thing: the -progress stream or the --stats lines.
        if progressOptions.streamOnStdout && stats {
            throw ValidationError("--progress-url pipe:1 and --stats both write to stdout; send the progress to a file or pipe:2")
        }
        if verbose && progressOptions.quiet { throw ValidationError("-v and -q contradict each other") }
        if json && progressOptions.streamOnStdout { throw ValidationError("--json and --progress-url pipe:1 both write to stdout; send the progress to a file or pipe:2") }
    }

    var compileOptions: CompileOptions {
        var options = noOptimize ? .reference : CompileOptions()
        options.cpuKernels = Environment.cpuKernels
        return options
    }

    func run() throws {
        if listPresets {
            for name in Preset.builtinNames {
                let p = try? Preset.load(name)
                print("\(name)\(String(repeating: " ", count: max(1, 12 - name.count)))\(p?.description ?? "")")
            }
            return
        }
        let path: RenderPath = renderPath == "rgba" ? .viaRGBA : renderPath == "unfused" ? .unfused : .direct
        if let n = benchmarkFilters {
            do {
                let selection = try gpuOptions.selection()
                let allowed = try readAccess.allowed()
                let loaded = try inlineFilters.apply(to: try PresetLibrary(commandLine: presetDirs, allowed: allowed).load(preset), allowed: allowed)
                // The size asked for (--width and kin, or the preset's "encode"), as the transcode scales.
                let settings = try EncodeOverrides.resolve([EncodeLayer(try encode.overrides(threadsMayBeAuto: true), from: .commandLine),
                                                            EncodeLayer(loaded.encode, from: .preset(loaded.origin))])
                let r = try FilterBenchmark.run(input: input!, preset: loaded, gpu: selection, path: path, frames: n,
                                                transfer: Environment.transfer, synchronous: Environment.synchronousBenchmark, scale: settings.scale,
                                                stages: Environment.stageTimes, compile: compileOptions)
                print("filter stage: \(format1(r.fps)) fps (\(format1(1000 / r.fps)) ms/frame), \(r.frames) frames \(r.width)x\(r.height), preset \(preset), \(r.renderer)")
                if let scale = r.scale { print(scale) }
                if let stages = r.stages { print("stages, one frame at a time: \(stages)") }
            } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
            return
        }
        let verbose = self.verbose
        MediaLog.setLevel(verbose: verbose)
        // Off a terminal, auto shows no progress: a failure stays one stderr line and a success one
        // "wrote" line; scripts ask for kv or json, or read the -progress stream.
        let style = progressOptions.style(offTerminal: .none)
        var reporter = ProgressReporter(style: style, columns: ProgressOptions.columns)
        let report = json || dryRun ? TranscodeReport(input: input, output: output, dryRun: dryRun) : nil
        do {
            // Before anything opens the input: a FIFO input blocks in open until its writer comes,
            // and SIGINT/SIGTERM must stop that as an interruption (130/143), not a read error.
            gpuencode_install_signal_handlers()
            let allowed = try readAccess.allowed()
            let library = PresetLibrary(commandLine: presetDirs, allowed: allowed)
            // --filter's filters run after the preset's chain (after a graph's output).
            let base = try inlineFilters.apply(to: try library.load(self.preset), allowed: allowed)
            // A flag given on the command line wins over the preset's "encode", which wins over the
            // defaults: the same resolution a batch job gets. What depends on the codec (crf scale,
            // params for another codec, a container that cannot hold it) stops here, before the
            // input is opened.
            let settings = try EncodeOverrides.resolve([EncodeLayer(try encode.overrides(threadsMayBeAuto: true), from: .commandLine),
                                                        EncodeLayer(base.encode, from: .preset(base.origin))],
                                                       output: output)
            report?.given(try encode.overrides(threadsMayBeAuto: true).over(base.encode))
            let picture = ImageIO.isImagePath(output!)
            // Trim. A picture has no time to cut; a picture out is one frame, at --start.
            if !settings.trim.isWhole && ImageIO.isImagePath(input!) {
                throw GPUEncodeError(.usage, path: input!, "is a picture: --start, --to and -t cut movies")
            }
            if picture && settings.trim.end != nil {
                throw GPUEncodeError(.usage, path: output!, "a picture is one frame: --to and -t do not apply (--start chooses the frame)")
            }
            if picture { try checkPictureOptions() }
            if !picture {
                var check = TranscodeOptions(input: input!, output: output!, preset: base)
                check.overwrite = overwrite
                check.encoder = settings
                report?.describe(check)
                try Transcoder.checkOutput(check)
            }
            var duration: Double? = nil
            if splitAnimate {
                // A trimmed run sweeps over what it writes: the input after --start, at most -t long.
                duration = try Comparison.duration(of: input!).map { whole in
                    let left = max(0, whole - Double(settings.trim.start) / 1e6)
                    return settings.trim.duration.map { min(left, Double($0) / 1e6) } ?? left
                }
                if duration == nil, let length = settings.trim.duration { duration = Double(length) / 1e6 }
                if duration == nil { throw GPUEncodeError(.usage, path: input!, "the file does not tell its duration, which --split-animate needs") }
            }
            let preset = try comparison.apply(to: base, duration: duration, animate: splitAnimate, library: library)
            if picture {
                // A picture out (as GPUImage's picture output): the first frame of a movie, or a
                // still image in, through the same path as `preview`.
                try writePicture(preset: preset, settings: settings)
                return
            }
            var options = TranscodeOptions(input: input!, output: output!, preset: preset)
            options.overwrite = overwrite
            options.renderPath = path
            options.compile = compileOptions
            if printPasses { options.passTrace = { lines in for line in lines { fputs(line + "\n", stderr) } } }
            options.transfer = Environment.transfer
            options.sequential = deterministic
            options.encoder = settings
            let selection = try gpuOptions.selection()
            options.gpu = selection
            options.hwaccel = try resolveHWAccel(try encode.overrides(threadsMayBeAuto: true).hwaccel)
            options.cudaInterop = Environment.cudaInterop
            if let report {
                // The decoding choice comes from the flag or GPUENCODE_HWACCEL: "settings" says which.
                var given = try encode.overrides(threadsMayBeAuto: true).over(base.encode)
                given.hwaccel = options.hwaccel
                report.given(given)
            }
            options.report = report
            if let url = progressOptions.progressURL, ProgressStream.standardStream(url) == nil,
               url == output! || url == input! || sameFile(url, input!) || sameFile(url, output!) {
                throw GPUEncodeError(.usage, path: url, "is the input or output file; write the progress to another file")
            }
            // A dry run checks the progress file as opening it would, and opens nothing.
            if dryRun, let url = progressOptions.progressURL { try ProgressStream.probe(url: url, overwrite: overwrite) }
            if !dryRun, let stream = try progressOptions.openStream(overwrite: overwrite) {
                reporter = ProgressReporter(style: style, stream: stream, statsPeriod: progressOptions.statsPeriod, columns: ProgressOptions.columns)
            }
            options.progress = dryRun ? nil : reporter
            if stats {
                if !preset.filters.contains(where: { $0.declaration.name == "averageColor" }) {
                    throw GPUEncodeError(.usage, path: self.preset, "--stats needs an averageColor filter in the preset (e.g. {\"filter\": \"averageColor\"})")
                }
                options.statistics = { frame, time, values in
                    let fields = values.map { "\($0.name)=" + $0.value.map { String(format4($0)) }.joined(separator: ",") }
                    print("frame=\(frame) time=\(String(format4(time))) " + fields.joined(separator: " "))
                    fflush(stdout)
                }
            }
            let shown = reporter
            options.log = { level, message in
                if level == .warning { report?.warning(message) }
                guard level == .warning || verbose else { return }
                shown.message(level == .warning ? "warning" : "note", message)
            }
            if dryRun {
                try Transcoder.plan(options)
                let document = report!.document(status: "planned", exitCode: 0, error: nil)
                // The plan is the answer on stdout, as `batch --dry-run`'s; with --json the document is.
                if json {
                    fputs(PlanText.lines(document).map { "gpuencode: \($0)\n" }.joined(), stderr)
                    print(JSONWriter.write(document), terminator: "")
                } else {
                    print(PlanText.lines(document).joined(separator: "\n"))
                }
                return
            }
            let summary = try Transcoder.run(options)
            var st = stat()
            let bytes: Int64? = stat(output!, &st) == 0 ? Int64(st.st_size) : nil
            let fps = Double(summary.frames) / max(summary.seconds, 1e-6)
            let end = reporter.finish(frames: summary.frames, bytes: bytes, event: [
                ("output", .str(output!)), ("seconds", .num(Double(format1(summary.seconds)))), ("preset", .str(preset.name)),
                ("renderer", .str(summary.renderer))])
            if reporter.streamFailed { reporter.message("warning", "\(progressOptions.progressURL ?? ""): the progress stream could not be written to the end") }
            // The last line says what was written, on a terminal or not (-q: nothing); in the json
            // style the end event says it.
            if !progressOptions.quiet && !reporter.isJSON {
                var what = "\(summary.frames) frames"
                if let bytes { what += ", \(byteSize(bytes))" }
                if let k = end.kilobitsPerSecond { what += ", \(format(k, 0)) kb/s" }
                var pace = "\(format1(fps)) fps"
                if let s = end.speed { pace += ", \(speedText(s))" }
                fputs("gpuencode: wrote \(output!): \(what) in \(String(format1(summary.seconds))) s (\(pace)) with preset \(preset.name) on \(summary.renderer)\n", stderr)
            }
            if json { print(JSONWriter.write(report!.document(status: "done", exitCode: 0, error: nil)), terminator: "") }
        } catch let error as GPUEncodeError {
            reporter.message("error", error.description, exitCode: error.exitCode)
            if json, let report {
                let status = error.isInterruption ? "interrupted" : "failed"
                print(JSONWriter.write(report.document(status: status, exitCode: error.exitCode, error: error.description)), terminator: "")
            }
            throw ExitCode(error.exitCode)
        }
    }
}

extension TranscodeCommand {
    /// A picture output takes what applies to one frame (PictureOutput); an option given for
    /// encoding video, audio or a stream is a usage error naming it, not silently dropped.
    func checkPictureOptions() throws {
        var refused = PictureOutput.refusedSettings(try encode.overrides(threadsMayBeAuto: true))
        if renderPath != "direct" { refused.append("--render-path") }
        if deterministic { refused.append("--deterministic") }
        if stats { refused.append("--stats") }
        if progressOptions.progressURL != nil { refused.append("--progress-url") }
        if splitAnimate { refused.append("--split-animate") }
        guard !refused.isEmpty else { return }
        let list = refused.count == 1 ? refused[0] : refused.dropLast().joined(separator: ", ") + " and " + refused.last!
        throw GPUEncodeError(.usage, path: output!, "is a picture (one frame, not encoded video): \(list) \(refused.count == 1 ? "does" : "do") not apply; a picture takes --preset, --filter, --start, --width, --height, --size, --max-width, --max-height, --tonemap, --target-peak, --peak-detect and --dolby-vision")
    }

    func writePicture(preset: Preset, settings: EncoderSettings) throws {
        if !overwrite && access(output!, F_OK) == 0 { throw GPUEncodeError(.outputCreate, path: output!, "already exists (use -y to overwrite)") }
        var a = stat(), b = stat()
        if stat(input!, &a) == 0, stat(output!, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino {
            throw GPUEncodeError(.usage, path: output!, "is the input file; write to another file")
        }
        var picture = PictureOutput(input: input!, preset: preset)
        picture.time = Double(settings.trim.start) / 1e6
        picture.scale = settings.scale
        picture.toneMapping = settings.toneMapping
        picture.dolbyVision = settings.dolbyVision
        picture.gpu = try gpuOptions.selection()
        let result = try picture.render()
        // From here until the picture is in place, SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ remove the
        // temporary and exit 128+signal instead of leaving it (before, the default action is harmless).
        gpuencode_install_signal_handlers()
        try ImageIO.write(result.image, to: output!, overwrite: overwrite, stopIfInterrupted: true)
        if verbose {
            fputs("gpuencode: wrote \(output!): \(result.image.width)x\(result.image.height) picture with preset \(preset.name) on \(result.renderer)\n", stderr)
        }
    }
}

/// Whether two paths name one file (the progress file must be neither input nor output).
func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat(), y = stat()
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
}

/// --hwaccel, else GPUENCODE_HWACCEL, else none.
func resolveHWAccel(_ given: HardwareAcceleration?) throws -> HardwareAcceleration {
    if let given { return given }
    let name = getenv("GPUENCODE_HWACCEL").map { String(cString: $0) } ?? "none"
    guard let decoding = HardwareAcceleration(rawValue: name) else {
        throw GPUEncodeError(.usage, "GPUENCODE_HWACCEL=\(name) must be none, cuda or auto")
    }
    return decoding
}

/// `text` with spaces after it up to `width` characters (help tables).
func padded(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}

func format4(_ v: Double) -> String {
    let r = (v * 10000).rounded() / 10000
    return String(r)
}

func format1(_ v: Double) -> String {
    let r = (v * 10).rounded() / 10
    return String(r)
}
