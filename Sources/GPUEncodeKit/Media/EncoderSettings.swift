/// libx264 settings, named after ffmpeg's options.
public struct EncoderSettings: Sendable {
    /// Constant rate factor (ffmpeg `-crf`); ignored when `bitrate` is set. 0 is lossless.
    public var crf: Double = 23
    /// x264 speed preset (ffmpeg `-preset`).
    public var preset: String = "medium"
    /// x264 tune (ffmpeg `-tune`), e.g. film, animation, grain.
    public var tune: String?
    /// Average bitrate in bits per second (ffmpeg `-b:v`), instead of crf.
    public var bitrate: Int64?
    /// Maximum GOP length in frames (ffmpeg `-g`); nil leaves x264's default (250).
    public var keyint: Int?
    /// Encoder threads (ffmpeg `-threads`); 0 lets x264 choose.
    public var threads: Int = 0
    /// H.264 profile (ffmpeg `-profile:v`); nil means High, or High 4:4:4 Predictive when lossless.
    public var profile: String?

    public init() {}

    public static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    public static let x264Tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]
}
