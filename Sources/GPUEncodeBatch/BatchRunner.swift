import CSystemShim
import Glibc
import GPUEncodeKit

/// Receives what happens to the jobs, from the worker threads (implementations lock themselves).
public protocol BatchObserver: AnyObject, Sendable {
    func jobStarted(_ job: BatchJob, worker: Int, reason: String)
    func jobProgress(_ job: BatchJob, worker: Int, progress: EncodeProgress)
    /// A warning (or, with -v, a note) of a job, or of the batch when `job` is nil.
    func message(_ job: BatchJob?, level: LogLevel, _ text: String)
    func jobEnded(_ result: JobResult)
}

public struct BatchRunOptions: Sendable {
    /// Jobs at once, each on its own thread (rendering on the shared context or one of its own:
    /// `sharedContext`); nil: `defaultJobs` for this machine and its GPU.
    public var jobs: Int?
    /// x264 (and decoder) threads per job; 0 means cores / jobs.
    public var threadsPerJob = 0
    public var gpu: GPUSelection = .auto
    /// Video decoding of every job (`--hwaccel`).
    public var hwaccel: HardwareAcceleration = .none
    /// NVDEC frames stay on the GPU where they can (`TranscodeOptions.cudaInterop`).
    public var cudaInterop = true
    public var renderPath: RenderPath = .direct
    /// One GL context on one thread rendering for every job (`GLThread`), rather than a context per
    /// worker: nil decides by the GPU (shared on hardware GPUs, where it measured faster; a context
    /// per worker on llvmpipe, which renders on the CPU cores the jobs share anyway).
    public var sharedContext: Bool?
    public var resume = ResumePolicy()
    public var failFast = false
    /// Warnings and notes of the jobs, one line each (prefixed with the input by the runner).
    public var log: @Sendable (LogLevel, String) -> Void = { _, _ in }

    public init() {}

    /// What keeps this machine busy without oversubscribing it: x264 threads × jobs ≈ cores, with
    /// enough jobs that one job's start-up and tail (probing, the encoder's flush) overlap the others'
    /// steady state: one job per 4 cores, at least 2 where there are 2 cores. On a hardware GPU, whose
    /// one context every job shares, one job per 2 cores (H100, 16 cores: 8 jobs 342 files/min, 16
    /// jobs 351, 4 jobs 304; docs/PERFORMANCE.md, "Batch with one shared GL context").
    public static func defaultJobs(cores: Int = onlineCores(), sharedHardwareContext: Bool = false) -> Int {
        cores <= 1 ? 1 : max(2, cores / (sharedHardwareContext ? 2 : 4))
    }

    /// Encoder (and decoder) threads of each of `jobs` jobs at once.
    public func threads(jobs: Int, cores: Int = onlineCores()) -> Int {
        threadsPerJob > 0 ? threadsPerJob : max(1, cores / max(1, jobs))
    }
}

public struct BatchOutcome: Sendable {
    /// One per job of the shard, in plan order.
    public let results: [JobResult]
    /// The signal that stopped the batch, if one did.
    public let interruptedBy: Int32?
    public let failFastStopped: Bool
    public let wallSeconds: Double

    public var failed: Int { results.filter { $0.status == .failed }.count }
}

/// Runs a shard's jobs on worker threads, each job a `Transcoder.run` (the single-file command's
/// path) with its own options. Memory is bounded by the number of workers, not of files: a worker
/// holds one transcode (bounded queues) and the results are small.
public final class BatchRunner: @unchecked Sendable {
    private let jobs: [BatchJob]
    private let options: BatchRunOptions
    private let state: BatchState?
    private let observer: BatchObserver?
    private let next = Locked(0)
    private let results: Locked<[JobResult?]>
    private let stop = Locked(false)

    public init(jobs: [BatchJob], options: BatchRunOptions, state: BatchState?, observer: BatchObserver?) {
        self.jobs = jobs
        self.options = options
        self.state = state
        self.observer = observer
        results = Locked(Array(repeating: nil, count: jobs.count))
    }

    /// The context every job renders on, when shared (`BatchRunOptions.sharedContext`).
    private var shared: GLThread?
    /// The CUDA device every job's NVDEC decoder shares (`--hwaccel cuda|auto`), made by the first.
    private var cudaDevice: CUDADevice?
    /// `--jobs`, or the default for the machine and its GPU.
    private var jobsAtOnce = 1

    /// Made once for the batch; nil where it is not to be shared or cannot be made (then each job
    /// makes its own and reports the failure as its own error, as a single run does).
    private func sharedGL() -> GLThread? {
        // Whether a job renders at all depends on its input too (HDR, interlacing, scaling), so the
        // context is made whenever one is to be shared; a batch of `--preset none` holds it unused.
        guard options.sharedContext != false else { return nil }
        guard let thread = try? GLThread(selection: options.gpu) else { return nil }
        if options.sharedContext == nil && thread.isSoftware { return nil }
        options.log(.info, "GPU: \(thread.renderer) (\(thread.version); \(thread.platform)), one context for every job")
        return thread
    }

    private var stopping: Bool { stop.withLock { $0 } || gpuencode_interrupt_signal() != 0 }

    /// Throws only when not even one worker thread can be started; with fewer threads than
    /// --jobs asked for, the batch runs on those it has (a warning says so).
    public func run() throws -> BatchOutcome {
        let started = monotonicSeconds()
        shared = jobs.count > 1 && (options.jobs ?? 2) > 1 ? sharedGL() : nil
        // One CUDA context for every job's NVDEC decoder (CUDADevice says why).
        cudaDevice = options.hwaccel == .none ? nil : CUDADevice()
        jobsAtOnce = options.jobs ?? BatchRunOptions.defaultJobs(sharedHardwareContext: shared.map { !$0.isSoftware } ?? false)
        let workers = max(1, min(jobsAtOnce, jobs.count))
        var threads: [WorkerThread] = []
        for w in 1...workers {
            do {
                threads.append(try WorkerThread(name: "gpuencode-job\(w)") { [self] in work(worker: w) })
            } catch let e as GPUEncodeError {
                if threads.isEmpty { throw e }
                options.log(.warning, "\(e.message); running \(threads.count) jobs at once instead of \(workers)")
                break
            }
        }
        threads.forEach { $0.join() }
        let signal = gpuencode_interrupt_signal()
        let stoppedByFailFast = signal == 0 && stop.withLock { $0 }
        let all = results.withLock { $0 }.enumerated().map { i, r -> JobResult in
            if let r { return r }
            return JobResult(job: jobs[i], status: .skipped, reason: signal != 0 ? "not run: interrupted" : "not run: --fail-fast stopped the batch")
        }
        return BatchOutcome(results: all, interruptedBy: signal != 0 ? signal : nil, failFastStopped: stoppedByFailFast,
                            wallSeconds: monotonicSeconds() - started)
    }

    private func work(worker: Int) {
        while !stopping {
            let i = next.withLock { n -> Int in defer { n += 1 }; return n }
            guard i < jobs.count else { return }
            let result = runJob(jobs[i], worker: worker)
            results.withLock { $0[i] = result }
            if result.status == .failed && options.failFast { stop.withLock { $0 = true } }
            observer?.jobEnded(result)
        }
    }

    private func runJob(_ job: BatchJob, worker: Int) -> JobResult {
        var result = JobResult(job: job, status: .failed)
        result.worker = worker
        let t0 = monotonicSeconds()
        let record = state?.record(for: job.output)
        var contentHash: String?
        // A batch runs unattended: a FIFO named as an input would hold a worker forever when nothing
        // writes to it, and a device (/dev/zero) never ends. One transcode at a shell may read them.
        var st = stat()
        if stat(job.input, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
            let what = SafeFile.describe(mode: st.st_mode)
            return failed(result, GPUEncodeError(.input, path: job.input, "\(what), not a regular file; batch inputs must be regular files"), since: t0)
        }
        let decision: JobDecision
        do {
            decision = try options.resume.decide(job, record: record) {
                contentHash = try FNV1a64.file(job.input)
                return contentHash
            }
        } catch {
            return failed(result, error, since: t0)
        }
        let overwrite: Bool
        switch decision {
        case .skip(let reason):
            // Up to date by size and mtime, run now with --hash: the record gains the content hash,
            // so the next run (in a checkout with fresh mtimes) recognises the input.
            if options.resume.hash, var r = record, r.inputHash == nil, let state, let h = try? FNV1a64.file(job.input) {
                r.inputHash = h
                state.set(r, for: job.output)
                saveState()
            }
            result.status = .skipped
            result.reason = reason
            result.worker = nil
            return result
        case .refuse(let reason):
            return failed(result, GPUEncodeError(.outputCreate, path: job.output, reason), since: t0)
        case .run(let o, let reason):
            overwrite = o
            result.reason = reason
        }
        observer?.jobStarted(job, worker: worker, reason: result.reason ?? "")
        let warnings = Locked<[String]>([])
        result.inputFacts = MediaFacts.probe(job.input)
        do {
            var o = TranscodeOptions(input: job.input, output: job.output, preset: job.preset)
            if let place = job.underOutDir {
                // --out-dir is the user's (made when missing, links in it followed); the folders
                // below it are walked and made without following links, and the output is written
                // relative to the last, so a folder swapped for a link cannot take it elsewhere.
                try makeDirectories(place.folder)
                o.outputFolder = try ContainedDirectory(root: place.folder).descend(splitPath(place.below).dir, creating: true)
            } else {
                try makeDirectories(splitPath(job.output).dir)
            }
            let threads = options.threads(jobs: jobsAtOnce)
            o.reuseGPUContext = true
            o.sharedGL = shared
            o.overwrite = overwrite
            o.encoder = job.encoderSettings(threads: threads)
            o.decoderThreads = threads
            o.gpu = options.gpu
            o.hwaccel = options.hwaccel
            o.cudaInterop = options.cudaInterop
            o.cudaDevice = cudaDevice
            o.renderPath = options.renderPath
            let log = options.log
            let input = job.input
            let observer = self.observer
            // A job's warnings go to the display with the job they belong to (a JSON event names it)
            // and into its result, so the reports carry them too.
            o.log = { level, message in
                let line = message.hasPrefix(input) ? message : "\(input): \(message)"
                if level == .warning { warnings.withLock { $0.append(line) } }
                if let observer { observer.message(job, level: level, line) } else { log(level, line) }
            }
            o.onFrame = { progress in observer?.jobProgress(job, worker: worker, progress: progress) }
            let stop = self.stop
            o.shouldStop = { stop.withLock { $0 } }
            // With --hash the digest is taken before the run, so a file that changes while it is
            // read is redone next time rather than trusted.
            if options.resume.hash && contentHash == nil { contentHash = try FNV1a64.file(job.input) }
            let stampBefore = FileStamp(job.input)
            let summary: TranscodeSummary
            do { summary = try Transcoder.run(o) } catch {
                result.warnings = warnings.withLock { $0 }
                throw error
            }
            result.warnings = warnings.withLock { $0 }
            result.status = .ok
            result.exitCode = 0
            result.framesOut = summary.frames
            result.renderer = summary.renderer
            result.wallSeconds = monotonicSeconds() - t0
            result.outputFacts = MediaFacts.probe(job.output)
            if let state, let stamp = stampBefore {
                state.set(JobRecord(input: job.input, inputSize: stamp.size, inputMtime: stamp.mtime, inputHash: contentHash,
                                    presetDigest: job.presetDigest, settingsDigest: job.settingsDigest,
                                    version: GPUEncodeVersion.string, finishedAt: isoTimestamp()), for: job.output)
                saveState()
            }
            return result
        } catch let e as GPUEncodeError {
            if case .interrupted(let sig) = e.kind, sig == 0 {
                result.status = .skipped
                result.reason = "stopped: --fail-fast (another job failed)"
                result.wallSeconds = monotonicSeconds() - t0
                return result
            }
            return failed(result, e, since: t0)
        } catch {
            return failed(result, error, since: t0)
        }
    }

    private func failed(_ r: JobResult, _ error: Error, since t0: Double) -> JobResult {
        var r = r
        let e = error as? GPUEncodeError ?? GPUEncodeError(.internal, path: r.job.input, "\(error)")
        r.status = .failed
        r.error = e.description
        r.exitCode = e.exitCode
        r.wallSeconds = monotonicSeconds() - t0
        return r
    }

    private let saveLock = Locked(())

    /// Saved after each finished job; a failure to save is a warning (the outputs are good).
    private func saveState() {
        guard let state else { return }
        saveLock.withLock { _ in
            do { try state.save() } catch let e as GPUEncodeError {
                options.log(.warning, "\(state.path): cannot save the state: \(e.message)")
            } catch {}
        }
    }

    /// Saves the state at the end (records of every finished job are already in it).
    public func finish() throws {
        try state?.save()
    }
}
