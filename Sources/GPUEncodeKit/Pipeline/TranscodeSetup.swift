import CFFmpeg

/// A transcode set up: the input opened, the output's streams mapped (the video encoder's first,
/// then one per copied stream) and its header written, and a handler for each input stream that
/// reaches the output. The loop that feeds the handlers is `Transcoder.run`.
final class TranscodeJob {
    let input: VideoSource
    let output: OutputFile
    /// Nil for a plan (`planOnly`), which starts no stage.
    let video: VideoTranscodeHandler!
    /// By input stream index; nil for a stream that is dropped.
    let handlers: [OutputStreamHandler?]
    /// The video's GPU stage (nil without filters) and encode stage, for a plan to open and report.
    let gpuStage: GPUStage?
    let encodeStage: EncodeStage
    private let options: TranscodeOptions
    /// The streams whose end ends the run early (a trim's end); subtitles do not hold it up.
    private var endWatch: [OutputStreamHandler] = []
    let trim: TrimPlan

    /// Every stream that counts is past the trim's end: nothing more to read.
    var pastEnd: Bool { !endWatch.isEmpty && endWatch.allSatisfy { $0.isDone } }

    /// `planOnly` (`--dry-run`): everything up to writing the header (input opened, streams mapped,
    /// encoders opened) with an output that creates no file; no stage is started.
    init(_ options: TranscodeOptions, run: RunState, planOnly: Bool = false) throws {
        var o = options
        input = try VideoSource(path: o.input, threads: o.decoderThreads, hwaccel: o.hwaccel, cudaDevice: o.cudaDevice, log: o.log)
        o.report?.input(StreamDescription.input(input))
        // Kept HDR is 10-bit: HEVC Main 10 unless a codec was named (H.264 would be High 10,
        // which few players decode).
        if TranscodeJob.keepsHDR(o, input: input) && !o.encoder.codecGiven && o.encoder.codec == .h264 { o.encoder.codec = .hevc }
        self.options = o
        o.report?.describe(o)
        output = try OutputFile(path: o.output, overwrite: o.overwrite, codec: o.encoder.codec, planOnly: planOnly, folder: o.outputFolder)
        o.report?.output(container: String(cString: output.format.pointee.oformat.pointee.name))
        let metadata = MetadataPolicy(o.encoder)
        // The output starts at 0 (ffmpeg's default) unless --copyts: what each stream moves by.
        let wholeTimeline = Timeline(format: input.format, copyts: o.encoder.copyts)
        if let note = wholeTimeline.note { o.log(.info, note) }
        // --start/--to/-t: the cut in each stream's ticks, and the shift that puts the start at 0.
        var timeline = TrimPlan(range: o.encoder.trim, timeline: wholeTimeline, format: input.format, copyts: o.encoder.copyts)
        // Copied Opus into Matroska is cut by its pre-skip, and wants packets from before the cut.
        if output.isMatroska && o.encoder.audio != .none && OpusTrimStart.inputHasOpus(input.format) {
            timeline.seekPreRoll = OpusTrimStart.preRollMicros
        }
        trim = timeline
        try TranscodeJob.checkTrim(timeline, input: input, path: o.input)
        if !timeline.isWhole {
            if !timeline.seek(input.format) { o.log(.info, "trim: the input cannot seek; reading from its start") }
            o.log(.info, "trim: \(o.encoder.trim.description) (input time \(formatTime(timeline.cutMicros!)) s becomes \(o.encoder.copyts ? "the first time kept (--copyts)" : "0"))")
        }
        let (gpu, encode, geometry) = try TranscodeJob.mapVideo(o, input: input, output: output, metadata: metadata, sequential: o.sequential,
                                                                     trim: timeline)
        var handlers = [OutputStreamHandler?](repeating: nil, count: input.streamCount)
        // Audio next, in the plan's order: copied, or re-encoded where the container's players
        // would not play it (AudioPlan: --audio, --audio-tracks). Its warnings wait for the first
        // encoded frame, so a run that fails before prints one line.
        let audio = try AudioOutputs.add(input: input, output: output, settings: o.encoder, metadata: metadata, timeline: timeline, run: run,
                                         inputPath: o.input, outputPath: o.output, report: o.report, log: encode.setupWarnings.function)
        for (i, handler) in audio.handlers { handlers[i] = handler }
        for i in 0..<input.streamCount where i != input.videoIndex && input.stream(i).pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_AUDIO {
            handlers[i] = try TranscodeJob.mapStream(input.stream(i), o, output: output, metadata: metadata, shift: timeline.shift(i),
                                                     window: timeline.window(i))
        }
        metadata.copyContainer(from: input.format.pointee.metadata, to: &output.format.pointee.metadata)
        for warning in metadata.unwritten(in: AudioContainer(outputPath: o.output)) { encode.setupWarnings.function(.warning, "\(o.output): \(warning)") }
        // MP4 outputs count edit lists (start offsets) in a timescale that holds the video's and
        // every audio stream's start exactly, not rounded to milliseconds.
        let timeBase = encode.encoder.context.pointee.time_base
        if timeBase.num == 1 && timeBase.den >= 1000 && timeBase.den <= 1_000_000 {
            output.movieTimescale = AudioOutputs.movieTimescale(video: timeBase.den, audio: audio.timeBases)
        }
        gpuStage = gpu
        encodeStage = encode
        if planOnly {
            video = nil
            self.handlers = handlers
            return
        }
        try output.open()
        video = try VideoTranscodeHandler(source: input, gpu: gpu, encode: encode, outputWidth: geometry.outputWidth,
                                          outputHeight: geometry.outputHeight, sequential: o.sequential, run: run,
                                          window: timeline.window(input.videoIndex))
        handlers[input.videoIndex] = video
        self.handlers = handlers
        // A trim's end: reading stops once the video and every audio stream are past it.
        endWatch = [video] + audio.handlers.values.map { $0 }
    }

    /// What the run did, after the output is finished; `-v` hears which stage bounded it, and a
    /// damaged input gets its warning.
    func summary(seconds: Double) -> TranscodeSummary {
        if let line = video.stagesBusy(wall: seconds) { options.log(.info, line) }
        if input.decodeErrors > 0 {
            options.log(.warning, "\(options.input): \(input.decodeErrors) decode error(s) in the video stream; damaged frames were skipped or concealed by the decoder")
        }
        var summary = TranscodeSummary(frames: video.framesEncoded, renderer: video.rendererName, seconds: seconds, decodeErrors: input.decodeErrors)
        summary.framesDecoded = video.framesDecoded
        summary.stagesBusy = video.busy
        return summary
    }

    /// A start at or after the end of the input (as far as the container says how long it is) is
    /// a usage error (64) before anything is written: there would be nothing to encode.
    static func checkTrim(_ trim: TrimPlan, input: VideoSource, path: String) throws {
        guard trim.range.start > 0 else { return }
        let f = input.format.pointee
        guard f.duration > 0, f.duration != AV_NOPTS else { return }
        if trim.range.start >= f.duration {
            throw startPastEnd(trim.range, length: Double(f.duration) / 1e6, path: path)
        }
    }

    /// The error of a start where the input has no video frame any more.
    static func startPastEnd(_ range: TrimRange, length: Double?, path: String) -> GPUEncodeError {
        let long = length.map { " (the input is \(formatNumber(($0 * 1000).rounded() / 1000)) s long)" } ?? ""
        return GPUEncodeError(.usage, path: path, "--start \(formatTime(range.start)) is at or after the end of the video\(long); nothing to encode")
    }

    /// Whether this run keeps the input's HDR (`--hdr keep` and a PQ or HLG input).
    static func keepsHDR(_ o: TranscodeOptions, input: VideoSource) -> Bool {
        o.encoder.hdr == .keep && [AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67].contains(input.decoder.pointee.color_trc)
    }

    /// The video stream: the picture's geometry (rotation, odd sizes, what the filters make of
    /// it), the GPU stage that filters it (none when the preset has no filters), the encoder and
    /// its output stream.
    private static func mapVideo(_ o: TranscodeOptions, input: VideoSource, output: OutputFile, metadata: MetadataPolicy, sequential: Bool,
                                 trim: TrimPlan) throws
        -> (GPUStage?, EncodeStage, RenderGeometry) {
        let dec = input.decoder.pointee
        let keep = keepsHDR(o, input: input)
        let dolbyVision = try DolbyVisionPlan(o, input: input, keep: keep)
        // (Profile 5's IPTPQc2 base layer is tagged as it pleases; its RPU makes it PQ.)
        let hdrInput = [AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67].contains(dec.color_trc) || dolbyVision.rpu != nil
        // The side data kept HDR carries over (the stream's, else the first frame's).
        let keptHDR = keep ? input.hdrMetadata : HDRMetadata()
        // (The default preset's `identity` filter changes nothing: kept HDR then skips the GPU, and
        // the 10-bit frames go to the encoder as decoded. With filters the GPU filters the HDR
        // signal's own R'G'B' and writes 10-bit planes in the input's colour space.)
        let inStream = input.videoStream
        // The output scaler, after the preset's filters: its size is of the picture as
        // displayed (upright, pixels made square), and the scaled picture has square pixels.
        let scale = OutputScale(o.encoder.scale, input: input, preset: o.preset.filters)
        var sar = scale.sampleAspect
        let displayed = scale.displayed, scaleTo = scale.target
        let filters = scale.filters(after: o.preset.filters)
        if let scaleTo {
            try PictureSize.checkScaled(scaleTo, from: (displayed.outputWidth, displayed.outputHeight), input: o.input)
            o.log(.info, "scale: \(displayed.outputWidth)x\(displayed.outputHeight)\(sar.num > 0 && sar.num != sar.den ? " (SAR \(sar.num):\(sar.den))" : "") to \(scaleTo.width)x\(scaleTo.height), square pixels")
            sar = AVRational(num: 1, den: 1)
        }
        let onlyIdentity = filters.onlyIdentity
        let keepOnGPU = keep && !onlyIdentity
        let rate = av_guess_frame_rate(input.format, inStream, nil)
        // Kept HDR without filters has no GPU stage: interlaced video stays interlaced, as with
        // --preset none (--deinterlace frame or field deinterlaces it on the GPU, in 10 bits).
        let interlace = InterlacePlan(mode: o.encoder.deinterlace, presetHasFilters: !filters.isEmpty && !(keep && onlyIdentity), fieldOrder: input.fieldOrder,
                                      timeBase: inStream.pointee.time_base, frameRate: rate.num > 0 && rate.den > 0 ? rate : nil,
                                      codec: o.encoder.codec, input: o.input)
        for (level, note) in interlace.notes { o.log(level, note) }
        // HDR to be tone-mapped, and --deinterlace frame or field with --preset none, go through
        // the GPU even without filters.
        let bypass = (filters.isEmpty || (keep && !keepOnGPU)) && !(hdrInput && o.encoder.hdr == .tonemap) && interlace.deinterlace == nil
        if bypass { o.log(.info, "GPU: none (preset \(o.preset.name) has no filters: decode → encode)") }
        let format = dec.pix_fmt
        // Kept HDR stays 10-bit 4:2:0 all the way.
        let bypassFormat = keep ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P
        var (working, color) = bypass ? (bypassFormat, YUVColorSpace(matrix: .bt709, fullRange: false)) : input.workingFormat
        if !bypass, let rpu = dolbyVision.rpu { color = rpu.colorSpace(base: color) }
        // Without a GPU stage nothing turns the picture, so the rotation stays a flag (below).
        let rotation = bypass ? .none : input.rotation
        let reference = RenderGeometry(width: dec.width, height: dec.height, format: working, rotation: rotation,
                                       filters: bypass ? [] : filters)
        try PictureSize.check(reference, input: o.input, preset: o.preset.origin)
        // NVDEC frames go to the GPU stage in CUDA memory (CUDAFrames); without one they are downloaded.
        input.keepsCUDAFrames = !bypass && o.cudaInterop
        // Scale first: on a software renderer a downscale ahead of pointwise filters runs in swscale on delivery.
        // (NVDEC frames kept in CUDA memory are not here to scale: such runs count as hardware ones.)
        let first = ScaleFirst(filters: bypass ? [] : filters, input: input, working: working, rotation: rotation,
                               software: scaleTo != nil && !bypass && !input.keepsCUDAFrames
                                   && (o.sharedGL?.isSoftware ?? GLContext.rendersInSoftware(o.gpu)),
                               hdr: hdrInput || keep, deinterlace: interlace.deinterlace.map { !$0.waitForFlag } ?? false, light: o.preset.light, options: o.compile)
        if scaleTo != nil && !bypass { o.log(.info, first.description) }
        let (geometry, gpuFilters) = first.deliver(input, working: working, rotation: rotation, filters: bypass ? [] : filters)
        guard geometry.outputWidth >= 2, geometry.outputHeight >= 2 else {
            throw GPUEncodeError(.input, path: o.input, "video is \(dec.width)x\(dec.height), too small to encode")
        }
        let formatName = format == AV_PIX_FMT_NONE ? "unknown" : String(cString: av_get_pix_fmt_name(format))
        // An untagged matrix is guessed from the size (UntaggedMatrix): say so, and which.
        // (An applied RPU brings its own matrix.)
        let guess = bypass || dolbyVision.rpu != nil ? nil : UntaggedMatrix.note(dec.colorspace, format: format, width: Int(dec.width), height: Int(dec.height))
        o.log(.info, "video: \(dec.width)x\(dec.height) \(formatName), \(bypass ? "colour untouched" : color.description + (guess.map { ", matrix \($0)" } ?? "")), rotation \(rotation.rawValue)°, output \(geometry.outputWidth)x\(geometry.outputHeight)")
        if !keep, let srcDesc = av_pix_fmt_desc_get(format), srcDesc.pointee.comp.0.depth > 8 {
            // Read and filtered at full depth on the GPU; only the output is 8-bit (with dither).
            o.log(.warning, "\(o.input): \(srcDesc.pointee.comp.0.depth)-bit video is written as 8-bit (filtered at full depth, dithered)")
        }
        if let (level, line) = dolbyVision.note { o.log(level, line) }
        if hdrInput && o.encoder.hdr == .tonemap {
            let t = o.encoder.toneMapping
            let shader = SourceColorShader(color: color, toneMapping: t)
            let peak = t.peakDetect ? "measured per scene (at most \(Int(shader.sourcePeakNits)) nits)"
                : "\(Int(shader.sourcePeakNits)) nits\(color.hdr.peakNits == nil ? " (nominal)" : " (metadata)")"
            o.log(.info, "HDR: \(color.transfer == .pq ? "PQ" : "HLG") tone-mapped to SDR BT.709 with \(t.curve.rawValue), peak \(peak) to \(formatNumber(t.targetPeak)) nits")
        }
        if geometry.uprightWidth != (rotation.swapsDimensions ? geometry.sourceHeight : geometry.sourceWidth)
            || geometry.uprightHeight != (rotation.swapsDimensions ? geometry.sourceWidth : geometry.sourceHeight) {
            o.log(.warning, "\(o.input): odd dimensions cropped to \(geometry.uprightWidth)x\(geometry.uprightHeight) for 4:2:0 video")
        }

        // The encoder works in the input's time base, so no timestamp is ever rounded.
        let outputFormat = keep ? AV_PIX_FMT_YUV420P10LE
            : !bypass && FrameRenderer.writesNV12(geometry, path: o.renderPath, filters: gpuFilters) ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P
        // (Without a GPU stage the picture is not turned: its SAR stays the coded one.)
        if bypass && rotation != input.rotation && input.rotation.swapsDimensions && sar.num > 0 { sar = AVRational(num: sar.den, den: sar.num) }
        // --fps: the encoder counts in 1/rate, as ffmpeg's fps filter's output.
        let fps = o.encoder.frameRate.map { AVRational(num: Int32($0.numerator), den: Int32($0.denominator)) }
        var stream = EncoderStream(width: Int32(geometry.outputWidth), height: Int32(geometry.outputHeight), pixelFormat: outputFormat,
                                   timeBase: fps.map { AVRational(num: $0.den, den: $0.num) } ?? interlace.timeBase,
                                   frameRate: fps ?? interlace.frameRate,
                                   sampleAspectRatio: sar.num > 0 ? sar : nil,
                                   colorPrimaries: AVCOL_PRI_BT709, colorTransfer: AVCOL_TRC_BT709, colorSpace: AVCOL_SPC_BT709,
                                   colorRange: AVCOL_RANGE_MPEG,
                                   globalHeader: output.format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0)
        if let order = interlace.keptFieldOrder { stream.fieldOrder = order }
        if bypass {
            // The pixels keep their matrix; swscale only turns yuvj (full range) into limited range.
            stream.colorPrimaries = dec.color_primaries
            stream.colorTransfer = dec.color_trc
            stream.colorSpace = dec.colorspace
            stream.colorRange = format == AV_PIX_FMT_YUV420P && dec.color_range == AVCOL_RANGE_JPEG ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        }
        if keep {
            // Kept HDR, filtered or not, is in the input's colour space (the GPU writes it back
            // through the input's matrix and range).
            stream.colorPrimaries = dec.color_primaries
            stream.colorTransfer = dec.color_trc
            stream.colorSpace = dec.colorspace
            stream.colorRange = bypass ? (dec.color_range == AVCOL_RANGE_JPEG ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG)
                : color.fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
            stream.hdr = keptHDR
        }
        let encoder = try VideoEncoder(settings: o.encoder, stream: stream, output: o.output, log: o.log)
        o.log(.info, "encoder: \(encoder.description)")

        let videoOut = try output.addStream()
        try encoder.configure(videoOut, mp4Family: output.isMP4Family)
        if let report = o.report {
            let c = encoder.context.pointee
            var m: [(String, JSONValue)] = [("input", .number(input.videoIndex)), ("index", .number(Int(videoOut.pointee.index))), ("type", .string("video")),
                                            ("action", .string("encode")), ("codec", .string(o.encoder.codec.rawValue)),
                                            ("encoder", .string(String(cString: c.codec.pointee.name))), ("gpu", .bool(!bypass))]
            m += StreamDescription.picture(width: c.width, height: c.height, format: c.pix_fmt, matrix: c.colorspace, primaries: c.color_primaries,
                                           transfer: c.color_trc, range: c.color_range)
            m.append(("rotation", .number(bypass ? input.rotation.rawValue : 0)))
            if !bypass, input.rotation != .none { m.append(("note", .string("turned upright (\(input.rotation.rawValue)°)"))) }
            report.stream(.object(m), index: Int(videoOut.pointee.index), input: input.videoIndex)
        }
        videoOut.pointee.sample_aspect_ratio = encoder.context.pointee.sample_aspect_ratio
        videoOut.pointee.disposition = inStream.pointee.disposition
        metadata.copyStream(from: inStream.pointee.metadata, to: &videoOut.pointee.metadata)
        // The picture is rotated already; a leftover rotate tag would turn it again.
        av_dict_set(&videoOut.pointee.metadata, "rotate", nil, 0)
        av_dict_set(&videoOut.pointee.metadata, "encoder", nil, 0)
        if bypass, let matrix = av_stream_get_side_data(inStream, AV_PKT_DATA_DISPLAYMATRIX, nil),
           let copy = av_stream_new_side_data(videoOut, AV_PKT_DATA_DISPLAYMATRIX, 36) {
            copy.update(from: matrix, count: 36)
        }
        if keep {
            // The mastering display and content light level, as the container's boxes/elements.
            addHDRSideData(keptHDR, to: videoOut)
            o.log(.info, "HDR: kept (\(dec.color_trc == AVCOL_TRC_SMPTE2084 ? "PQ" : "HLG"), 10-bit \(o.encoder.codec.displayName))")
        }

        // Progress (and its total) and filter time count from the trim's start when there is one.
        let span = trim.span(videoStart: input.startSeconds, videoDuration: input.durationSeconds)
        let encode = EncodeStage(encoder: encoder, stream: videoOut, output: output, options: o, shift: trim.shift(input.videoIndex),
                                 mediaStart: span.start, mediaDuration: span.duration,
                                 frameRate: fps.map { FrameRateConverter(from: interlace.timeBase, to: AVRational(num: $0.den, den: $0.num)) })
        if let fps, let rate = o.encoder.frameRate {
            o.log(.info, "frame rate: constant \(rate) fps, time base \(fps.den)/\(fps.num) (frames repeated or dropped as ffmpeg's fps filter)")
        }
        if let order = interlace.keptFieldOrder { encode.interlacedTopFieldFirst = order == AV_FIELD_TT }
        let gpu = bypass ? nil : GPUStage(GPUStage.Settings(geometry: geometry, sourceColor: color, outputFormat: outputFormat,
                                                            timeBase: inStream.pointee.time_base, mediaStart: span.start,
                                                            overlapReadback: !sequential, toneMapping: o.encoder.toneMapping,
                                                            deinterlace: interlace.deinterlace, keepHDR: keep, filters: gpuFilters,
                                                            workingFormat: working,
                                                            dolbyVision: dolbyVision.rpu.map { _ in DolbyVisionReshape(sourceBits: geometry.bitDepth) },
                                                            scaleFirst: first),
                                        options: o)
        return (gpu, encode, geometry)
    }

    /// Any other stream but audio: subtitles are copied packet for packet where the container can
    /// hold them (else dropped with a warning); data streams and extra video streams are dropped.
    private static func mapStream(_ s: UnsafeMutablePointer<AVStream>, _ o: TranscodeOptions, output: OutputFile,
                                  metadata: MetadataPolicy, shift: Int64, window: TrimWindow?) throws -> OutputStreamHandler? {
        let i = Int(s.pointee.index)
        let par = s.pointee.codecpar!
        let type = par.pointee.codec_type
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        let ext = pathExtension(o.output)
        switch type {
        case AVMEDIA_TYPE_SUBTITLE:
            guard output.canHold(par.pointee.codec_id) else {
                o.log(.warning, "\(o.output): subtitle stream #\(i) (\(codecName)) dropped: .\(ext) cannot hold it (.mkv can)")
                reportDropped(s, o, reason: ".\(ext) cannot hold \(codecName) subtitles (.mkv can)")
                return nil
            }
        case AVMEDIA_TYPE_VIDEO:
            o.log(.info, "extra video stream #\(i) (\(codecName)) dropped: only the best video stream is filtered")
            reportDropped(s, o, reason: "only the best video stream is filtered")
            return nil
        default:
            o.log(.info, "stream #\(i) (\((av_get_media_type_string(type).map { String(cString: $0) } ?? "data")) \(codecName)) dropped")
            reportDropped(s, o, reason: "\(StreamDescription.mediaType(type)) streams are not written")
            return nil
        }
        let os = try output.addStream()
        o.report?.stream(.object([("input", .number(i)), ("index", .number(Int(os.pointee.index))), ("type", .string(StreamDescription.mediaType(type))),
                                  ("action", .string("copy")), ("codec", .string(codecName))]), index: Int(os.pointee.index), input: i)
        try check(avcodec_parameters_copy(os.pointee.codecpar, par), .internal, path: o.output, "copying stream parameters")
        os.pointee.codecpar.pointee.codec_tag = 0
        os.pointee.time_base = s.pointee.time_base
        os.pointee.disposition = s.pointee.disposition
        metadata.copyStream(from: s.pointee.metadata, to: &os.pointee.metadata)
        return StreamCopyHandler(from: s, inputPath: o.input, to: os, output: output, shift: shift, window: window, log: o.log)
    }

    /// A stream left out of the output, for `--json`.
    private static func reportDropped(_ s: UnsafeMutablePointer<AVStream>, _ o: TranscodeOptions, reason: String) {
        let par = s.pointee.codecpar.pointee
        o.report?.stream(.object([("input", .number(Int(s.pointee.index))), ("index", .null), ("type", .string(StreamDescription.mediaType(par.codec_type))),
                                  ("action", .string("drop")), ("codec", .string(String(cString: avcodec_get_name(par.codec_id)))),
                                  ("reason", .string(reason))]), index: nil, input: Int(s.pointee.index))
    }
}
