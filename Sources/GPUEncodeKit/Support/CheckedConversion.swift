/// Conversions of Doubles that came from outside (a command line, a preset, a media file's
/// timestamps) into integers. Swift's `Int(x)` traps on NaN, infinity or a value out of range, and
/// a trap takes down the whole process with no error line (a batch with all its jobs), so input is
/// never converted with it: these return nil instead, for the caller to turn into an error.
extension BinaryInteger where Self: FixedWidthInteger {
    /// `value` when it is a whole number this type can hold, else nil.
    init?(wholeNumber value: Double) {
        guard value == value.rounded() else { return nil }
        self.init(inRange: value)
    }

    /// `value` rounded toward zero when that fits this type, else nil (NaN and ±infinity too).
    init?(inRange value: Double) {
        // Double(Self.max) rounds up to 2^63 for Int64, itself out of range: compare strictly.
        guard value.isFinite, value > Double(Self.min) - 1, value < Double(Self.max) else { return nil }
        self.init(value)
    }
}

/// A number of seconds, shortened to `places` decimals for a message, without going through an
/// integer (a hostile file's timestamp times 1000 may not fit one).
public func roundedSeconds(_ seconds: Double, places: Int) -> String {
    guard seconds.isFinite else { return "\(seconds)" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    guard abs(seconds) < 1e15 else { return formatNumber(seconds) }
    return formatNumber((seconds * scale).rounded(.towardZero) / scale)
}
