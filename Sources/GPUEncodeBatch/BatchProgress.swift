import Glibc
import GPUEncodeKit

/// Progress of a batch on stderr (`--progress`): on a terminal one live line per running job and a
/// total bar with an ETA, each fitted to the terminal's width; as JSON lines, where everything on
/// stderr is an event (warnings and errors too, so `jq` reads the whole stream); as `progress
/// key=value` lines; or nothing. Optionally ffmpeg's `-progress` blocks for the whole batch on a
/// ProgressStream (frames, media time and bytes summed over the jobs, with `jobs_*` keys added).
/// Failed jobs are one `gpuencode: error:` line each in the terminal and kv styles, an `end` event
/// with `status` "failed" and `error` in the JSON style.
public final class BatchProgress: BatchObserver, @unchecked Sendable {
    private struct Running {
        let job: BatchJob
        let started: Double
        var sample = EncodeProgress(frames: 0, position: 0, total: nil)
        var lastEvent = 0.0
    }

    private let style: ProgressStyle
    private let totalJobs: Int
    private let stream: ProgressStream?
    private let statsPeriod: Double
    private let columns: @Sendable () -> Int
    private let start = monotonicSeconds()
    private var running: [Int: Running] = [:]
    private var done = 0
    private var failed = 0
    private var skipped = 0
    /// Media seconds, frames and bytes of the finished jobs (for the ETA and the ffmpeg stream).
    private var finishedMedia: [Double] = []
    private var finishedFrames = 0
    private var finishedBytes: Int64 = 0
    private var drawnLines = 0
    private var lastDraw = 0.0
    private var lastBlock: Double
    /// Guards the display state: the pipeline's threads report, the main thread finishes.
    private let lock = Locked(())

    /// `style`: terminal, json, kv or none (auto resolved by the caller). `columns`: the terminal's
    /// width now. `stream`: where ffmpeg-style blocks go (`--progress-url`), every `statsPeriod` s.
    public init(style: ProgressStyle, totalJobs: Int, stream: ProgressStream? = nil, statsPeriod: Double = 0.5,
                columns: @escaping @Sendable () -> Int = { 80 }) {
        self.style = style
        self.totalJobs = totalJobs
        self.stream = stream
        self.statsPeriod = statsPeriod
        self.columns = columns
        lastBlock = start
    }

    private func locked<R>(_ body: () -> R) -> R { lock.withLock { _ in body() } }

    private func emit(_ members: [(String, JSONValue)]) {
        let line = compactJSON(.obj([("t", .num(rounded(monotonicSeconds() - start, 3)))] + members))
        fputs(line + "\n", stderr)
        fflush(stderr)
    }

    /// The whole batch's share and time left (BatchETA).
    private func estimate(now: Double) -> BatchETA {
        BatchETA.estimate(finished: finishedMedia, running: running.values.map { ($0.sample.position, $0.sample.total) },
                          notStarted: totalJobs - done - running.count, elapsed: now - start)
    }

    public func jobStarted(_ job: BatchJob, worker: Int, reason: String) {
        locked {
            running[worker] = Running(job: job, started: monotonicSeconds())
            switch style {
            case .json:
                emit([("event", .str("start")), ("job", .int(job.index)), ("worker", .int(worker)), ("input", .str(job.input)),
                      ("output", .str(job.output)), ("preset", .str(job.presetSpec)), ("reason", .str(reason))])
            case .terminal: draw(force: true)
            case .kv, .auto, .none: break
            }
        }
    }

    public func jobProgress(_ job: BatchJob, worker: Int, progress: EncodeProgress) {
        locked {
            guard var r = running[worker] else { return }
            r.sample = progress
            let now = monotonicSeconds()
            let emitNow = (style == .json || style == .kv) && now - r.lastEvent >= 1
            if emitNow { r.lastEvent = now }
            running[worker] = r
            if emitNow {
                let figures = ProgressFigures(progress, elapsed: now - r.started, final: false)
                if style == .json {
                    let batch = estimate(now: now)
                    emit([("event", .str("progress")), ("job", .int(job.index)), ("worker", .int(worker))] + figures.jsonMembers
                         + [("batchPercent", .num(rounded(batch.fraction * 100, 1))), ("batchEta", .num(batch.eta.map { rounded($0, 1) }))])
                } else {
                    fputs("progress job=\(job.index) worker=\(worker) " + figures.keyValueLine.dropFirst("progress ".count) + "\n", stderr)
                    fflush(stderr)
                }
            }
            if stream != nil && now - lastBlock >= statsPeriod {
                lastBlock = now
                writeBlock(now: now, final: false)
            }
            if style == .terminal { draw(force: false) }
        }
    }


    public func jobEnded(_ result: JobResult) {
        locked {
            let now = monotonicSeconds()
            var sample: EncodeProgress?
            if let w = result.worker, running[w]?.job.index == result.job.index {
                sample = running[w]?.sample
                running[w] = nil
            }
            done += 1
            if result.status == .failed { failed += 1 }
            if result.status == .skipped { skipped += 1 }
            if let s = sample {
                // A finished job weighs its whole length; a failed one what it reached.
                finishedMedia.append(result.status == .ok ? max(s.total ?? s.position, s.position) : s.position)
                finishedFrames += result.framesOut ?? s.frames
                finishedBytes += result.outputFacts?.bytes ?? s.bytes ?? 0
            }
            if style == .terminal { clear() }
            if result.status == .failed, let error = result.error, style != .json {
                fputs("gpuencode: error: \(error)\n", stderr)
            }
            switch style {
            case .json:
                emit([("event", .str("end")), ("job", .int(result.job.index)), ("input", .str(result.job.input)),
                      ("output", .str(result.job.output)), ("status", .str(result.status.rawValue)), ("reason", .str(result.reason)),
                      ("error", .str(result.error)), ("exitCode", .int(Int(result.exitCode))),
                      ("frames", .int(result.framesOut)), ("wallSeconds", .num(result.status == .skipped ? nil : rounded(result.wallSeconds, 3))),
                      ("size", .int64(result.outputFacts?.bytes)), ("warnings", .int(result.warnings.count)),
                      ("done", .int(done)), ("of", .int(totalJobs))])
            case .kv:
                var line = "progress job=\(result.job.index) status=\(result.status.rawValue) exit=\(result.exitCode)"
                line += " frame=\(result.framesOut.map(String.init) ?? "unknown") done=\(done) of=\(totalJobs)"
                fputs(line + "\n", stderr)
            case .terminal: draw(force: true)
            case .auto, .none: break
            }
            if stream != nil { writeBlock(now: now, final: false) }
            fflush(stderr)
        }
    }

    /// A warning or note, of a job (`job`) or of the batch: a JSON event, or a line kept clear of
    /// the live block.
    public func message(_ job: BatchJob?, level: LogLevel, _ text: String) {
        locked {
            let name = level == .warning ? "warning" : "note"
            if style == .json {
                emit([("event", .str(name)), ("job", .int(job?.index)), ("message", .str(text))])
                return
            }
            if style == .terminal { clear() }
            fputs("gpuencode: \(level == .warning ? "warning: " : "")\(text)\n", stderr)
            if style == .terminal { draw(force: true) }
            fflush(stderr)
        }
    }

    /// A batch-level error (the batch failed, was interrupted, a report could not be written):
    /// `gpuencode: error: TEXT`, or an `error` event with the exit code.
    public func error(_ text: String, exitCode: Int32) {
        locked {
            if style == .json {
                emit([("event", .str("error")), ("message", .str(text)), ("exitCode", .int(Int(exitCode)))])
                return
            }
            if style == .terminal { clear() }
            fputs("gpuencode: error: \(text)\n", stderr)
            fflush(stderr)
        }
    }

    /// After the run: the batch's `done` event, or the terminal block cleared and a summary line
    /// (`summary` nil: none, as with -q); the ffmpeg stream's `progress=end`.
    public func finish(_ outcome: BatchOutcome, summary: String?) {
        locked {
            switch style {
            case .json:
                let ok = outcome.results.filter { $0.status == .ok }.count
                emit([("event", .str("done")), ("jobs", .int(outcome.results.count)), ("ok", .int(ok)),
                      ("failed", .int(outcome.failed)), ("skipped", .int(outcome.results.count - ok - outcome.failed)),
                      ("warnings", .int(outcome.results.reduce(0) { $0 + $1.warnings.count })),
                      ("interrupted", .bool(outcome.interruptedBy != nil)), ("wallSeconds", .num(rounded(outcome.wallSeconds, 3)))])
            case .terminal, .kv:
                if style == .terminal { clear() }
                if let summary { fputs("gpuencode: \(summary)\n", stderr) }
            case .auto, .none: break
            }
            if stream != nil { writeBlock(now: monotonicSeconds(), final: true) }
            fflush(stderr)
        }
    }

    /// ffmpeg's block for the whole batch: frames, media time and bytes summed over the jobs.
    private func writeBlock(now: Double, final: Bool) {
        guard let stream else { return }
        let batch = estimate(now: now)
        var frames = finishedFrames, bytes = finishedBytes
        for r in running.values {
            frames += r.sample.frames
            bytes += r.sample.bytes ?? 0
        }
        let sample = EncodeProgress(frames: frames, position: batch.doneMedia, total: batch.totalMedia, bytes: bytes)
        let figures = ProgressFigures(sample, elapsed: now - start, final: false)
        let extra = [("jobs", String(totalJobs)), ("jobs_done", String(done)), ("jobs_failed", String(failed)),
                     ("jobs_skipped", String(skipped)), ("jobs_running", String(running.count))]
        var block = figures.ffmpegBlock(extra: extra, quality: false)
        if final { block = String(block.dropLast("progress=continue\n".count)) + "progress=end\n" }
        stream.write(block)
    }

    private func clear() {
        guard drawnLines > 0 else { return }
        fputs("\u{1B}[\(drawnLines)A\r\u{1B}[J", stderr)
        drawnLines = 0
    }

    private func draw(force: Bool) {
        let now = monotonicSeconds()
        guard force || now - lastDraw >= 0.25 else { return }
        lastDraw = now
        clear()
        let width = max(10, columns())
        var lines: [String] = []
        for w in running.keys.sorted() {
            let r = running[w]!
            let figures = ProgressFigures(r.sample, elapsed: now - r.started, final: false)
            let name = splitPath(r.job.input).base
            var parts: [(text: String, keep: Int)] = [("  [\(w)]", 9), (name, 8)]
            parts.append((figures.fraction.map { format($0 * 100, 1) + "%" } ?? clock(r.sample.position), 7))
            if let s = figures.speed { parts.append((speedText(s), 5)) }
            parts.append(("\(format(figures.fps, 1)) fps", 3))
            if let b = r.sample.bytes { parts.append((byteSize(b), 2)) }
            if let eta = figures.eta { parts.append(("ETA \(clock(eta))", 4)) }
            // The parts that fit with the name at its shortest (8 characters), then the name as
            // long as the room left allows, shortened from the front (the end tells files apart).
            var shortest = parts
            if name.count > 8 { shortest[1].text = "…" + name.suffix(7) }
            let kept = fitParts(shortest, columns: width)
            let room = width - 1 - kept.filter { $0 != 1 }.map { parts[$0].text.count + 1 }.reduce(0, +)
            if name.count > room { parts[1].text = "…" + name.suffix(max(7, room - 1)) }
            lines.append(fitText(kept.map { parts[$0].text }.joined(separator: " "), columns: width))
        }
        let batch = estimate(now: now)
        var counts = "\(done)/\(totalJobs) done"
        if failed > 0 { counts += ", \(failed) failed" }
        if skipped > 0 { counts += ", \(skipped) skipped" }
        if let eta = batch.eta, batch.fraction < 1 { counts += ", ETA \(clock(eta))" }
        // The bar takes what is left of the width, up to 30 characters; none when under 5.
        let barWidth = min(30, width - 1 - counts.count - 3)
        var total = counts
        if barWidth >= 5 {
            let filled = Int((batch.fraction * Double(barWidth)).rounded(.down))
            total = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] " + counts
        }
        lines.append(fitText(total, columns: width))
        fputs(lines.map { $0 + "\n" }.joined(), stderr)
        fflush(stderr)
        drawnLines = lines.count
    }
}
