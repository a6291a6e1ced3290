import ArgumentParser
import CShim
import GPUEncodeBatch
import GPUEncodeKit
import Glibc

struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Transcode many files in parallel: resumable, shardable across CI machines, with JSON and JUnit reports.",
        discussion: """
        INPUTS are files and folders (a folder's files matching --include; --recursive to descend, \
        mirroring its subfolders under --out-dir), and/or --manifest jobs.json|jobs.csv with one job \
        per row: input (required), output, preset, filter (as --filter), and any of \(EncodeSetting.manifestKeys.joined(separator: ", ")) (the flags' \
        values; x264Preset is read as speed), metadata.KEY columns (JSON: "metadata": {KEY: VALUE}). \
        A manifest's relative paths are relative to its own folder. Outputs are --out-dir/--name, or \
        the manifest's output column. Two jobs writing one file is an error before anything runs.

        NAME TEMPLATE (--name, default {stem}.mp4): {name} the input's file name, {stem} without its \
        extension, {ext} its extension, {preset} the preset's name; e.g. {stem}-{preset}.mkv. A name \
        must stay inside --out-dir: absolute names and `..` (written or expanded) are refused (64). \
        The folders below --out-dir are made and opened without following symbolic links: a job whose \
        subfolder is a link fails (73).

        RESUME: outputs appear only when complete, and each finished job is recorded (input size and \
        mtime, or content hash with --hash; preset digest; settings; gpuencode version) in \
        .gpuencode-state.json in --out-dir (or --state FILE). A rerun skips outputs that are up to date, \
        redoes the ones whose input, preset or settings changed, and stops at outputs it does not know \
        unless --skip-existing (keep them) or --force (redo everything). Jobs are keyed by the output's \
        real path, so `--out-dir out`, `./out` or a symlink to it are the same jobs. Batches may share \
        one state file: each save locks FILE.lock and merges the records on disk with its own. A \
        state file with another formatVersion or a malformed entry is an error (66), never ignored.

        SHARDS: --shard INDEX/COUNT (INDEX from 1) runs the jobs whose stable hash of input path and \
        preset falls in that shard, so adding a file moves no other job. Without --shard, the CI's \
        variables are read: GitLab CI_NODE_INDEX/CI_NODE_TOTAL, CircleCI CIRCLE_NODE_INDEX/\
        CIRCLE_NODE_TOTAL, Buildkite BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT, Kubernetes \
        JOB_COMPLETION_INDEX with --shard-count N. A variable without its partner (JOB_COMPLETION_INDEX \
        without --shard-count, an index without its total, a total above 1 without its index) is a usage \
        error (64), never "run every job". `gpuencode report merge` joins the shards' reports. \
        A sharded run's default state file is .gpuencode-state.INDEX-of-COUNT.json.

        PARALLELISM: --jobs N transcodes at once, each with cores/N encoder threads (--threads). On a \
        hardware GPU every job renders on one GL context, on a thread of its own (NVIDIA's driver \
        serialises contexts), and the default is one job per 2 cores (\(BatchRunOptions.defaultJobs(sharedHardwareContext: true)) on \
        this machine's \(onlineCores())); on llvmpipe each job has its own context and the default is one \
        job per 4 cores, at least 2 (\(BatchRunOptions.defaultJobs()) here).

        PROGRESS (--progress): on a terminal a line per running job and a total bar whose share and ETA \
        weigh each job by its length; otherwise JSON lines on stderr (events start, progress once a second \
        per job, warning, end, error, done: every stderr line is JSON, so `2> >(jq ...)` reads it all). \
        kv gives `progress job=N ...` lines, none or -q nothing but warnings and errors. \
        --progress-url FILE|pipe:1 writes ffmpeg's -progress blocks for the whole batch (frames, time and \
        bytes summed over the jobs, with jobs, jobs_done, jobs_failed, jobs_skipped, jobs_running). \
        docs/ci.md lists every key.

        EXIT CODES: 0 every job ok or skipped; 80 some jobs failed (--continue-on-error, the default, \
        runs the rest; --fail-fast stops at the first); 130/143 interrupted by SIGINT/SIGTERM, 129/141/\
        153 by SIGHUP/SIGPIPE/SIGXFSZ (running jobs stopped, their temporary files removed, state and \
        reports written); 64/66/67 a usage, input (or unreadable state file) or preset error before \
        anything ran. docs/ci.md and docs/report.md have the details.

        EXAMPLES:
          gpuencode batch clips/ --recursive --out-dir out --preset sepia --report report.json --junit report.xml
          gpuencode batch --manifest jobs.csv --jobs 4 --skip-existing
          gpuencode batch clips/ --out-dir out --codec hevc --speed slow --name '{stem}.mp4'
          (jobs.csv: input,output,codec,crf / a.mov,a.webm,av1,30 / b.mov,b.mp4,,)
          gpuencode batch clips/ --out-dir out --shard 2/4 --report shard-2.json
          gpuencode report merge shard-*.json -o all.json --junit all.xml
        """
    )

    @Argument(help: "Input files and folders.")
    var inputs: [String] = []

    @Option(help: ArgumentHelp("A job list: .json (an array of {input, output, preset, ...}) or .csv with a header row.", valueName: "file"))
    var manifest: String?

    @Flag(help: "Descend into subfolders of input folders (mirrored under --out-dir).")
    var recursive = false

    @Option(help: ArgumentHelp("Comma-separated patterns for files in input folders (default: common video extensions).", valueName: "'*.mp4,*.mov'"))
    var include: String?

    @Option(name: .customLong("out-dir"), help: ArgumentHelp("Folder for the outputs (created when missing).", valueName: "dir"))
    var outDir: String?

    @Option(help: ArgumentHelp("Output file name template: {name} {stem} {ext} {preset}.", valueName: "template"))
    var name: String = BatchRequest.defaultTemplate

    @Option(name: .long, help: ArgumentHelp("Preset for every job without one in the manifest.", valueName: "name|file"), completion: .presets)
    var preset: String = "identity"

    @Option(name: .customLong("preset-dir"), help: ArgumentHelp("A folder of NAME.json presets searched first; repeatable.", valueName: "dir"))
    var presetDirs: [String] = []

    @OptionGroup(title: "Inline filters (a manifest's filter column wins for its row)") var inlineFilters: FilterOptions

    @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

    @OptionGroup(title: "Encoding (manifest column > flag > preset's \"encode\" > default)") var encode: EncodeOptions

    @Option(name: [.long, .customShort("j")], help: ArgumentHelp("Jobs at once (default: cores / 2 on a hardware GPU, cores / 4 on llvmpipe, at least 2).", valueName: "n"))
    var jobs: Int?

    @OptionGroup var gpuOptions: GPUOptions

    @Flag(name: .customLong("skip-existing"), help: "Keep outputs that exist but are not in the state file.")
    var skipExisting = false

    @Flag(help: "Redo every job, even up-to-date ones.")
    var force = false

    @Option(help: ArgumentHelp("The job record (default --out-dir/.gpuencode-state.json, or beside the manifest).", valueName: "file"))
    var state: String?

    @Flag(help: "Recognise unchanged inputs by a hash of their content instead of size and mtime (CI checkouts reset mtimes).")
    var hash = false

    @Option(help: ArgumentHelp("Run only this shard of the jobs, INDEX from 1 (default: the CI's variables, else all).", valueName: "INDEX/COUNT"))
    var shard: String?

    @Option(name: .customLong("shard-count"), help: ArgumentHelp("Shard count for a Kubernetes Indexed Job (the index is JOB_COMPLETION_INDEX).", valueName: "n"))
    var shardCount: Int?

    @Option(help: ArgumentHelp("Write a JSON report (docs/report.md).", valueName: "file"))
    var report: String?

    @Option(help: ArgumentHelp("Write a JUnit XML report: one test case per job.", valueName: "file"))
    var junit: String?

    @OptionGroup(title: "Progress") var progressOptions: ProgressOptions

    @Flag(name: .customLong("fail-fast"), help: "Stop at the first failed job (running jobs are stopped, the rest not started).")
    var failFast = false

    @Flag(name: .customLong("continue-on-error"), help: "Run every job even when some fail (the default).")
    var continueOnError = false

    @Flag(name: .customLong("dry-run"), help: "Print the plan (shard, input, output, preset, what a run would do) on stdout and exit.")
    var dryRun = false

    @Flag(name: .shortAndLong, help: "Print warnings' notes and the GPU renderer of each job.")
    var verbose = false

    func validate() throws {
        if inputs.isEmpty && manifest == nil { throw ValidationError("give input files or folders, or --manifest FILE") }
        _ = try encode.overrides(threadsMayBeAuto: false)
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let shardCount, shardCount < 1 { throw ValidationError("--shard-count must be at least 1") }
        if skipExisting && force { throw ValidationError("--skip-existing and --force contradict each other") }
        if failFast && continueOnError { throw ValidationError("--fail-fast and --continue-on-error contradict each other") }
        if dryRun && progressOptions.streamOnStdout {
            throw ValidationError("--dry-run prints the plan on stdout, where --progress-url pipe:1 would write; send the progress to a file or pipe:2")
        }
        if verbose && progressOptions.quiet { throw ValidationError("-v and -q contradict each other") }
    }

    /// Off a terminal batch shows JSON lines (a CI log, or a script's pipe).
    private var style: ProgressStyle { progressOptions.style(offTerminal: .json) }

    func run() throws {
        do {
            try runBatch()
        } catch let error as GPUEncodeError {
            printError(error.description, exitCode: error.exitCode)
            throw ExitCode(error.exitCode)
        }
    }

    /// One error line, or in the json style one `error` event (every stderr line is JSON there).
    private func printError(_ text: String, exitCode: Int32) {
        if style == .json {
            fputs(compactJSON(.obj([("event", .str("error")), ("message", .str(text)), ("exitCode", .int(Int(exitCode)))])) + "\n", stderr)
        } else {
            fputs("gpuencode: error: \(text)\n", stderr)
        }
    }

    private func runBatch() throws {
        var request = BatchRequest()
        request.inputs = inputs
        request.recursive = recursive
        if let include {
            request.include = include.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
        }
        request.manifest = manifest
        request.outDir = outDir
        request.template = name
        request.presetSpec = preset
        request.filterSpec = inlineFilters.filter
        request.presetDirectories = presetDirs + (Environment.userPresetDirectory.map { [$0] } ?? [])
        request.allowed = try readAccess.allowed()
        let overrides = try encode.overrides(threadsMayBeAuto: false)
        request.overrides = overrides

        // Everything that can be wrong with the command is found before any job starts.
        let plan = try BatchPlanner.plan(request)
        var selected: Shard?
        if let shard {
            selected = try Shard.parse(shard)
        } else if let (s, _) = try Shard.fromEnvironment({ getenv($0).map { String(cString: $0) } }, shardCount: shardCount) {
            selected = s
        }
        let jobs = plan.jobs(in: selected)
        let statePath = state ?? defaultStatePath(shard: selected)
        let batchState = try BatchState(path: statePath)

        var options = BatchRunOptions()
        options.jobs = self.jobs
        options.threadsPerJob = overrides.threads ?? 0
        options.hwaccel = try resolveHWAccel(overrides.hwaccel)
        let selection = try gpuOptions.selection()
        options.gpu = selection
        options.resume = ResumePolicy(skipExisting: skipExisting, force: force, hash: hash)
        options.failFast = failFast
        options.sharedContext = Environment.sharedBatchContext
        options.cudaInterop = Environment.cudaInterop

        // Report files are checked for writability now, not after an hour of transcoding (and by a
        // dry run, which refuses what the run would refuse before its first job).
        for path in [report, junit].compactMap({ $0 }) { try checkWritable(path) }

        if dryRun {
            if let url = progressOptions.progressURL { try ProgressStream.probe(url: url, overwrite: true) }
            print("# \(plan.jobs.count) jobs planned, \(jobs.count) in shard \(selected?.description ?? "1/1"); state \(statePath); plan \(plan.digest)")
            for job in jobs {
                let decision = try options.resume.decide(job, record: batchState.record(for: job.output)) { try FNV1a64.file(job.input) }
                let what: String
                switch decision {
                case .run(_, let reason): what = "run (\(reason))"
                case .skip(let reason): what = "skip (\(reason))"
                case .refuse(let reason): what = "fail (\(reason))"
                }
                let shardOf = Shard.assign(job, count: selected?.count ?? 1)
                print("\(shardOf)/\(selected?.count ?? 1)\t\(job.input)\t\(job.output)\t\(job.presetSpec)\t\(what)")
            }
            return
        }

        let style = self.style
        // Replaced like the reports (batch has no -y: a rerun's progress is the new run's); never
        // through a symlink, and FIFOs and devices as they are.
        let stream = try progressOptions.openStream(overwrite: true)
        let display = BatchProgress(style: style, totalJobs: jobs.count, stream: stream, statsPeriod: progressOptions.statsPeriod,
                                    columns: ProgressOptions.columns)
        let verbose = self.verbose
        let shown = BatchShown(display: display, verbose: verbose)
        options.log = { level, message in shown.message(nil, level: level, message) }
        MediaLog.setLevel(verbose: verbose)
        gpuencode_install_signal_handlers()
        let runner = BatchRunner(jobs: jobs, options: options, state: batchState, observer: shown)
        let outcome = try runner.run()

        // State and reports are written whatever happened, interruption included.
        var writeErrors: [GPUEncodeError] = []
        do { try runner.finish() } catch let e as GPUEncodeError { writeErrors.append(e) }
        let entries = outcome.results.map(\.json)
        if let report {
            let doc = BatchReport.document(jobs: entries, planJobs: plan.jobs.count, planDigest: plan.digest, shard: selected,
                                           interrupted: outcome.interruptedBy, failFastStopped: outcome.failFastStopped,
                                           wallSeconds: outcome.wallSeconds)
            do { try writeReport(JSONWriter.write(doc), to: report) } catch let e as GPUEncodeError { writeErrors.append(e) }
        }
        if let junit {
            do { try writeReport(BatchReport.junit(jobs: entries), to: junit) } catch let e as GPUEncodeError { writeErrors.append(e) }
        }
        let ok = outcome.results.filter { $0.status == .ok }.count
        let skipped = outcome.results.filter { $0.status == .skipped }.count
        var summary = "batch: \(ok) ok, \(outcome.failed) failed, \(skipped) skipped of \(jobs.count) jobs in \(format1(outcome.wallSeconds)) s"
        if let s = selected { summary += " (shard \(s))" }
        // The summary line: on a terminal (and in kv) unless -q; in the other styles with -v.
        let showSummary = !progressOptions.quiet && (style == .terminal || style == .kv || verbose)
        display.finish(outcome, summary: showSummary && style != .json ? summary : nil)
        if showSummary && style == .none { fputs("gpuencode: \(summary)\n", stderr) }
        if stream?.hadWriteError == true {
            display.message(nil, level: .warning, "\(progressOptions.progressURL ?? ""): the progress stream could not be written to the end")
        }
        for e in writeErrors { display.error(e.description, exitCode: e.exitCode) }

        if let signal = outcome.interruptedBy {
            let code = GPUEncodeError(.interrupted(signal: signal), "").exitCode
            display.error("batch interrupted by \(signalName(signal)): \(ok) ok, \(outcome.failed) stopped or failed, \(skipped) not run; the state and reports are written, rerun to finish", exitCode: code)
            throw ExitCode(code)
        }
        if outcome.failed > 0 {
            let code = GPUEncodeError(.jobsFailed, "").exitCode
            display.error("\(outcome.failed) of \(jobs.count) jobs failed\(outcome.failStoppedText)", exitCode: code)
            throw ExitCode(code)
        }
        if let e = writeErrors.first { throw ExitCode(e.exitCode) }
    }

    private func defaultStatePath(shard: Shard?) -> String {
        let file = shard.map { $0.count > 1 ? ".gpuencode-state.\($0.index)-of-\($0.count).json" : ".gpuencode-state.json" } ?? ".gpuencode-state.json"
        if let outDir { return outDir + "/" + file }
        if let manifest {
            let slash = manifest.lastIndex(of: "/")
            return slash.map { String(manifest[..<$0]) + "/" + file } ?? file
        }
        return file
    }
}

/// The display as the runner's observer, with notes (-v) filtered out unless asked for.
final class BatchShown: BatchObserver, @unchecked Sendable {
    let display: BatchProgress
    let verbose: Bool

    init(display: BatchProgress, verbose: Bool) {
        self.display = display
        self.verbose = verbose
    }

    func jobStarted(_ job: BatchJob, worker: Int, reason: String) { display.jobStarted(job, worker: worker, reason: reason) }
    func jobProgress(_ job: BatchJob, worker: Int, progress: EncodeProgress) { display.jobProgress(job, worker: worker, progress: progress) }
    func jobEnded(_ result: JobResult) { display.jobEnded(result) }
    func message(_ job: BatchJob?, level: LogLevel, _ text: String) {
        guard level == .warning || verbose else { return }
        display.message(job, level: level, text)
    }
}

extension BatchOutcome {
    var failStoppedText: String { failFastStopped ? " (--fail-fast: the rest were not run)" : "" }
}

/// The folder of a report must exist (or be creatable) and the file writable, before a long run.
func checkWritable(_ path: String) throws {
    let slash = path.lastIndex(of: "/")
    let dir = slash.map { String(path[..<$0]) } ?? "."
    if access(dir.isEmpty ? "/" : dir, W_OK) != 0 && access(dir, F_OK) == 0 {
        throw GPUEncodeError(.outputCreate, path: path, "cannot write in \(dir): \(String(cString: strerror(errno)))")
    }
    var st = stat()
    if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { throw GPUEncodeError(.outputCreate, path: path, "is a directory") }
}

/// Reports replace an older one (a rerun's report is the whole batch's); written via temp + rename.
func writeReport(_ text: String, to path: String) throws {
    try BatchReport.write(text, to: path)
}
