import CFFmpeg

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

/// What the encoder must know about the stream, whichever encoder it is.
struct EncoderStream {
    var width: Int32
    var height: Int32
    var pixelFormat: AVPixelFormat
    var timeBase: AVRational
    var frameRate: AVRational?
    var sampleAspectRatio: AVRational?
    var colorPrimaries: AVColorPrimaries
    var colorTransfer: AVColorTransferCharacteristic
    var colorSpace: AVColorSpace
    var colorRange: AVColorRange
    var globalHeader: Bool
}

extension EncoderSettings {
    /// Opens the encoder `encoder` asks for. With `.auto`, an h264_nvenc that will not open (no
    /// driver, no NVENC engine) gives a warning and libx264; with `.nvenc` it is an error (exit 69).
    /// Returns the opened context and a description for `-v`.
    func open(_ stream: EncoderStream, output: String,
              log: @Sendable (LogLevel, String) -> Void) throws -> (UnsafeMutablePointer<AVCodecContext>, String) {
        if encoder != .libx264 {
            do {
                let opened = try openNVENC(stream, output: output)
                if let tune { log(.warning, "\(output): tune \(tune) is an x264 setting; h264_nvenc ignores it") }
                return opened
            } catch let error as GPUEncodeError where encoder == .auto && error.exitCode == 69 {
                // No NVENC here (69 is .gpu): say so once, then the CPU encoder.
                log(.warning, "\(error.message); encoding with libx264 instead")
            }
        }
        return try openX264(stream, output: output)
    }

    private func allocate(_ name: String, _ stream: EncoderStream, output: String) throws
        -> (UnsafePointer<AVCodec>, UnsafeMutablePointer<AVCodecContext>)? {
        guard let codec = avcodec_find_encoder_by_name(name) else { return nil }
        guard let enc = avcodec_alloc_context3(codec) else { throw GPUEncodeError(.internal, "out of memory") }
        enc.pointee.width = stream.width
        enc.pointee.height = stream.height
        enc.pointee.pix_fmt = stream.pixelFormat
        enc.pointee.time_base = stream.timeBase
        if let rate = stream.frameRate { enc.pointee.framerate = rate }
        if let sar = stream.sampleAspectRatio { enc.pointee.sample_aspect_ratio = sar }
        enc.pointee.color_primaries = stream.colorPrimaries
        enc.pointee.color_trc = stream.colorTransfer
        enc.pointee.colorspace = stream.colorSpace
        enc.pointee.color_range = stream.colorRange
        if let g = keyint { enc.pointee.gop_size = Int32(clamping: g) }
        if stream.globalHeader { enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        return (codec, enc)
    }

    private func openX264(_ stream: EncoderStream, output: String) throws -> (UnsafeMutablePointer<AVCodecContext>, String) {
        guard case let (codec, enc)? = try allocate("libx264", stream, output: output) else {
            throw GPUEncodeError(.encode, path: output, "this FFmpeg has no libx264 encoder")
        }
        enc.pointee.thread_count = Int32(clamping: threads)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "preset", preset, 0)
        if let tune { av_dict_set(&options, "tune", tune, 0) }
        let lossless: Bool
        let rate: String
        if let bitrate {
            enc.pointee.bit_rate = bitrate
            lossless = false
            rate = "\(bitrate) b/s"
        } else {
            av_dict_set(&options, "crf", String(crf), 0)
            lossless = crf == 0
            rate = "crf \(crf)"
        }
        // High profile cannot be lossless; x264 picks High 4:4:4 Predictive for crf 0.
        if let profile = profile ?? (lossless ? nil : "high") { av_dict_set(&options, "profile", profile, 0) }
        let rc = avcodec_open2(enc, codec, &options)
        if rc < 0 {
            var e: UnsafeMutablePointer<AVCodecContext>? = enc
            avcodec_free_context(&e)
            try check(rc, .encode, path: output, "cannot open libx264 with these settings")
        }
        return (enc, "libx264 (preset \(preset), \(rate))")
    }

    /// h264_nvenc with x264's settings mapped: crf → constant quality (`-rc vbr -cq`), bitrate →
    /// `-rc vbr -b:v`, x264 preset → p1…p7. A failure to open is `.gpu` (no engine, no driver).
    private func openNVENC(_ stream: EncoderStream, output: String) throws -> (UnsafeMutablePointer<AVCodecContext>, String) {
        guard case let (codec, enc)? = try allocate("h264_nvenc", stream, output: output) else {
            throw GPUEncodeError(.gpu, path: output, "h264_nvenc is not in this FFmpeg build")
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let nvPreset = EncoderSettings.nvencPreset(forX264: preset)
        av_dict_set(&options, "preset", nvPreset, 0)
        av_dict_set(&options, "rc", "vbr", 0)
        let rate: String
        if let bitrate {
            enc.pointee.bit_rate = bitrate
            av_dict_set(&options, "tune", "hq", 0)
            rate = "vbr \(bitrate) b/s"
        } else {
            // Constant quality: no bitrate target (h264_nvenc's own default is 2 Mb/s).
            enc.pointee.bit_rate = 0
            if crf == 0 {
                av_dict_set(&options, "tune", "lossless", 0)
                rate = "lossless"
            } else {
                av_dict_set(&options, "tune", "hq", 0)
                av_dict_set(&options, "cq", String(crf), 0)
                rate = "vbr cq \(crf)"
            }
        }
        // NVENC's lossless H.264 is High 4:4:4 Predictive (qpprime_y_zero_transform_bypass), as x264's.
        av_dict_set(&options, "profile", profile ?? (crf == 0 && bitrate == nil ? "high444p" : "high"), 0)
        let rc = avcodec_open2(enc, codec, &options)
        if rc < 0 {
            var e: UnsafeMutablePointer<AVCodecContext>? = enc
            avcodec_free_context(&e)
            throw GPUEncodeError(.gpu, path: output, "h264_nvenc cannot be opened (FFmpeg: \(averrorString(rc))): it needs an NVIDIA driver and a GPU with an NVENC engine")
        }
        return (enc, "h264_nvenc (preset \(nvPreset), \(rate))")
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
