import Glibc

/// Reports frames, speed, percent and ETA on stderr: a self-overwriting line on a terminal,
/// one `key=value` line per second otherwise (for CI logs and scripts).
public final class ProgressReporter: @unchecked Sendable {
    public enum Style: Sendable { case terminal, lines }

    private let style: Style
    private let start = monotonicSeconds()
    private var lastPrint = 0.0
    private var printedTerminalLine = false

    public init(style: Style) {
        self.style = style
    }

    /// `position` and `total` are seconds of media (total nil when unknown).
    package func update(frames: Int, position: Double, total: Double?, final: Bool = false) {
        let now = monotonicSeconds()
        let interval = style == .terminal ? 0.25 : 1.0
        guard final || now - lastPrint >= interval else { return }
        lastPrint = now
        let elapsed = max(now - start, 1e-6)
        let fps = Double(frames) / elapsed
        var fraction: Double?
        if let total, total > 0 { fraction = min(max(position / total, 0), 1) }
        if final { fraction = 1 }
        var eta: Double?
        if let f = fraction, f > 0.001 { eta = elapsed * (1 - f) / f }
        switch style {
        case .terminal:
            var line = "frame=\(frames) fps=\(format(fps, 1)) time=\(clock(position))"
            if let f = fraction { line += " \(format(f * 100, 1))%" }
            if let eta, !final { line += " ETA \(clock(eta))" }
            fputs("\r\u{1B}[K" + line + (final ? "\n" : ""), stderr)
            printedTerminalLine = !final
        case .lines:
            var line = "progress frame=\(frames) fps=\(format(fps, 2)) time=\(format(position, 3))"
            line += " percent=" + (fraction.map { format($0 * 100, 1) } ?? "unknown")
            line += " eta=" + (eta.map { format($0, 1) } ?? "unknown")
            line += final ? " status=end" : " status=continue"
            fputs(line + "\n", stderr)
        }
        fflush(stderr)
    }

    /// Ends a half-written terminal line before an error or warning is printed.
    public func interruptLine() {
        if printedTerminalLine { fputs("\n", stderr); printedTerminalLine = false }
    }
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
