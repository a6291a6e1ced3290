import GPUEncodeCore

/// Which part of the input a run encodes (`--ss`/`--start`, `--to`, `-t`/`--duration`), in
/// microseconds from the input's start, as the ffmpeg CLI's input options `-ss`, `-to` and `-t`
/// count them (AV_TIME_BASE). The pipeline turns it into ticks of each stream (TrimWindow).
public struct TrimRange: Sendable, Equatable {
    /// Where the output starts, counted from the input's start; 0 is the input's start.
    public var start: Int64 = 0
    /// Where the output ends, if it does before the input's end.
    public var end: End?

    public enum End: Sendable, Equatable {
        /// `--to`: a time of the input, counted from its start (as ffmpeg's input `-to`).
        case to(Int64)
        /// `-t`/`--duration`: a length from `start`.
        case duration(Int64)
    }

    public init(start: Int64 = 0, end: End? = nil) {
        self.start = start
        self.end = end
    }

    /// Nothing cut: the whole input.
    public var isWhole: Bool { start == 0 && end == nil }

    /// The length asked for (microseconds), nil for "to the input's end". `--to` becomes `to - start`,
    /// as ffmpeg makes its recording time.
    public var duration: Int64? {
        switch end {
        case .to(let t)?: return t - start
        case .duration(let d)?: return d
        case nil: return nil
        }
    }

    /// How it reads on a command line (digests, messages): "ss=1.5 t=2".
    public var description: String {
        var parts: [String] = []
        if start != 0 { parts.append("ss=\(formatTime(start))") }
        if let d = duration { parts.append("t=\(formatTime(d))") }
        return parts.joined(separator: " ")
    }
}

/// A time in ffmpeg's duration syntax (ffmpeg-utils(1) "Time duration", av_parse_time with
/// duration=1) as microseconds: `[-][HH:]MM:SS[.m...]` (minutes and seconds one or two digits,
/// 0-59) or `[-]S+[.m...][s|ms|us]` ("90", "1.5", "1:30", "01:02:03.250", "500ms", "200000us").
/// Digits after the sixth decimal are dropped, as FFmpeg drops them. Nil for anything else (no
/// exponents, hex, spaces, inf or nan).
public func parseTime(_ text: String) -> Int64? {
    var s = Substring(text)
    var negative = false
    if s.hasPrefix("-") {
        negative = true
        s = s.dropFirst()
    }
    guard !s.isEmpty, s.allSatisfy({ $0.isASCII }) else { return nil }
    func digits(_ t: Substring) -> Bool { !t.isEmpty && t.allSatisfy { $0.isNumber } }
    var scale: Int64 = 1_000_000
    if s.contains(":") {
        // [HH:]MM:SS[.m...]
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        let hours = parts.count == 3 ? parts[0] : "0"
        let minutes = parts[parts.count - 2]
        guard digits(hours), hours.count <= 9, digits(minutes), minutes.count <= 2, let h = Int64(hours), let m = Int64(minutes), m < 60 else { return nil }
        guard let (sec, micro) = secondsAndFraction(parts[parts.count - 1]), sec < 60, parts[parts.count - 1].prefix(while: { $0 != "." }).count <= 2 else { return nil }
        let total = ((h * 60 + m) * 60 + sec) * 1_000_000 + micro
        return negative ? -total : total
    }
    if s.hasSuffix("ms") {
        scale = 1000
        s = s.dropLast(2)
    } else if s.hasSuffix("us") {
        scale = 1
        s = s.dropLast(2)
    } else if s.hasSuffix("s") {
        s = s.dropLast()
    }
    guard let (whole, micro) = secondsAndFraction(s), whole <= 9_000_000_000 else { return nil }
    // The fraction is of the unit: "1.5ms" is 1500 us.
    let total = whole * scale + micro * scale / 1_000_000
    return negative ? -total : total
}

/// "12.345" → (12, 345000): whole units and millionths (digits past the sixth dropped).
private func secondsAndFraction(_ t: Substring) -> (Int64, Int64)? {
    let pieces = t.split(separator: ".", omittingEmptySubsequences: false)
    guard pieces.count <= 2, let whole = pieces.first, !whole.isEmpty, whole.count <= 12,
          whole.allSatisfy({ $0.isASCII && $0.isNumber }), let w = Int64(whole) else { return nil }
    var micro: Int64 = 0
    if pieces.count == 2 {
        let f = pieces[1]
        guard !f.isEmpty, f.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let six = String(f.prefix(6)) + String(repeating: "0", count: max(0, 6 - f.count))
        micro = Int64(six) ?? 0
    }
    return (w, micro)
}

/// Microseconds as seconds with at most six decimals and no trailing zeros: 1500000 → "1.5".
public func formatTime(_ micros: Int64) -> String {
    let sign = micros < 0 ? "-" : ""
    let m = micros.magnitude
    let whole = m / 1_000_000, frac = m % 1_000_000
    if frac == 0 { return "\(sign)\(whole)" }
    var f = String(frac)
    f = String(repeating: "0", count: 6 - f.count) + f
    while f.hasSuffix("0") { f.removeLast() }
    return "\(sign)\(whole).\(f)"
}
