/// Conversions of Doubles that came from outside (a command line, a preset, a media file's
/// timestamps) into integers. Swift's `Int(x)` traps on NaN, infinity or a value out of range, and
/// a trap takes down the whole process with no error line (a batch with all its jobs), so input is
/// never converted with it: these return nil instead, for the caller to turn into an error.
extension BinaryInteger where Self: FixedWidthInteger {
    /// `value` when it is a whole number this type can hold, else nil (the standard library's
    /// `init?(exactly:)`, named for what the call sites mean).
    package init?(wholeNumber value: Double) {
        self.init(exactly: value)
    }

    /// `value` rounded toward zero when that fits this type, else nil (NaN and ±infinity too).
    package init?(inRange value: Double) {
        self.init(exactly: value.rounded(.towardZero))
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

/// A number as JSON and messages show it: whole numbers without a fraction.
package func formatNumber(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}
