import GPUEncodeCore

/// `--fps` (`-r`): a constant output frame rate as a fraction, written as ffmpeg's
/// av_parse_video_rate takes it: a whole number (30), a decimal (29.97 is exactly 2997/100, as
/// in ffmpeg; 30000/1001 is NTSC's), a fraction (30000/1001), or one of ffmpeg's names.
public struct FrameRate: Sendable, Equatable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int

    /// Reduced; both above 0.
    public init?(_ numerator: Int, _ denominator: Int) {
        guard numerator > 0, denominator > 0 else { return nil }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(numerator, denominator)
        self.numerator = numerator / g
        self.denominator = denominator / g
    }

    /// ffmpeg's names (libavutil/parseutils.c) for the rates people type.
    public static let names: [(String, (Int, Int))] = [
        ("ntsc", (30000, 1001)), ("pal", (25, 1)), ("film", (24, 1)), ("ntsc-film", (24000, 1001)),
        ("qntsc", (30000, 1001)), ("qpal", (25, 1)), ("sntsc", (30000, 1001)), ("spal", (25, 1)),
    ]

    /// The highest rate taken: well past any camera's, and low enough that 1/rate ticks fit FFmpeg's
    /// 32-bit time bases.
    public static let maximum = 1000.0

    /// Parses `text`; nil when it is not a rate from 1/1001 up to 1000.
    public static func parse(_ text: String) -> FrameRate? {
        let t = text.lowercased()
        if let (_, (n, d)) = names.first(where: { $0.0 == t }) { return FrameRate(n, d) }
        var rate: FrameRate?
        if let slash = t.firstIndex(of: "/") {
            guard let n = whole(t[..<slash]), let d = whole(t[t.index(after: slash)...]) else { return nil }
            rate = FrameRate(n, d)
        } else if let dot = t.firstIndex(of: ".") {
            // Exactly as written: 29.97 is 2997/100.
            let intPart = t[..<dot], frac = t[t.index(after: dot)...]
            guard !frac.isEmpty, frac.count <= 6, intPart.isEmpty || whole(intPart) != nil, let f = whole(frac) else { return nil }
            var scale = 1
            for _ in 0..<frac.count { scale *= 10 }
            rate = FrameRate((whole(intPart) ?? 0) * scale + f, scale)
        } else if let n = whole(Substring(t)) {
            rate = FrameRate(n, 1)
        }
        guard let r = rate, r.value <= maximum, r.numerator <= Int(Int32.max), r.denominator <= Int(Int32.max) else { return nil }
        return r
    }

    private static func whole(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.count <= 9, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(s)
    }

    public var value: Double { Double(numerator) / Double(denominator) }

    /// "30", "29.97" (an exact decimal, as it was typed), "30000/1001".
    public var description: String {
        if denominator == 1 { return "\(numerator)" }
        if 1_000_000 % denominator == 0 { return formatNumber(value) }
        return "\(numerator)/\(denominator)"
    }
}
