import ArgumentParser
import CSystemShim
import GPUEncodeKit
import Glibc

/// `--progress`, `--progress-url` (ffmpeg's `-progress`) and `-q`: one set for the transcode and
/// `batch` (docs/ci.md describes the formats exactly).
struct ProgressOptions: ParsableArguments {
    @Option(name: .customLong("progress"), help: ArgumentHelp(
        "Progress on stderr. auto: a line redrawn in place on a terminal; off a terminal nothing for a transcode, JSON lines for batch. terminal: that line anyway, fitted to the width. json: one JSON object per line, warnings and errors too. kv: a `progress key=value ...` line a second. none. docs/ci.md lists every key.",
        valueName: "auto|terminal|json|kv|none"), completion: .list(ProgressStyle.allCases.map(\.rawValue)))
    var progress: String = "auto"

    @Option(name: [.customLong("progress-url"), .customLong("progress", withSingleDash: true)], help: ArgumentHelp(
        "Also write ffmpeg's -progress blocks (frame, fps, bitrate, total_size, out_time_us, out_time, speed, ..., progress=continue|end) to FILE, pipe:1 (stdout) or pipe:2 (stderr), every --stats-period seconds. A FIFO or device is written as it is; a symbolic link is refused; an existing file is replaced only with -y (by batch always, as its reports are).",
        valueName: "FILE|pipe:1|pipe:2"), completion: .file())
    var progressURL: String?

    @Option(name: [.customLong("stats-period"), .customLong("stats_period", withSingleDash: true)], help: ArgumentHelp(
        "Seconds between two --progress-url blocks (ffmpeg's -stats_period).", valueName: "seconds"))
    var statsPeriod: Double = 0.5

    @Flag(name: .shortAndLong, help: "Quiet: no progress and no final line (a batch: no summary) on stderr; warnings and errors are still printed.")
    var quiet = false

    /// The older spelling (`--no-progress`), kept as `--progress none`.
    @Flag(name: .customLong("no-progress"), help: .hidden)
    var noProgress = false

    /// The style `--progress` names; "on" is what the old bare `--progress` flag becomes (main.swift).
    private var asked: ProgressStyle? {
        progress == "on" ? .auto : ProgressStyle(rawValue: progress)
    }

    func validate() throws {
        guard let asked else { throw ValidationError("--progress must be auto, terminal, json, kv or none") }
        if quiet && asked != .auto && asked != .none {
            throw ValidationError("-q/--quiet and --progress \(progress) contradict each other")
        }
        guard statsPeriod.isFinite, statsPeriod > 0, statsPeriod <= 3600 else { throw ValidationError("--stats-period must be more than 0 and at most 3600 seconds") }
        if let url = progressURL, url.isEmpty { throw ValidationError("--progress-url needs FILE, pipe:1 or pipe:2") }
    }

    /// Whether the ffmpeg-style stream goes to stdout (which then carries nothing else).
    var streamOnStdout: Bool { progressURL.flatMap(ProgressStream.standardStream) == 1 }

    /// What stderr shows: `-q`, `--no-progress` and a stream on stderr (pipe:2) quieten `auto`;
    /// off a terminal `auto` is `offTerminal` (the old bare `--progress`: kv).
    func style(offTerminal: ProgressStyle) -> ProgressStyle {
        let asked = self.asked ?? .auto
        if quiet || noProgress { return .none }
        if asked == .auto && progressURL.flatMap(ProgressStream.standardStream) == 2 { return .none }
        return asked.resolved(onTerminal: isatty(2) == 1, offTerminal: progress == "on" ? .kv : offTerminal)
    }

    /// Opens the `--progress-url` stream (73 for a file that cannot be written, as for an output).
    func openStream(overwrite: Bool) throws -> ProgressStream? {
        try progressURL.map { try ProgressStream(url: $0, overwrite: overwrite) }
    }

    /// The terminal's width, asked at every redraw: TIOCGWINSZ on stderr, else $COLUMNS, else 80.
    static let columns: @Sendable () -> Int = {
        let n = Int(gpuencode_terminal_columns(2))
        if n > 0 { return n }
        if let c = Environment.value("COLUMNS").flatMap({ Int($0) }), c > 0 { return c }
        return 80
    }
}

/// Before parsing: the transcode's old bare `--progress` flag (kv lines off a terminal) takes no
/// value; followed by no style word it becomes `--progress=on`, so old scripts keep working.
func rewriteLegacyProgressFlag(_ arguments: [String]) -> [String] {
    guard let first = arguments.first, first == "transcode" || GPUEncode.configuration.subcommands.allSatisfy({ $0._commandName != first }) else {
        return arguments
    }
    var out = arguments
    for i in out.indices {
        if out[i] == "--" { break }
        guard out[i] == "--progress" else { continue }
        let next = i + 1 < out.count ? out[i + 1] : nil
        if next.map({ ProgressStyle(rawValue: $0) == nil }) ?? true { out[i] = "--progress=on" }
    }
    return out
}
