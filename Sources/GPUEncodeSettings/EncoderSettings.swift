import GPUEncodeCore

/// The video codec of the output (`--codec`, `-c:v`).
public enum VideoCodec: String, CaseIterable, Sendable {
    case h264, hevc, av1
}

/// What happens to the input's audio (`--audio`, `-an`). gpuencode declares and carries the
/// setting; the audio stage decides what each policy does with each stream.
public enum AudioPolicy: String, CaseIterable, Sendable {
    case auto, copy, aac, opus, none
}

/// One `--metadata KEY=VALUE`: a container tag to set (an empty value removes the tag, as in ffmpeg).
public struct MetadataEntry: Sendable, Equatable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// What happens to interlaced video (`--deinterlace`).
public enum DeinterlaceMode: String, CaseIterable, Sendable {
    /// Deinterlace what is flagged interlaced (the stream's field order or the frame's flag), at
    /// the frame rate; leave progressive video untouched. With `--preset none` (no GPU stage),
    /// interlaced video is encoded interlaced, as `off`.
    case auto
    /// Encode interlaced video interlaced, its field order kept (H.264: interlaced coding; every
    /// codec: the container's field order tag).
    case off
    /// Deinterlace every frame, flagged or not (ffmpeg's bwdif `deint=all`), one frame per frame
    /// (bwdif's `send_frame`).
    case frame
    /// Deinterlace every frame, one frame per field: twice the frame rate, the second frame of each
    /// pair at its field's time (bwdif's `send_field`).
    case field
}

/// How the video is decoded (`--hwaccel`).
public enum HardwareAcceleration: String, CaseIterable, Sendable {
    /// Software decoding with libavcodec's frame threads (the default).
    case none
    /// NVDEC through FFmpeg's cuda hwaccel; fails (exit 69) where it cannot be used.
    case cuda
    /// NVDEC where it can be used, else software decoding (a `-v` note says which).
    case auto
}

/// Which encoder writes the video (`--encoder`), whatever the codec.
public enum EncoderChoice: String, CaseIterable, Sendable {
    /// The codec's NVENC encoder where it opens, else the software encoder with a warning.
    case auto
    /// The software encoder (libx264, libx265, libsvtav1): the default, reproducible, and what the
    /// crf/speed/tune options were made for. `libx264` is accepted as its old name.
    case software
    /// The codec's NVENC encoder only (h264_nvenc, hevc_nvenc); fails (exit 69) where there is no
    /// NVIDIA driver or no NVENC engine (the H100 has none), and for AV1 (FFmpeg 5.1 has no av1_nvenc).
    case nvenc

    /// `--encoder`'s words: the cases, and `libx264` for `software` (its name before HEVC and AV1).
    public init?(argument: String) {
        if argument == "libx264" { self = .software } else { self.init(rawValue: argument) }
    }
}

extension VideoCodec {
    /// The software encoder in FFmpeg for this codec.
    public var softwareEncoder: String {
        switch self {
        case .h264: return "libx264"
        case .hevc: return "libx265"
        case .av1: return "libsvtav1"
        }
    }

    /// NVIDIA's encoder for this codec, as FFmpeg names it (av1_nvenc only exists from FFmpeg 6.0).
    public var nvencEncoder: String { "\(rawValue)_nvenc" }

    /// How people write it: H.264, HEVC, AV1.
    public var displayName: String {
        switch self {
        case .h264: return "H.264"
        case .hevc: return "HEVC"
        case .av1: return "AV1"
        }
    }

    /// The crf a run uses when none is given: each encoder's own default (x264 23, x265 28, SVT-AV1 35).
    public var defaultCRF: Double {
        switch self {
        case .h264: return 23
        case .hevc: return 28
        case .av1: return 35
        }
    }

    /// The crf scale of the codec's encoder. x264: 0 is lossless. x265: 0 is its best quality but
    /// not lossless (`--x265-params lossless=1` is). SVT-AV1 in FFmpeg 5.1: 1-63, where 0 would mean
    /// "not set" and it has no lossless mode.
    public var crfRange: ClosedRange<Double> {
        switch self {
        case .h264, .hevc: return 0...51
        case .av1: return 1...63
        }
    }

    /// `--tune` values the encoder takes (SVT-AV1 has none through FFmpeg 5.1).
    public var tunes: [String] {
        switch self {
        case .h264: return EncoderSettings.x264Tunes
        case .hevc: return EncoderSettings.x265Tunes
        case .av1: return []
        }
    }

    /// `--profile` values for 8-bit 4:2:0 output.
    public var profiles: [String] {
        switch self {
        case .h264: return EncoderSettings.h264Profiles
        case .hevc, .av1: return ["main"]
        }
    }

    /// The setting (preset key, manifest column) carrying this codec's encoder parameters.
    public var paramsKey: String {
        switch self {
        case .h264: return "x264Params"
        case .hevc: return "x265Params"
        case .av1: return "svtav1Params"
        }
    }

    /// `-c:v` and `--codec` words: the codec names, their encoders' names, and the NVENC encoders'
    /// names (which also choose `--encoder nvenc`). Returns nil for anything else.
    public static func parse(_ word: String) -> (codec: VideoCodec, encoder: EncoderChoice?)? {
        for codec in VideoCodec.allCases {
            if word == codec.rawValue || word == codec.softwareEncoder { return (codec, nil) }
            if word == codec.nvencEncoder { return (codec, .nvenc) }
        }
        switch word {
        case "h265", "x265": return (.hevc, nil)
        case "x264", "avc": return (.h264, nil)
        default: return nil
        }
    }
}

/// Encoder settings, named after ffmpeg's options; each encoder gets its nearest equivalents (the
/// `speed` scale is x264's preset names, mapped per encoder: `nativeSpeed`).
public struct EncoderSettings: Sendable {
    /// Which encoder: the codec's software encoder (default), NVENC, or NVENC with a fall back.
    public var encoder: EncoderChoice = .software
    /// The output's video codec.
    public var codec: VideoCodec = .h264
    /// The speed/compression trade-off on x264's preset scale (ultrafast ... placebo); each encoder
    /// gets its own equivalent (`nativeSpeed`): x264 and x265 the same name, SVT-AV1 a preset number,
    /// NVENC p1-p7.
    public var speed: String = "medium"
    /// Constant rate factor on the codec's own scale (ffmpeg `-crf`); nil is the codec's default
    /// (`VideoCodec.defaultCRF`). Ignored when `bitrate` is set. NVENC: constant quality
    /// `-rc vbr -cq CRF -b:v 0` (0 is `-tune lossless`).
    public var crf: Double?
    /// `--x264-params`, `--x265-params` or `--svtav1-params` text (key=value:key=value), already
    /// checked to be the one for `codec`.
    public var videoParams: String?
    /// Encoder tune (ffmpeg `-tune`): x264's or x265's names. NVENC has no equivalents (ignored with a warning).
    public var tune: String?
    /// Average bitrate in bits per second (ffmpeg `-b:v`), instead of crf (NVENC: `-rc vbr -b:v`).
    public var bitrate: Int64?
    /// Maximum GOP length in frames (ffmpeg `-g`); nil leaves the encoder's default (x264/x265: 250).
    public var keyint: Int?
    /// Encoder threads (ffmpeg `-threads`; x265 `pools`, SVT-AV1 `lp`); 0 lets the encoder choose.
    public var threads: Int = 0
    /// Profile (ffmpeg `-profile:v`); nil means High for H.264 (High 4:4:4 Predictive when
    /// lossless), Main for HEVC and AV1.
    public var profile: String?
    /// What happens to audio streams (`--audio`, `-an` is `.none`).
    public var audio: AudioPolicy = .auto
    /// `--audio-tracks 1,3`: 1-based positions among the input's audio streams, in this order; nil is all.
    public var audioTracks: [Int]?
    /// `--audio-bitrate`, bits per second, for re-encoded audio; nil is the audio encoder's default.
    public var audioBitrate: Int64?
    /// `--strip-metadata`: no container or stream tags from the input.
    public var stripMetadata = false
    /// `--no-location`: drop location tags (GPS) from the input's metadata.
    public var dropLocation = false
    /// `--copyts`: keep the input's absolute timestamps; by default the output starts at 0 (ffmpeg's default).
    public var copyts = false
    /// `--metadata KEY=VALUE`, in the order given (a later entry for the same key wins).
    public var metadata: [MetadataEntry] = []
    /// `--hdr`: HDR input tone-mapped to SDR (default) or kept as HDR.
    public var hdr: HDRMode = .tonemap
    /// Whether a layer named the codec (else `codec` is the container's default, and kept HDR
    /// takes HEVC instead of H.264).
    public var codecGiven = false
    /// `--tonemap`, `--target-peak`, `--peak-detect`.
    public var toneMapping = ToneMapping()
    /// `--dolby-vision`: a Dolby Vision stream's RPU applied (default) or its base layer alone.
    public var dolbyVision: DolbyVisionMode = .apply
    /// `--deinterlace`: what happens to interlaced video.
    public var deinterlace: DeinterlaceMode = .auto
    /// `--width`, `--height`, `--size`, `--max-width`, `--max-height`.
    public var scale = ScaleRequest()
    /// `--fps`: constant-rate output; nil keeps the input's timing.
    public var frameRate: FrameRate?
    /// `--ss`, `--to`, `-t`: the part of the input encoded.
    public var trim = TrimRange()

    public init() {}

    /// The crf this run encodes with: the given one or the codec's default.
    public var effectiveCRF: Double { crf ?? codec.defaultCRF }

    /// What `keyint` may be (also a preset's "encode.keyint"): FFmpeg's gop_size is an Int32, and
    /// converting a larger Int to it traps the whole process (a batch with it).
    public static let keyintRange = 1...100_000
    /// What `threads` may be; x264 clamps to 128 itself, the bound is for the Int32 it goes through.
    public static let threadsRange = 0...1024
    /// What `audioBitrate` may be: 8 kb/s (speech at its thinnest) to 2 Mb/s (eight channels at 256k).
    public static let audioBitrateRange: ClosedRange<Int64> = 8_000...2_000_000

    /// The speed scale: x264's preset names, fastest first.
    public static let speeds = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    /// The old name of `speeds` (the scale is x264's).
    public static var x264Presets: [String] { speeds }
    /// The H.264 profiles libx264 accepts (x264_param_apply_profile); any other name used to fail
    /// only when the encoder opened (exit 74), so the options are checked against this list upfront.
    public static let h264Profiles = ["baseline", "main", "high", "high10", "high422", "high444"]
    public static let x264Tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]
    public static let x265Tunes = ["psnr", "ssim", "grain", "zerolatency", "fastdecode", "animation"]

    /// SVT-AV1 preset numbers on the speed scale (0 slowest ... 13 fastest; SVT-AV1's own default,
    /// 10, is `faster`). Monotonic, with medium at 8.
    public static let svtav1Presets: [String: Int] = [
        "ultrafast": 13, "superfast": 12, "veryfast": 11, "faster": 10, "fast": 9,
        "medium": 8, "slow": 6, "slower": 4, "veryslow": 2, "placebo": 0,
    ]

    /// The NVENC preset (p1 fastest … p7 slowest, p4 its default) nearest a speed (medium → p4).
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

    /// The encoder's own name for `speed`: x264/x265 the same preset name, SVT-AV1 a preset
    /// number, NVENC p1-p7.
    public static func nativeSpeed(_ speed: String, codec: VideoCodec, nvenc: Bool) -> String {
        if nvenc { return nvencPreset(forX264: speed) }
        switch codec {
        case .h264, .hevc: return speed
        case .av1: return String(svtav1Presets[speed] ?? 8)
        }
    }

    /// What is wrong with these settings for `codec` (crf outside its scale, a tune or profile it
    /// does not take), as (setting key, problem); nil when nothing is. Params given for another
    /// codec are found when the settings are resolved (`EncodeOverrides.resolve`).
    public static func codecProblem(crf: Double?, tune: String?, profile: String?, codec: VideoCodec) -> (key: String, problem: String)? {
        if let crf, !codec.crfRange.contains(crf) {
            let lo = formatNumber(codec.crfRange.lowerBound), hi = formatNumber(codec.crfRange.upperBound)
            let why = codec == .av1 && crf == 0 ? " (SVT-AV1 has no lossless mode in FFmpeg 5.1; 1 is its best quality)" : ""
            return ("crf", "\(formatNumber(crf)) is out of range \(lo)...\(hi) for \(codec.rawValue)\(why)")
        }
        if let crf, codec == .av1, crf != crf.rounded() {
            return ("crf", "\(formatNumber(crf)) is not a whole number; SVT-AV1's crf (av1) counts in whole steps from 1 to 63")
        }
        if let tune, !codec.tunes.contains(tune) {
            if codec.tunes.isEmpty { return ("tune", "\(codec.softwareEncoder) (\(codec.rawValue)) takes no tune; leave \"\(tune)\" out") }
            return ("tune", "\"\(tune)\" is not a \(codec.softwareEncoder) tune (\(codec.rawValue) takes \(codec.tunes.joined(separator: ", ")))")
        }
        if let profile, !codec.profiles.contains(profile) {
            return ("profile", "\"\(profile)\" is not a \(codec.rawValue) profile (8-bit \(codec.rawValue) takes \(codec.profiles.joined(separator: ", ")))")
        }
        return nil
    }

    /// The encoder settings as `name=value` fields for the batch's settings digest: the six of
    /// the first format as they were always written (so state files from before keep matching
    /// when nothing else is set), then every other setting that is not at its default.
    /// Threads are left out: they do not change what the user asked for.
    public var digestText: String {
        var text = "crf=\(effectiveCRF) preset=\(speed) tune=\(tune ?? "-") bitrate=\(bitrate.map(String.init) ?? "-") keyint=\(keyint.map(String.init) ?? "-") profile=\(profile ?? "-")"
        let d = EncoderSettings()
        var extra: [(String, String)] = []
        if codec != d.codec { extra.append(("codec", codec.rawValue)) }
        if encoder != d.encoder { extra.append(("encoder", encoder.rawValue)) }
        if let p = videoParams { extra.append(("params", p)) }
        if audio != d.audio { extra.append(("audio", audio.rawValue)) }
        if let t = audioTracks { extra.append(("audioTracks", t.map(String.init).joined(separator: ","))) }
        if let b = audioBitrate { extra.append(("audioBitrate", String(b))) }
        if stripMetadata { extra.append(("stripMetadata", "true")) }
        if dropLocation { extra.append(("noLocation", "true")) }
        if hdr != d.hdr { extra.append(("hdr", hdr.rawValue)) }
        if toneMapping.curve != d.toneMapping.curve { extra.append(("tonemap", toneMapping.curve.rawValue)) }
        if toneMapping.targetPeak != d.toneMapping.targetPeak { extra.append(("targetPeak", "\(toneMapping.targetPeak)")) }
        if toneMapping.peakDetect { extra.append(("peakDetect", "true")) }
        if dolbyVision != d.dolbyVision { extra.append(("dolbyVision", dolbyVision.rawValue)) }
        if copyts { extra.append(("copyts", "true")) }
        if deinterlace != d.deinterlace { extra.append(("deinterlace", deinterlace.rawValue)) }
        if !scale.isEmpty { extra.append(("scale", scale.description)) }
        if let r = frameRate { extra.append(("fps", r.description)) }
        if !trim.isWhole { extra.append(("trim", trim.description)) }
        if !metadata.isEmpty {
            // Length-prefixed, so no key or value can be made to look like another split.
            extra.append(("metadata", metadata.map { "\($0.key.utf8.count):\($0.key)=\($0.value.utf8.count):\($0.value)" }.joined(separator: ";")))
        }
        for (k, v) in extra { text += " \(k)=\(v.utf8.count):\(v)" }
        return text
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
