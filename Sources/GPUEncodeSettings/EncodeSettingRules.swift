import GPUEncodeCore

/// One rule per encoder setting, for every place that takes one: the transcode's and the batch's
/// command lines, manifest columns and a preset's "encode" block. Each returns nil when the value is
/// valid, else what is wrong with it; the caller says where (`--keyint`, a manifest row, a JSON
/// path) and with which exit code (64 on the command line and in manifests, 67 in a preset).
public enum EncodeSettingRules {
    public static let crfRange = 0.0...51.0

    public static func crf(_ value: Double) -> String? {
        crfRange.contains(value) ? nil : "\(formatNumber(value)) is out of range 0...51"
    }

    /// A whole number of frames in `EncoderSettings.keyintRange` (a Double: presets give JSON numbers).
    public static func keyint(_ value: Double) -> String? {
        let r = EncoderSettings.keyintRange
        guard let n = Int(wholeNumber: value), r.contains(n) else {
            return "\(formatNumber(value)) is not a whole number of frames from \(r.lowerBound) to \(r.upperBound)"
        }
        return nil
    }

    public static func x264Preset(_ name: String) -> String? { oneOf(name, EncoderSettings.x264Presets) }
    public static func tune(_ name: String) -> String? { oneOf(name, EncoderSettings.x264Tunes) }
    public static func profile(_ name: String) -> String? { oneOf(name, EncoderSettings.h264Profiles) }

    public static func bitrate(_ text: String) -> String? {
        parseRate(text) == nil ? "\(text) is not a rate such as 4M, 2500k or 800000 (at least 1k)" : nil
    }

    /// Encoder threads; 0 (x264 chooses) only where `allowAuto`.
    public static func threads(_ value: Int, allowAuto: Bool = true) -> String? {
        let r = (allowAuto ? 0 : 1)...EncoderSettings.threadsRange.upperBound
        return r.contains(value) ? nil : "\(value) is out of range \(r.lowerBound)...\(r.upperBound)"
    }

    private static func oneOf(_ word: String, _ words: [String]) -> String? {
        words.contains(word) ? nil : "\"\(word)\" is not one of \(words.joined(separator: ", "))"
    }
}
