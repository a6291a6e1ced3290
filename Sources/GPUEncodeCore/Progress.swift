import Glibc

/// A transcode's progress: on stderr in the chosen style (a line redrawn in place on a terminal,
/// `progress key=value` lines, or JSON events), and as ffmpeg's `-progress` blocks to a
/// ProgressStream. The pipeline calls `update` with each packet out of the encoder; the command calls
/// `finish` once the output is in place. In the JSON style warnings and errors are events too, so
/// every stderr line parses.
public final class ProgressReporter: @unchecked Sendable {
    private let style: ProgressStyle
    private let stream: ProgressStream?
    private let columns: @Sendable () -> Int
    private let statsPeriod: Double
    private let start = monotonicSeconds()
    private var lastDisplay = -Double.infinity
    private var lastBlock: Double
    private var last = EncodeProgress(frames: 0, position: 0, total: nil)
    private var printedTerminalLine = false
    /// Guards the display state: the pipeline's threads report, the main thread finishes.
    private let lock = Locked(())

    /// `style`: terminal, json, kv or none (auto resolved by the caller). `columns`: the terminal's
    /// width now (asked at every redraw, so a resized window is followed). `statsPeriod`: seconds
    /// between two blocks on `stream` (ffmpeg's -stats_period, 0.5 s by default).
    public init(style: ProgressStyle, stream: ProgressStream? = nil, statsPeriod: Double = 0.5, columns: @escaping @Sendable () -> Int = { 80 }) {
        self.style = style
        self.stream = stream
        self.columns = columns
        self.statsPeriod = statsPeriod
        lastBlock = start
    }

    private func locked<R>(_ body: () -> R) -> R { lock.withLock { _ in body() } }

    /// The latest sample from the encoder; shown when the style's interval has passed.
    package func update(_ sample: EncodeProgress) {
        locked {
            last = sample
            let now = monotonicSeconds()
            let figures = ProgressFigures(sample, elapsed: now - start, final: false)
            if let stream, now - lastBlock >= statsPeriod {
                lastBlock = now
                stream.write(figures.ffmpegBlock())
            }
            let interval = style == .terminal ? 0.25 : 1.0
            guard style != .none, now - lastDisplay >= interval else { return }
            lastDisplay = now
            show(figures)
        }
    }

    /// The output is complete: the last line (100%, the final frame count and the file's size) and
    /// ffmpeg's `progress=end` block. `event` members go into the json style's `end` event.
    @discardableResult
    package func finish(frames: Int, bytes: Int64?, event: [(String, JSONValue)] = []) -> ProgressFigures {
        locked {
            var sample = last
            sample.frames = frames
            if let bytes { sample.bytes = bytes }
            if let total = sample.total, total > sample.position { sample.position = total }
            let figures = ProgressFigures(sample, elapsed: monotonicSeconds() - start, final: true)
            stream?.write(figures.ffmpegBlock())
            switch style {
            case .terminal:
                show(figures)
                fputs("\n", stderr)
                printedTerminalLine = false
            case .kv: show(figures)
            case .json: emit([("event", .str("end"))] + figures.jsonMembers + event)
            case .auto, .none: break
            }
            fflush(stderr)
            return figures
        }
    }

    /// Whether writing the `--progress-url` stream failed (the command warns once at the end).
    public var streamFailed: Bool { stream?.hadWriteError ?? false }

    private func show(_ figures: ProgressFigures) {
        switch style {
        case .terminal:
            fputs("\r\u{1B}[K" + figures.terminalLine(columns: columns()), stderr)
            printedTerminalLine = true
        case .kv: fputs(figures.keyValueLine + "\n", stderr)
        case .json: emit([("event", .str("progress"))] + figures.jsonMembers)
        case .auto, .none: return
        }
        fflush(stderr)
    }

    private func emit(_ members: [(String, JSONValue)]) {
        fputs(compactJSON(.obj([("t", .num(roundedTo(monotonicSeconds() - start, 3)))] + members)) + "\n", stderr)
        fflush(stderr)
    }

    /// A warning (`level` "warning"), a note ("note", -v) or an error ("error", with its exit code):
    /// one plain `gpuencode: ...` line, clear of a half-drawn terminal line, or one JSON event.
    public func message(_ level: String, _ text: String, exitCode: Int32? = nil) {
        locked {
            if style == .json {
                var members: [(String, JSONValue)] = [("event", .str(level)), ("message", .str(text))]
                if let exitCode { members.append(("exitCode", .int(Int(exitCode)))) }
                emit(members)
                return
            }
            if printedTerminalLine { fputs("\n", stderr); printedTerminalLine = false }
            fputs("gpuencode: \(level == "note" ? "" : level + ": ")\(text)\n", stderr)
            fflush(stderr)
        }
    }

    /// Whether the style writes JSON lines (then every stderr line must be one).
    public var isJSON: Bool { style == .json }
}

package func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

package func format(_ v: Double, _ decimals: Int) -> String {
    guard v.isFinite else { return "-" }
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    let r = (v * p).rounded() / p
    var s = String(r)
    if decimals == 0, let dot = s.firstIndex(of: ".") { s = String(s[..<dot]) }
    if let dot = s.firstIndex(of: ".") {
        let have = s.distance(from: dot, to: s.endIndex) - 1
        if have < decimals { s += String(repeating: "0", count: decimals - have) }
    }
    return s
}

package func clock(_ seconds: Double) -> String {
    // An estimate from a file that lies about its length can be anything: no Int() of it unchecked.
    guard let t = Int(inRange: seconds.rounded()), t >= 0 else { return "-" }
    let (h, m, s) = (t / 3600, (t / 60) % 60, t % 60)
    let mm = m < 10 ? "0\(m)" : "\(m)"
    let ss = s < 10 ? "0\(s)" : "\(s)"
    return h > 0 ? "\(h):\(mm):\(ss)" : "\(m):\(ss)"
}
