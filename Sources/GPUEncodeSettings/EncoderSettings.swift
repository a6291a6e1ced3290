/// Which H.264 encoder writes the video (`--encoder`).
public enum EncoderChoice: String, CaseIterable, Sendable {
    /// h264_nvenc where it opens, else libx264 with a warning.
    case auto
    /// x264 on the CPU (the default: reproducible, and what the crf/preset/tune options were made for).
    case libx264
    /// h264_nvenc only; fails (exit 69) where there is no NVIDIA driver or no NVENC engine (the H100 has none).
    case nvenc
}

/// Encoder settings, named after ffmpeg's (x264's) options; h264_nvenc gets their nearest equivalents.
public struct EncoderSettings: Sendable {
    /// Which encoder: libx264 (default), h264_nvenc, or NVENC with a fall back to libx264.
    public var encoder: EncoderChoice = .libx264
    /// Constant rate factor (ffmpeg `-crf`); ignored when `bitrate` is set. 0 is lossless.
    /// NVENC: constant quality `-rc vbr -cq CRF -b:v 0` (0 is `-tune lossless`, profile high444p).
    public var crf: Double = 23
    /// x264 speed preset (ffmpeg `-preset`); NVENC gets p1 (fastest) to p7 (`nvencPreset`).
    public var preset: String = "medium"
    /// x264 tune (ffmpeg `-tune`), e.g. film, animation, grain. NVENC has no equivalents (ignored with a warning).
    public var tune: String?
    /// Average bitrate in bits per second (ffmpeg `-b:v`), instead of crf (NVENC: `-rc vbr -b:v`).
    public var bitrate: Int64?
    /// Maximum GOP length in frames (ffmpeg `-g`); nil leaves the encoder's default (x264: 250).
    public var keyint: Int?
    /// Encoder threads (ffmpeg `-threads`); 0 lets x264 choose.
    public var threads: Int = 0
    /// H.264 profile (ffmpeg `-profile:v`); nil means High, or High 4:4:4 Predictive when lossless.
    public var profile: String?

    public init() {}

    /// What `keyint` may be (also a preset's "encode.keyint"): FFmpeg's gop_size is an Int32, and
    /// converting a larger Int to it traps the whole process (a batch with it).
    public static let keyintRange = 1...100_000
    /// What `threads` may be; x264 clamps to 128 itself, the bound is for the Int32 it goes through.
    public static let threadsRange = 0...1024

    public static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    /// The H.264 profiles libx264 accepts (x264_param_apply_profile); any other name used to fail
    /// only when the encoder opened (exit 74), so the options are checked against this list upfront.
    public static let h264Profiles = ["baseline", "main", "high", "high10", "high422", "high444"]
    public static let x264Tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]

    /// The NVENC preset (p1 fastest … p7 slowest, p4 its default) nearest an x264 preset (medium → p4).
    public static func nvencPreset(forX264 preset: String) -> String {
        switch preset {
        case "ultrafast", "superfast": return "p1"
        case "veryfast": return "p2"
        case "faster", "fast": return "p3"
        case "slow": return "p5"
        case "slower": return "p6"
        case "veryslow", "placebo": return "p7"
        default: return "p4"
        }
    }
}

/// "4M", "2500k", "800000", "1.5M" → bits per second, as ffmpeg's -b:v takes them; nil for anything
/// else. One rule for --bitrate, batch's --bitrate and manifests.
public func parseRate(_ text: String) -> Int64? {
    let lower = text.lowercased()
    var multiplier = 1.0
    var number = Substring(lower)
    if lower.hasSuffix("k") { multiplier = 1e3; number = number.dropLast() } else if lower.hasSuffix("m") { multiplier = 1e6; number = number.dropLast() }
    // Decimal digits with at most one point: Double() alone would also take "0x10", "1e3", "inf".
    guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
          number.filter({ $0 == "." }).count <= 1, let v = Double(number) else { return nil }
    // libx264 counts whole kbit/s: below 1k the rate would be 0 and refused when the encoder opens (74).
    let bits = v * multiplier
    guard bits >= 1000, bits < 1e11 else { return nil }
    return Int64(bits)
}
