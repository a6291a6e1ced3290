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
        must stay inside --out-dir: absolute names and `..` (written or expanded) are refused (64).

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

        PARALLELISM: --jobs N transcodes at once (default \(BatchRunOptions.defaultJobs()) on this machine's \(onlineCores()) cores: one per \
        4 cores, at least 2), each with its own GL context and cores/N encoder threads (--threads).

        PROGRESS: on a terminal a line per running job and a total bar with ETA; otherwise JSON lines on \
        stderr (events start, progress once a second per job, end, done). --progress none for quiet.

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

    @Option(name: [.long, .customShort("j")], help: ArgumentHelp("Jobs at once (default: cores / 4, at least 2).", valueName: "n"))
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

    @Option(help: ArgumentHelp("terminal, json or none (default: terminal on a terminal, else json).", valueName: "style"))
    var progress: String?

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
        if let progress, BatchProgress.Style(rawValue: progress) == nil { throw ValidationError("--progress must be terminal, json or none") }
    }

    func run() throws {
        do {
            try runBatch()
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
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
        if let n = self.jobs { options.jobs = n }
        options.threadsPerJob = overrides.threads ?? 0
        options.hwaccel = try resolveHWAccel(overrides.hwaccel)
        let selection = try gpuOptions.selection()
        options.gpu = selection
        options.resume = ResumePolicy(skipExisting: skipExisting, force: force, hash: hash)
        options.failFast = failFast

        if dryRun {
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

        // Report files are checked for writability now, not after an hour of transcoding.
        for path in [report, junit].compactMap({ $0 }) { try checkWritable(path) }

        let isTTY = isatty(2) == 1
        let style = progress.flatMap(BatchProgress.Style.init(rawValue:)) ?? (isTTY ? .terminal : .json)
        let display = BatchProgress(style: style, totalJobs: jobs.count)
        let verbose = self.verbose
        options.log = { level, message in
            guard level == .warning || verbose else { return }
            display.message("gpuencode: \(level == .warning ? "warning: " : "")\(message)")
        }
        MediaLog.setLevel(verbose: verbose)
        gpuencode_install_signal_handlers()
        let runner = BatchRunner(jobs: jobs, options: options, state: batchState, observer: display)
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
        display.finish(outcome, summary: summary)
        if verbose && style != .terminal { fputs("gpuencode: \(summary)\n", stderr) }
        for e in writeErrors { fputs("gpuencode: error: \(e.description)\n", stderr) }

        if let signal = outcome.interruptedBy {
            fputs("gpuencode: error: batch interrupted by \(signalName(signal)): \(ok) ok, \(outcome.failed) stopped or failed, \(skipped) not run; the state and reports are written, rerun to finish\n", stderr)
            throw ExitCode(GPUEncodeError(.interrupted(signal: signal), "").exitCode)
        }
        if outcome.failed > 0 {
            fputs("gpuencode: error: \(outcome.failed) of \(jobs.count) jobs failed\(outcome.failStoppedText)\n", stderr)
            throw ExitCode(GPUEncodeError(.jobsFailed, "").exitCode)
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
