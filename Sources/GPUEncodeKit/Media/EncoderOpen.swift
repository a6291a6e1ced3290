import CFFmpeg

// Opening an encoder with `EncoderSettings` (declared in GPUEncodeSettings, which has no FFmpeg).

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
