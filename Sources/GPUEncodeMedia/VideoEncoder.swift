import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import Glibc

/// The video encoder of a run, whichever codec and encoder: libx264, libx265, libsvtav1, or
/// h264_nvenc/hevc_nvenc, with `EncoderSettings` mapped onto each one's options. It owns the
/// codec context, restores packet durations (encoders drop them) and hands frames over in a pixel
/// format the encoder takes.
///
/// - `--encoder auto`: the codec's NVENC encoder where it opens, else the software encoder with a
///   warning; `--encoder nvenc`: NVENC or exit 69 (no driver, no NVENC engine, or AV1: FFmpeg 5.1
///   has no av1_nvenc).
/// - Pixel formats: the GPU's single pass writes NV12, which libx264 and NVENC take as it is.
///   libx265 and libsvtav1 take planar yuv420p only, so NV12 frames are deinterleaved for them
///   (swscale's unscaled NV12 → yuv420p copy: exact, a few hundred microseconds a 1080p frame,
///   on the encoder's thread).
/// - libx265 and SVT-AV1 print to stderr themselves: x265 gets `log-level=none` (warnings with
///   -v) and SVT-AV1 reads `SVT_LOG`, which `MediaLog.setLevel` sets.
package final class VideoEncoder {
    package let context: UnsafeMutablePointer<AVCodecContext>
    /// For -v, e.g. "libx265 (speed medium, crf 28)".
    package let description: String

    private let settings: EncoderSettings
    private let output: String
    /// The FFmpeg encoder's name (libx264, hevc_nvenc, ...).
    package let encoderName: String
    /// Frame durations by pts (encoder time base): encoders drop them, the muxer wants them.
    private var durations: [Int64: Int64] = [:]
    /// Frames of a format the encoder does not take are converted into this one (yuv420p).
    private var conversion: (sws: OpaquePointer, pool: FramePool)?
    private var flushed = false
    private var closed = false
    /// Frames sent to the encoder, and whether its end of stream came back (SVT-AV1's close needs it).
    private var framesSent = 0
    private var drained = false
    /// The timestamps of the frames sent, in order, and the packets handed out so far: for
    /// libx265's decode times on very short encodes (`repairedDTS`).
    private var sentPTS: [Int64] = []
    private var packetsOut = 0

    package init(settings: EncoderSettings, stream: EncoderStream, output: String, log: @escaping @Sendable (LogLevel, String) -> Void) throws {
        self.settings = settings
        self.output = output
        var opened: (UnsafeMutablePointer<AVCodecContext>, String, String)?
        if settings.encoder != .software {
            do {
                opened = try VideoEncoder.openNVENC(settings, stream, output: output)
                if let tune = settings.tune { log(.warning, "\(output): tune \(tune) is a \(settings.codec.softwareEncoder) setting; \(settings.codec.nvencEncoder) ignores it") }
            } catch let error as GPUEncodeError where settings.encoder == .auto && error.exitCode == 69 {
                // No NVENC here (69 is .gpu): say so once, then the CPU encoder.
                log(.warning, "\(error.message); encoding with \(settings.codec.softwareEncoder) instead")
            }
        }
        let (ctx, name, text) = try opened ?? VideoEncoder.openSoftware(settings, stream, output: output)
        context = ctx
        encoderName = name
        var description = text
        if ctx.pointee.pix_fmt != stream.pixelFormat {
            guard let sws = sws_getContext(stream.width, stream.height, stream.pixelFormat, stream.width, stream.height, ctx.pointee.pix_fmt,
                                           SWS_POINT, nil, nil, nil) else {
                var e: UnsafeMutablePointer<AVCodecContext>? = ctx
                avcodec_free_context(&e)
                throw GPUEncodeError(.internal, path: output, "cannot convert frames for \(name)")
            }
            conversion = (sws, try FramePool(width: stream.width, height: stream.height, format: ctx.pointee.pix_fmt))
            description += "; \(VideoEncoder.formatName(stream.pixelFormat)) frames converted to \(VideoEncoder.formatName(ctx.pointee.pix_fmt))"
        }
        self.description = description
    }

    deinit {
        close()
    }

    /// Frees the encoder now instead of when its last reference goes: a run closes it once it is
    /// drained and before the output is renamed into place, so whatever the encoder does while it
    /// closes (frees its buffers, joins its threads) happens while a failure still leaves no output.
    /// Nothing may use the encoder afterwards; closing again does nothing.
    package func close() {
        guard !closed else { return }
        closed = true
        // SVT-AV1 (1.4) waits forever in its deinit unless its end of stream went through, and
        // also waits forever for the end of a stream that had no picture: a run that fails or is
        // interrupted before or while encoding gives it one blank picture if it had none, the end
        // of the stream, and drains it, so that the encoder can close.
        if encoderName == "libsvtav1" && !drained {
            if framesSent == 0, let blank = VideoEncoder.blankFrame(like: context) {
                _ = avcodec_send_frame(context, blank.pointer)
            }
            _ = avcodec_send_frame(context, nil)
            let p = Packet()
            while avcodec_receive_packet(context, p.pointer) >= 0 { p.unref() }
        }
        var e: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&e)
        if let conversion { sws_freeContext(conversion.sws) }
    }

    /// Copies parameters to the output stream, sets its time base, and the codec tag (hvc1 for HEVC
    /// in MP4/MOV, so QuickTime and browsers play it; FFmpeg's default there is hev1).
    package func configure(_ stream: UnsafeMutablePointer<AVStream>, mp4Family: Bool) throws {
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, context), .internal, path: output, "encoder parameters")
        stream.pointee.time_base = context.pointee.time_base
        stream.pointee.sample_aspect_ratio = context.pointee.sample_aspect_ratio
        if mp4Family && settings.codec == .hevc {
            stream.pointee.codecpar.pointee.codec_tag = VideoEncoder.tag("hvc1")
        }
    }

    /// Sends a frame (nil = flush) and hands every finished packet to `emit`, in the encoder's time
    /// base, with its duration set.
    package func encode(_ frame: Frame?, emit: (Packet) throws -> Void) throws {
        precondition(!closed, "the encoder is closed")
        if let frame {
            // A decoded frame (the no-GPU path) still says what type it was; x264 and SVT-AV1 would
            // take that as an order and copy the source's GOP instead of choosing their own.
            frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
            durations[frame.pts] = frame.pointer.pointee.pkt_duration
            if sentPTS.count < 3 { sentPTS.append(frame.pts) }
            let input = try converted(frame)
            try check(avcodec_send_frame(context, input.pointer), .encode, path: output, "encoding failed")
            framesSent += 1
        } else {
            if flushed { return }
            flushed = true
            // SVT-AV1 never answers the end of a stream without pictures; deinit closes it.
            if framesSent == 0 && encoderName == "libsvtav1" { return }
            try check(avcodec_send_frame(context, nil), .encode, path: output, "flushing the encoder failed")
        }
        while true {
            let packet = Packet()
            let rc = avcodec_receive_packet(context, packet.pointer)
            if rc == AVERROR_EOF_VALUE { drained = true }
            if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return }
            try check(rc, .encode, path: output, "encoding failed")
            if let d = durations.removeValue(forKey: packet.pointer.pointee.pts), d > 0 {
                packet.pointer.pointee.duration = d
            }
            if let dts = repairedDTS() { packet.pointer.pointee.dts = dts }
            packetsOut += 1
            try emit(packet)
        }
    }

    /// libx265 computes each packet's DTS as its PTS less the B-frame delay, which it learns when
    /// its third frame arrives (x265 encoder.cpp: `m_bframeDelayTime`, never initialised): an
    /// encode of one or two frames gets whatever the heap held, and the MP4 muxer then refuses the
    /// packet ("pts/dts pair unsupported"), or not, from run to run. For such an encode the k-th
    /// packet's DTS is the k-th smallest PTS less the spread of the PTS: increasing, and never after
    /// its own PTS whatever order the packets come in.
    private func repairedDTS() -> Int64? {
        guard encoderName == "libx265", framesSent <= 2, !sentPTS.isEmpty, packetsOut < sentPTS.count else { return nil }
        let sorted = sentPTS.sorted()
        return sorted[packetsOut] - (sorted[sorted.count - 1] - sorted[0])
    }

    /// `frame` in the encoder's pixel format: itself, or a converted copy with its timestamps.
    private func converted(_ frame: Frame) throws -> Frame {
        guard let (sws, pool) = conversion else { return frame }
        let out = try pool.frame()
        let f = frame.pointer.pointee
        let src: [UnsafePointer<UInt8>?] = [f.data.0, f.data.1, f.data.2, f.data.3].map { $0.map { UnsafePointer($0) } }
        let srcStride = [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3]
        let o = out.pointer.pointee
        let dst = [o.data.0, o.data.1, o.data.2, o.data.3]
        let dstStride = [o.linesize.0, o.linesize.1, o.linesize.2, o.linesize.3]
        guard sws_scale(sws, src, srcStride, 0, f.height, dst, dstStride) > 0 else {
            throw GPUEncodeError(.internal, path: output, "cannot convert a frame for \(encoderName)")
        }
        try check(av_frame_copy_props(out.pointer, frame.pointer), .internal, path: output, "frame properties")
        return out
    }

    /// A black picture of the encoder's size and format (limited range), or nil.
    private static func blankFrame(like context: UnsafeMutablePointer<AVCodecContext>) -> Frame? {
        let frame = Frame()
        let f = frame.pointer
        f.pointee.width = context.pointee.width
        f.pointee.height = context.pointee.height
        f.pointee.format = context.pointee.pix_fmt.rawValue
        f.pointee.pts = 0
        guard av_frame_get_buffer(f, 0) >= 0 else { return nil }
        let planes = [(f.pointee.data.0, f.pointee.linesize.0, 16), (f.pointee.data.1, f.pointee.linesize.1, 128), (f.pointee.data.2, f.pointee.linesize.2, 128)]
        for (i, (data, stride, value)) in planes.enumerated() {
            guard let data else { continue }
            let rows = i == 0 ? Int(f.pointee.height) : (Int(f.pointee.height) + 1) / 2
            memset(data, Int32(value), Int(stride) * rows)
        }
        return frame
    }

    // MARK: Opening

    private static func formatName(_ f: AVPixelFormat) -> String {
        av_get_pix_fmt_name(f).map { String(cString: $0) } ?? "?"
    }

    /// MKTAG: four characters as a little-endian codec tag.
    package static func tag(_ s: String) -> UInt32 {
        s.utf8.prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// A context for encoder `name` with the stream's geometry, timing and colour; nil when this
    /// FFmpeg has no such encoder. The pixel format is the stream's when the encoder takes it, else
    /// yuv420p (frames are converted).
    private static func allocate(_ name: String, _ settings: EncoderSettings, _ stream: EncoderStream, output: String) throws
        -> (UnsafePointer<AVCodec>, UnsafeMutablePointer<AVCodecContext>)? {
        guard let codec = avcodec_find_encoder_by_name(name) else { return nil }
        var format = stream.pixelFormat
        if let list = codec.pointee.pix_fmts {
            var formats: [AVPixelFormat] = []
            var i = 0
            while list[i] != AV_PIX_FMT_NONE { formats.append(list[i]); i += 1 }
            if !formats.contains(format) {
                guard formats.contains(AV_PIX_FMT_YUV420P) else {
                    throw GPUEncodeError(.encode, path: output, "\(name) takes neither \(formatName(format)) nor yuv420p")
                }
                format = AV_PIX_FMT_YUV420P
            }
        }
        guard let enc = avcodec_alloc_context3(codec) else { throw GPUEncodeError(.internal, "out of memory") }
        enc.pointee.width = stream.width
        enc.pointee.height = stream.height
        enc.pointee.pix_fmt = format
        enc.pointee.time_base = stream.timeBase
        if let rate = stream.frameRate { enc.pointee.framerate = rate }
        if let sar = stream.sampleAspectRatio { enc.pointee.sample_aspect_ratio = sar }
        enc.pointee.color_primaries = stream.colorPrimaries
        enc.pointee.color_trc = stream.colorTransfer
        enc.pointee.colorspace = stream.colorSpace
        enc.pointee.color_range = stream.colorRange
        if let g = settings.keyint { enc.pointee.gop_size = Int32(clamping: g) }
        if stream.globalHeader { enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        // The muxer's field order tag (MP4 `fiel`, Matroska FieldOrder) comes from here, through
        // the stream parameters. libx264 codes interlaced (MBAFF, field order from each frame's
        // top_field_first) with the interlaced-DCT flag, as `ffmpeg -flags +ildct+ilme`; x265 and
        // SVT-AV1 code the woven frames as pictures, tagged in the container only.
        enc.pointee.field_order = stream.fieldOrder
        if stream.fieldOrder == AV_FIELD_TT || stream.fieldOrder == AV_FIELD_BB {
            enc.pointee.flags |= AV_CODEC_FLAG_INTERLACED_DCT | AV_CODEC_FLAG_INTERLACED_ME
        }
        return (codec, enc)
    }

    /// avcodec_open2, freeing the context when it fails.
    private static func open(_ enc: UnsafeMutablePointer<AVCodecContext>, _ codec: UnsafePointer<AVCodec>,
                             _ options: inout OpaquePointer?) -> Int32 {
        let rc = avcodec_open2(enc, codec, &options)
        if rc < 0 {
            var e: UnsafeMutablePointer<AVCodecContext>? = enc
            avcodec_free_context(&e)
        }
        return rc
    }

    /// x265 and SVT-AV1 write their own lines to stderr: quiet unless -v (FFmpeg's level is
    /// warnings then, see MediaLog).
    private static var verbose: Bool { av_log_get_level() >= AV_LOG_WARNING }

    /// `key=value:...` for the encoder's params option: ours first, the user's after (the later
    /// wins), then what must hold whatever the user asked (`then`).
    private static func params(_ ours: [String], _ user: String?, then forced: [String] = []) -> String {
        (ours + (user.map { [$0] } ?? []) + forced).joined(separator: ":")
    }

    /// x265's `master-display` (chromaticities in 0.00002, luminance in 0.0001 cd/m² units, G B R
    /// order) and `max-cll`, so players that read SEI rather than the container see them.
    static func x265HDRParams(_ hdr: HDRMetadata) -> [String] {
        var p: [String] = []
        if let m = hdr.mastering {
            func xy(_ c: (x: Double, y: Double)) -> String { "(\(Int((c.x * 50000).rounded())),\(Int((c.y * 50000).rounded())))" }
            p.append("master-display=G\(xy(m.green))B\(xy(m.blue))R\(xy(m.red))WP\(xy(m.white))L(\(Int((m.maxLuminance * 10000).rounded())),\(Int((m.minLuminance * 10000).rounded())))")
        }
        if let c = hdr.contentLight { p.append("max-cll=\(c.maxCLL),\(c.maxFALL)") }
        return p
    }

    private static func openSoftware(_ s: EncoderSettings, _ stream: EncoderStream, output: String) throws
        -> (UnsafeMutablePointer<AVCodecContext>, String, String) {
        let name = s.codec.softwareEncoder
        guard case let (codec, enc)? = try allocate(name, s, stream, output: output) else {
            throw GPUEncodeError(.encode, path: output, "this FFmpeg has no \(name) encoder")
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let native = EncoderSettings.nativeSpeed(s.speed, codec: s.codec, nvenc: false)
        let crf = s.effectiveCRF
        let rate: String
        let tenBit = (av_pix_fmt_desc_get(enc.pointee.pix_fmt)?.pointee.comp.0.depth ?? 8) > 8
        // What -v says besides speed and rate.
        var notes: [String] = []
        switch s.codec {
        case .h264:
            enc.pointee.thread_count = Int32(clamping: s.threads)
            av_dict_set(&options, "preset", native, 0)
            if let tune = s.tune { av_dict_set(&options, "tune", tune, 0) }
            let lossless: Bool
            if let bitrate = s.bitrate {
                enc.pointee.bit_rate = bitrate
                lossless = false
                rate = "\(bitrate) b/s"
            } else {
                av_dict_set(&options, "crf", String(crf), 0)
                lossless = crf == 0
                rate = "crf \(formatNumber(crf))"
            }
            // High profile cannot be lossless; x264 picks High 4:4:4 Predictive for crf 0.
            if let profile = s.profile ?? (lossless ? nil : tenBit ? "high10" : "high") { av_dict_set(&options, "profile", profile, 0) }
            // Interlaced: the order of the stream's fields in the SPS/SEI from the first frame on
            // (x264 starts top first and would tag a bottom-first stream tt).
            let fields = stream.fieldOrder == AV_FIELD_BB ? ["bff=1"] : stream.fieldOrder == AV_FIELD_TT ? ["tff=1"] : []
            let p = params(fields, s.videoParams)
            if !p.isEmpty { av_dict_set(&options, "x264-params", p, 0) }
        case .hevc:
            // FFmpeg's libx265 passes thread_count on as x265's frame threads; avcodec_alloc_context3
            // leaves it at 1, which serialises frames (on 16 cores half ffmpeg's speed). 0 lets x265
            // choose, as the ffmpeg CLI's default -threads auto does; --threads sizes the pool.
            enc.pointee.thread_count = 0
            av_dict_set(&options, "preset", native, 0)
            if let tune = s.tune { av_dict_set(&options, "tune", tune, 0) }
            if let bitrate = s.bitrate {
                enc.pointee.bit_rate = bitrate
                rate = "\(bitrate) b/s"
            } else {
                av_dict_set(&options, "crf", String(crf), 0)
                rate = "crf \(formatNumber(crf))"
            }
            av_dict_set(&options, "profile", s.profile ?? (tenBit ? "main10" : "main"), 0)
            var ours = ["log-level=\(verbose ? "warning" : "none")"]
            // HDR kept: the mastering display and light level as SEI too, not only in the container.
            ours += VideoEncoder.x265HDRParams(stream.hdr)
            if s.threads > 0 { ours.append("pools=\(s.threads)") }
            // After the user's: narrow pictures need the CU-tree off whatever was asked (X265NarrowPicture).
            let narrow = X265NarrowPicture.params(width: Int(stream.width))
            av_dict_set(&options, "x265-params", params(ours, s.videoParams, then: narrow), 0)
            if !narrow.isEmpty { notes.append("cutree off: x265 overruns its buffers below \(X265NarrowPicture.widestAffected + 1) pixels wide") }
        case .av1:
            av_dict_set(&options, "preset", native, 0)
            if let bitrate = s.bitrate {
                enc.pointee.bit_rate = bitrate
                rate = "\(bitrate) b/s"
            } else {
                // SVT-AV1's crf is a whole number; the settings were checked to give one.
                av_dict_set(&options, "crf", String(Int(crf)), 0)
                rate = "crf \(formatNumber(crf))"
            }
            enc.pointee.profile = FF_PROFILE_AV1_MAIN
            let ours = s.threads > 0 ? ["lp=\(s.threads)"] : []
            let p = params(ours, s.videoParams)
            if !p.isEmpty { av_dict_set(&options, "svtav1-params", p, 0) }
        }
        let rc = open(enc, codec, &options)
        try check(rc, .encode, path: output, "cannot open \(name) with these settings")
        let speed = native == s.speed ? "speed \(s.speed)" : "speed \(s.speed) = preset \(native)"
        return (enc, name, "\(name) (\(([speed, rate] + notes).joined(separator: ", ")))")
    }

    /// h264_nvenc/hevc_nvenc with the settings mapped: crf → constant quality (`-rc vbr -cq`),
    /// bitrate → `-rc vbr -b:v`, speed → p1…p7. A failure to open is `.gpu` (no engine, no driver).
    private static func openNVENC(_ s: EncoderSettings, _ stream: EncoderStream, output: String) throws
        -> (UnsafeMutablePointer<AVCodecContext>, String, String) {
        let name = s.codec.nvencEncoder
        guard case let (codec, enc)? = try allocate(name, s, stream, output: output) else {
            if s.codec == .av1 {
                throw GPUEncodeError(.gpu, path: output, "av1_nvenc is not in this FFmpeg build (FFmpeg 5.1 has no NVENC AV1 encoder; it came with FFmpeg 6.0), so NVENC cannot encode AV1 here")
            }
            throw GPUEncodeError(.gpu, path: output, "\(name) is not in this FFmpeg build")
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let nvPreset = EncoderSettings.nvencPreset(forX264: s.speed)
        av_dict_set(&options, "preset", nvPreset, 0)
        av_dict_set(&options, "rc", "vbr", 0)
        let crf = s.effectiveCRF
        let lossless = crf == 0 && s.bitrate == nil
        let rate: String
        if let bitrate = s.bitrate {
            enc.pointee.bit_rate = bitrate
            av_dict_set(&options, "tune", "hq", 0)
            rate = "vbr \(bitrate) b/s"
        } else {
            // Constant quality: no bitrate target (NVENC's own default is 2 Mb/s).
            enc.pointee.bit_rate = 0
            if lossless {
                av_dict_set(&options, "tune", "lossless", 0)
                rate = "lossless"
            } else {
                av_dict_set(&options, "tune", "hq", 0)
                av_dict_set(&options, "cq", String(crf), 0)
                rate = "vbr cq \(formatNumber(crf))"
            }
        }
        switch s.codec {
        case .h264:
            // NVENC's lossless H.264 is High 4:4:4 Predictive (qpprime_y_zero_transform_bypass), as x264's.
            av_dict_set(&options, "profile", s.profile ?? (lossless ? "high444p" : "high"), 0)
        default:
            if let profile = s.profile ?? (lossless ? nil : "main") { av_dict_set(&options, "profile", profile, 0) }
        }
        let rc = open(enc, codec, &options)
        if rc < 0 {
            throw GPUEncodeError(.gpu, path: output, "\(name) cannot be opened (FFmpeg: \(averrorString(rc))): it needs an NVIDIA driver and a GPU with an NVENC engine")
        }
        return (enc, name, "\(name) (speed \(s.speed) = preset \(nvPreset), \(rate))")
    }
}

/// What the encoder must know about the stream, whichever encoder it is.
package struct EncoderStream {
    package var width: Int32
    package var height: Int32
    package var pixelFormat: AVPixelFormat
    package var timeBase: AVRational
    package var frameRate: AVRational?
    package var sampleAspectRatio: AVRational?
    package var colorPrimaries: AVColorPrimaries
    package var colorTransfer: AVColorTransferCharacteristic
    package var colorSpace: AVColorSpace
    package var colorRange: AVColorRange
    package var globalHeader: Bool
    /// HDR side data to write into the bitstream as well (x265's SEI), when HDR is kept.
    package var hdr = HDRMetadata()
    /// Interlaced output: AV_FIELD_TT or AV_FIELD_BB (the frames carry their own order too);
    /// AV_FIELD_PROGRESSIVE or AV_FIELD_UNKNOWN otherwise.
    package var fieldOrder: AVFieldOrder = AV_FIELD_UNKNOWN

    package init(width: Int32, height: Int32, pixelFormat: AVPixelFormat, timeBase: AVRational, frameRate: AVRational?, sampleAspectRatio: AVRational?, colorPrimaries: AVColorPrimaries, colorTransfer: AVColorTransferCharacteristic, colorSpace: AVColorSpace, colorRange: AVColorRange, globalHeader: Bool) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.timeBase = timeBase
        self.frameRate = frameRate
        self.sampleAspectRatio = sampleAspectRatio
        self.colorPrimaries = colorPrimaries
        self.colorTransfer = colorTransfer
        self.colorSpace = colorSpace
        self.colorRange = colorRange
        self.globalHeader = globalHeader
    }
}

extension VideoCodec {
    package var codecID: AVCodecID {
        switch self {
        case .h264: return AV_CODEC_ID_H264
        case .hevc: return AV_CODEC_ID_HEVC
        case .av1: return AV_CODEC_ID_AV1
        }
    }
}
