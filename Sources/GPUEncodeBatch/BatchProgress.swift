import Glibc
import GPUEncodeKit

/// Progress of a batch on stderr: on a terminal one live line per running job and a total bar with
/// an ETA; as JSON lines (one event per job start, per second of a job's progress and per job end,
/// then one for the batch); or nothing. Failed jobs are one `gpuencode: error:` line each in every
/// style, so a CI log shows them without parsing.
public final class BatchProgress: BatchObserver, @unchecked Sendable {
    public enum Style: String, Sendable { case terminal, json, none }

    private struct Running {
        let job: BatchJob
        let started: Double
        var frames = 0
        var position = 0.0
        var total: Double?
        var lastEvent = 0.0
        var fraction: Double? {
            guard let t = total, t > 0 else { return nil }
            return min(max(position / t, 0), 1)
        }
    }

    private let style: Style
    private let totalJobs: Int
    private let start = monotonicSeconds()
    private var running: [Int: Running] = [:]
    private var done = 0
    private var failed = 0
    private var skipped = 0
    private var drawnLines = 0
    private var lastDraw = 0.0
    private var mutex = pthread_mutex_t()

    public init(style: Style, totalJobs: Int) {
        self.style = style
        self.totalJobs = totalJobs
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    private func emit(_ members: [(String, JSONValue)]) {
        let line = compactJSON(.obj([("t", .num(rounded(monotonicSeconds() - start, 3)))] + members))
        fputs(line + "\n", stderr)
        fflush(stderr)
    }

    public func jobStarted(_ job: BatchJob, worker: Int, reason: String) {
        locked {
            running[worker] = Running(job: job, started: monotonicSeconds())
            switch style {
            case .json:
                emit([("event", .str("start")), ("job", .int(job.index)), ("worker", .int(worker)), ("input", .str(job.input)),
                      ("output", .str(job.output)), ("preset", .str(job.presetSpec)), ("reason", .str(reason))])
            case .terminal: draw(force: true)
            case .none: break
            }
        }
    }

    public func jobProgress(_ job: BatchJob, worker: Int, frames: Int, position: Double, total: Double?) {
        locked {
            guard var r = running[worker] else { return }
            r.frames = frames
            r.position = position
            r.total = total
            let now = monotonicSeconds()
            if style == .json && now - r.lastEvent >= 1 {
                r.lastEvent = now
                let fps = Double(frames) / max(now - r.started, 1e-6)
                emit([("event", .str("progress")), ("job", .int(job.index)), ("worker", .int(worker)), ("frames", .int(frames)),
                      ("time", .num(rounded(position, 3))), ("percent", .num(r.fraction.map { rounded($0 * 100, 1) })),
                      ("fps", .num(rounded(fps, 2)))])
            }
            running[worker] = r
            if style == .terminal { draw(force: false) }
        }
    }

    public func jobEnded(_ result: JobResult) {
        locked {
            if let w = result.worker, running[w]?.job.index == result.job.index { running[w] = nil }
            done += 1
            if result.status == .failed { failed += 1 }
            if result.status == .skipped { skipped += 1 }
            if style == .terminal { clear() }
            if result.status == .failed, let error = result.error {
                fputs("gpuencode: error: \(error)\n", stderr)
            }
            switch style {
            case .json:
                emit([("event", .str("end")), ("job", .int(result.job.index)), ("input", .str(result.job.input)),
                      ("output", .str(result.job.output)), ("status", .str(result.status.rawValue)), ("reason", .str(result.reason)),
                      ("error", .str(result.error)), ("exitCode", .int(Int(result.exitCode))),
                      ("frames", .int(result.framesOut)), ("wallSeconds", .num(result.status == .skipped ? nil : rounded(result.wallSeconds, 3))),
                      ("done", .int(done)), ("of", .int(totalJobs))])
            case .terminal: draw(force: true)
            case .none: break
            }
            fflush(stderr)
        }
    }

    /// After the run: the batch's end event, or the terminal block cleared and a summary line.
    public func finish(_ outcome: BatchOutcome, summary: String) {
        locked {
            switch style {
            case .json:
                let ok = outcome.results.filter { $0.status == .ok }.count
                emit([("event", .str("done")), ("jobs", .int(outcome.results.count)), ("ok", .int(ok)),
                      ("failed", .int(outcome.failed)), ("skipped", .int(outcome.results.count - ok - outcome.failed)),
                      ("interrupted", .bool(outcome.interruptedBy != nil)), ("wallSeconds", .num(rounded(outcome.wallSeconds, 3)))])
            case .terminal:
                clear()
                fputs("gpuencode: \(summary)\n", stderr)
            case .none: break
            }
            fflush(stderr)
        }
    }

    /// A warning or note line, kept clear of the live block.
    public func message(_ line: String) {
        locked {
            if style == .terminal { clear() }
            fputs(line + "\n", stderr)
            if style == .terminal { draw(force: true) }
        }
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
        var lines: [String] = []
        var partial = 0.0
        for w in running.keys.sorted() {
            let r = running[w]!
            let fps = Double(r.frames) / max(now - r.started, 1e-6)
            let name = splitPath(r.job.input).base
            let short = name.count > 40 ? "…" + name.suffix(39) : name
            partial += r.fraction ?? 0
            lines.append("  [\(w)] \(short)  \(r.fraction.map { format($0 * 100, 1) + "%" } ?? clock(r.position))  \(format(fps, 1)) fps")
        }
        let fraction = totalJobs > 0 ? min(1, (Double(done) + partial) / Double(totalJobs)) : 1
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        var total = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
        total += "\(done)/\(totalJobs) done"
        if failed > 0 { total += ", \(failed) failed" }
        if skipped > 0 { total += ", \(skipped) skipped" }
        let elapsed = now - start
        if fraction > 0.001 && fraction < 1 { total += ", ETA \(clock(elapsed * (1 - fraction) / fraction))" }
        lines.append(total)
        fputs(lines.map { $0 + "\n" }.joined(), stderr)
        fflush(stderr)
        drawnLines = lines.count
    }
}
