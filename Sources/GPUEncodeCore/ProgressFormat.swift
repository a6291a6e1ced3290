import Glibc

// How progress is written: the styles `--progress` names, a sample of the encoder's output and the
// text of each form (terminal line fitted to the width, key=value line, JSON event, ffmpeg's
// `-progress` block). The reporters (ProgressReporter, BatchProgress) decide when; this file says what.

/// `--progress`: how progress is shown on stderr, for the transcode and for `batch`.
public enum ProgressStyle: String, CaseIterable, Sendable {
    /// terminal on a terminal, else the command's own choice (`resolved`).
    case auto
    /// A line redrawn in place, fitted to the terminal's width.
    case terminal
    /// One JSON object per line; warnings and errors too.
    case json
    /// One `progress key=value ...` line a second.
    case kv
    case none

    /// What `auto` means here: `terminal` on a terminal, else `offTerminal`.
    public func resolved(onTerminal: Bool, offTerminal: ProgressStyle) -> ProgressStyle {
        self == .auto ? (onTerminal ? .terminal : offTerminal) : self
    }
}

/// What the encoder has given out so far. Frames are counted as they come out of the encoder (its
/// packets), not as they go in: an encoder holds dozens of frames (x264's lookahead), so counting
/// frames in showed 96% while it drained.
public struct EncodeProgress: Sendable {
    /// Frames out of the encoder.
    public var frames: Int
    /// Seconds of media encoded, from the video's start (the end of the latest frame out).
    public var position: Double
    /// Seconds the transcode covers (nil when the input does not say), as the pipeline reports it.
    public var total: Double?
    /// Bytes written to the output so far (nil when unknown).
    public var bytes: Int64?
    /// The encoder's quantizer for the latest frame (ffmpeg's `q`), nil when the encoder does not say.
    public var quality: Double?
    /// The video stream's index in the output (ffmpeg's `stream_0_N_q`).
    public var outputStream: Int

    public init(frames: Int, position: Double, total: Double?, bytes: Int64? = nil, quality: Double? = nil, outputStream: Int = 0) {
        self.frames = frames
        self.position = position
        self.total = total
        self.bytes = bytes
        self.quality = quality
        self.outputStream = outputStream
    }

    /// 0...1 of the total, nil when the total is unknown.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(max(position / total, 0), 1)
    }
}

/// The figures every form shows, from a sample and the wall time since the start.
package struct ProgressFigures {
    package let sample: EncodeProgress
    package let elapsed: Double
    package let final: Bool

    package init(_ sample: EncodeProgress, elapsed: Double, final: Bool) {
        self.sample = sample
        self.elapsed = max(elapsed, 1e-6)
        self.final = final
    }

    package var fraction: Double? { final ? 1 : sample.fraction }
    package var fps: Double { Double(sample.frames) / elapsed }
    /// Media seconds per wall second (ffmpeg's speed).
    package var speed: Double? { sample.position > 0 ? sample.position / elapsed : nil }
    /// kbit/s of the output so far (ffmpeg's bitrate: bytes × 8 over media time).
    package var kilobitsPerSecond: Double? {
        guard let b = sample.bytes, b >= 0, sample.position > 0 else { return nil }
        return Double(b) * 8 / sample.position / 1000
    }
    package var eta: Double? {
        guard !final, let f = fraction, f > 0.001 else { return nil }
        return elapsed * (1 - f) / f
    }

    /// The terminal line, at most `columns - 1` characters (the last column would wrap on some
    /// terminals and break the in-place redraw): the least useful parts go first when it is narrow.
    package func terminalLine(columns: Int) -> String {
        var parts: [(text: String, keep: Int)] = []
        parts.append(("frame=\(sample.frames)", 6))
        if let f = fraction { parts.append((format(f * 100, 1) + "%", 8)) }
        parts.append(("fps=\(format(fps, 1))", 3))
        parts.append(("time=\(clock(sample.position))" + (sample.total.map { "/" + clock($0) } ?? ""), 4))
        if let b = sample.bytes { parts.append(("size=\(byteSize(b))", 2)) }
        if let k = kilobitsPerSecond { parts.append(("bitrate=\(format(k, 0))kb/s", 1)) }
        if let s = speed { parts.append(("speed=\(speedText(s))", 7)) }
        if let eta { parts.append(("ETA \(clock(eta))", 5)) }
        return fitLine(parts, columns: columns)
    }

    /// `progress frame=... status=continue|end` (the kv style; keys documented in docs/ci.md).
    package var keyValueLine: String {
        var line = "progress frame=\(sample.frames) fps=\(format(fps, 2)) time=\(format(sample.position, 3))"
        line += " percent=" + (fraction.map { format($0 * 100, 1) } ?? "unknown")
        line += " eta=" + (eta.map { format($0, 1) } ?? (final ? "0.0" : "unknown"))
        line += " speed=" + (speed.map { format($0, 3) } ?? "unknown")
        line += " size=" + (sample.bytes.map { String($0) } ?? "unknown")
        line += " bitrate=" + (kilobitsPerSecond.map { format($0, 1) } ?? "unknown")
        line += final ? " status=end" : " status=continue"
        return line
    }

    /// The JSON event's members (the json style; docs/ci.md).
    package var jsonMembers: [(String, JSONValue)] {
        [("frames", .int(sample.frames)), ("time", .num(roundedTo(sample.position, 3))), ("total", .num(sample.total.map { roundedTo($0, 3) })),
         ("percent", .num(fraction.map { roundedTo($0 * 100, 1) })), ("fps", .num(roundedTo(fps, 2))),
         ("speed", .num(speed.map { roundedTo($0, 3) })), ("size", .int64(sample.bytes)),
         ("bitrate", .num(kilobitsPerSecond.map { roundedTo($0, 1) })), ("eta", .num(eta.map { roundedTo($0, 1) }))]
    }

    /// One block of ffmpeg's `-progress` output, in ffmpeg 5.1's keys, order and number formats
    /// (fftools/ffmpeg.c print_report): a script that reads ffmpeg's reads this. `extra` keys
    /// (batch's) go just before `progress=`.
    package func ffmpegBlock(extra: [(String, String)] = [], quality: Bool = true) -> String {
        let us = Int64((sample.position * 1_000_000).rounded())
        // ffmpeg: fps only after the first second; bitrate and speed -1 (N/A) when they cannot be told.
        let ffFPS = elapsed > 1 ? Double(sample.frames) / elapsed : 0
        var out = "frame=\(sample.frames)\n"
        out += "fps=" + cFormat("%.2f", ffFPS) + "\n"
        if quality {
            // ffmpeg's last report shows -1.0 (the encoder's quality is reset at its end).
            out += "stream_0_\(sample.outputStream)_q=" + cFormat("%.1f", final ? Double(-1) : (sample.quality ?? Double(-1))) + "\n"
        }
        if let bytes = sample.bytes, us > 0 {
            out += "bitrate=" + cFormat("%6.1f", Double(bytes) * 8 / (Double(us) / 1000)) + "kbits/s\n"
        } else {
            out += "bitrate=N/A\n"
        }
        out += "total_size=" + (sample.bytes.map { String($0) } ?? "N/A") + "\n"
        out += "out_time_us=\(us)\nout_time_ms=\(us)\nout_time=\(ffmpegClock(us))\n"
        out += "dup_frames=0\ndrop_frames=0\n"
        out += "speed=" + (us > 0 ? cFormat("%4.3g", Double(us) / 1_000_000 / elapsed) + "x" : "N/A") + "\n"
        for (k, v) in extra { out += "\(k)=\(v)\n" }
        out += final ? "progress=end\n" : "progress=continue\n"
        return out
    }
}

/// Joins `parts` with spaces, dropping the lowest `keep` first until the line fits in `columns - 1`
/// characters; a part too long even alone is cut.
package func fitLine(_ parts: [(text: String, keep: Int)], columns: Int) -> String {
    let limit = max(1, columns - 1)
    let line = fitParts(parts, columns: columns).map { parts[$0].text }.joined(separator: " ")
    return line.count > limit ? String(line.prefix(limit)) : line
}

/// The indices of the parts `fitLine` keeps, in order.
package func fitParts(_ parts: [(text: String, keep: Int)], columns: Int) -> [Int] {
    let limit = max(1, columns - 1)
    var kept = Array(parts.indices)
    while kept.count > 1 && kept.map({ parts[$0].text.count }).reduce(-1, { $0 + $1 + 1 }) > limit {
        let drop = kept.indices.min { parts[kept[$0]].keep < parts[kept[$1]].keep }!
        kept.remove(at: drop)
    }
    return kept
}

/// `text` cut to fit `columns - 1` characters, with an ellipsis where it was cut.
package func fitText(_ text: String, columns: Int) -> String {
    let limit = max(1, columns - 1)
    return text.count > limit ? String(text.prefix(limit - 1)) + "…" : text
}

/// 2.34x, 0.512x, 12.3x: three significant figures, as ffmpeg's %4.3g (without its padding).
package func speedText(_ speed: Double) -> String {
    cFormat("%.3g", speed) + "x"
}

/// 1023B, 4.0KiB, 676KiB, 12.3MiB, 1.20GiB.
package func byteSize(_ bytes: Int64) -> String {
    let b = Double(bytes)
    if b < 1024 { return "\(bytes)B" }
    for (unit, scale) in [("KiB", 1024.0), ("MiB", 1024.0 * 1024), ("GiB", 1024.0 * 1024 * 1024)] {
        let v = b / scale
        if v < 1024 || unit == "GiB" { return (v < 10 ? format(v, 1) : format(v, 0)) + unit }
    }
    return "\(bytes)B"
}

/// ffmpeg's out_time: [-]HH:MM:SS.uuuuuu.
package func ffmpegClock(_ us: Int64) -> String {
    let a = us.magnitude
    let secs = a / 1_000_000, micro = a % 1_000_000
    let text = cFormat("%02llu:%02llu:%02llu.%06llu", CUnsignedLongLong(secs / 3600), CUnsignedLongLong((secs / 60) % 60),
                       CUnsignedLongLong(secs % 60), CUnsignedLongLong(micro))
    return (us < 0 ? "-" : "") + text
}

/// printf through vsnprintf, for the formats ffmpeg's progress uses (%g has no Swift equivalent).
package func cFormat(_ format: String, _ arguments: CVarArg...) -> String {
    withVaList(arguments) { list in
        var buffer = [CChar](repeating: 0, count: 128)
        _ = vsnprintf(&buffer, buffer.count, format, list)
        return String(cString: buffer)
    }
}

package func roundedTo(_ v: Double, _ decimals: Int) -> Double {
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    return (v * p).rounded() / p
}
