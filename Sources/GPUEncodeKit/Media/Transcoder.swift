import CFFmpeg
import CShim
import Glibc

public struct TranscodeOptions: Sendable {
    public var input: String
    public var output: String
    public var preset: Preset
    public var overwrite = false
    public var encoder = EncoderSettings()
    /// Video decoding: software (default) or NVDEC through FFmpeg's cuda hwaccel.
    public var hwaccel: HardwareAcceleration = .none
    public var gpu: GPUSelection = .auto
    public var renderPath: RenderPath = .direct
    /// Pixel buffer objects or client memory, and copy threads: the renderer's choice unless measuring.
    public var transfer = TransferOptions()
    /// Decode, GPU and encode one after another on the calling thread instead of pipelined.
    public var sequential = false
    /// Decoder threads; 0 lets libavcodec choose.
    public var decoderThreads = 0
    public var progress: ProgressReporter?
    /// Take the GL context from a process-wide pool and give it back afterwards, instead of making
    /// and destroying one (batch runs: memory stays flat over thousands of jobs).
    public var reuseGPUContext = false
    /// Receives warnings and (when verbose) notes, one line each.
    public var log: @Sendable (LogLevel, String) -> Void = { _, _ in }
    /// Receives each frame's measurements (`averageColor` filters), in frame order: the frame's
    /// index, its time in seconds from the start, and name → values.
    public var statistics: (@Sendable (Int, Double, [(name: String, value: [Double])]) -> Void)?
    /// Receives each encoded frame's count, its position in seconds from the start and the media's
    /// length (nil when unknown); for callers with their own progress display (batch runs).
    public var onFrame: (@Sendable (Int, Double, Double?) -> Void)?
    /// Polled with the SIGINT/SIGTERM flag: true stops the run as if interrupted (no output written).
    public var shouldStop: (@Sendable () -> Bool)?

    public init(input: String, output: String, preset: Preset) {
        self.input = input
        self.output = output
        self.preset = preset
    }
}

public enum LogLevel: Sendable { case info, warning }

public struct TranscodeSummary: Sendable {
    public var frames: Int
    public var renderer: String
    public var seconds: Double
    public var decodeErrors: Int
}

/// decode → GPU filter graph → encode, with every other stream copied. Three stages on three
/// threads joined by small bounded queues, so decode, GL work and x264 overlap and memory stays
/// constant. Video frames keep their own timestamps end to end (rescaled at each hand-off).
public final class Transcoder {
    private let options: TranscodeOptions
    private let input: InputFile
    private let output: OutputFile
    /// False when the preset has no filters: frames go from the decoder to the encoder directly.
    private let usesGPU: Bool
    private let rendererName = Locked("no GPU stage")
    private let encoder: UnsafeMutablePointer<AVCodecContext>
    private let videoOut: UnsafeMutablePointer<AVStream>
    /// Output stream index for each input stream, or nil if the stream is dropped.
    private var streamMap: [Int: Int32] = [:]
    private let geometry: RenderGeometry
    private let sourceColor: YUVColorSpace
    /// The planar 8-bit format frames are uploaded in; others are converted to it once per frame.
    private let workingFormat: AVPixelFormat
    /// What the GPU stage hands the encoder: NV12 from the single-pass shader, else yuv420p.
    private let outputFormat: AVPixelFormat

    private let failure = Locked<GPUEncodeError?>(nil)
    /// Made by the GPU stage on its first frame; buffers go back to it from the encoder.
    private let framePool = Locked<FramePool?>(nil)
    private let toGPU = BoundedQueue<UnsafeMutablePointer<AVFrame>>(capacity: 3)
    private let toEncoder = BoundedQueue<UnsafeMutablePointer<AVFrame>>(capacity: 3)
    /// Frame durations by pts (encoder time base): x264 drops them, the muxer wants them. Only
    /// the encoding thread touches it.
    private var durations: [Int64: Int64] = [:]
    /// The video's start and length in seconds, for progress.
    private let mediaStart: Double
    private let mediaDuration: Double?
    private let framesEncoded = Locked(0)
    /// Seconds each stage spent working (not waiting on a queue), for -v: shows which one bounds the run.
    private let busy = Locked((gpu: 0.0, encode: 0.0))
    /// The encoder's packet, reused; only the thread that encodes touches it.
    private let packet = av_packet_alloc()!
    private var decodeErrors = 0

    public static func run(_ options: TranscodeOptions) throws -> TranscodeSummary {
        try checkPaths(options)
        let t = try Transcoder(options)
        return try t.transcode()
    }

    static func checkPaths(_ o: TranscodeOptions) throws {
        if o.input == o.output { throw GPUEncodeError(.usage, path: o.output, "output is the input file") }
        if let a = fileIdentity(o.input), let b = fileIdentity(o.output), a == b {
            throw GPUEncodeError(.usage, path: o.output, "output is the input file (same file through another path)")
        }
        if fileExists(o.output) {
            if isDirectory(o.output) { throw GPUEncodeError(.outputCreate, path: o.output, "is a directory") }
            if !o.overwrite { throw GPUEncodeError(.outputCreate, path: o.output, "already exists (use -y to overwrite)") }
        }
    }

    private init(_ o: TranscodeOptions) throws {
        options = o
        input = try InputFile(path: o.input, threads: o.decoderThreads, hwaccel: o.hwaccel, log: o.log)
        mediaStart = input.startSeconds
        mediaDuration = input.durationSeconds
        output = try OutputFile(path: o.output, overwrite: o.overwrite)
        let bypass = o.preset.filters.isEmpty
        usesGPU = !bypass
        // The GL context is made on the GPU stage's own thread, in parallel with opening the
        // encoder and the first decodes: on NVIDIA it takes a few hundred milliseconds.
        if bypass { o.log(.info, "GPU: none (preset \(o.preset.name) has no filters: decode → encode)") }

        let dec = input.decoder.pointee
        let inStream = input.videoStream
        let format = dec.pix_fmt
        let (working, color) = bypass ? (AV_PIX_FMT_YUV420P, YUVColorSpace(matrix: .bt709, fullRange: false))
            : Transcoder.workingFormat(for: format, colorspace: dec.colorspace, range: dec.color_range)
        workingFormat = working
        sourceColor = color
        // Without a GPU stage nothing turns the picture, so the rotation stays a flag (below).
        let rotation = bypass ? .none : input.rotation
        geometry = RenderGeometry(width: dec.width, height: dec.height, format: working, rotation: rotation,
                                  filters: bypass ? [] : o.preset.filters)
        try PictureSize.check(geometry, input: o.input, preset: o.preset.origin)
        guard geometry.outputWidth >= 2, geometry.outputHeight >= 2 else {
            throw GPUEncodeError(.input, path: o.input, "video is \(dec.width)x\(dec.height), too small to encode")
        }
        let formatName = format == AV_PIX_FMT_NONE ? "unknown" : String(cString: av_get_pix_fmt_name(format))
        o.log(.info, "video: \(dec.width)x\(dec.height) \(formatName), \(bypass ? "colour untouched" : color.description), rotation \(rotation.rawValue)°, output \(geometry.outputWidth)x\(geometry.outputHeight)")
        if let srcDesc = av_pix_fmt_desc_get(format), srcDesc.pointee.comp.0.depth > 8 {
            o.log(.warning, "\(o.input): \(srcDesc.pointee.comp.0.depth)-bit video is converted to 8 bits")
        }
        if !bypass && [AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67].contains(dec.color_trc) {
            o.log(.warning, "\(o.input): HDR (\(String(cString: av_color_transfer_name(dec.color_trc)))) video is written as SDR BT.709 without tone mapping; highlights will look flat")
        }
        if geometry.uprightWidth != (rotation.swapsDimensions ? geometry.sourceHeight : geometry.sourceWidth)
            || geometry.uprightHeight != (rotation.swapsDimensions ? geometry.sourceWidth : geometry.sourceHeight) {
            o.log(.warning, "\(o.input): odd dimensions cropped to \(geometry.uprightWidth)x\(geometry.uprightHeight) for 4:2:0 H.264")
        }

        // Video encoder and stream: libx264, or h264_nvenc (--encoder; EncoderSettings.open).
        outputFormat = !bypass && FrameRenderer.writesNV12(geometry, path: o.renderPath, filters: o.preset.filters) ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P
        let rate = av_guess_frame_rate(input.format, inStream, nil)
        var sar = inStream.pointee.sample_aspect_ratio.num > 0 ? inStream.pointee.sample_aspect_ratio : dec.sample_aspect_ratio
        if rotation.swapsDimensions && sar.num > 0 { sar = AVRational(num: sar.den, den: sar.num) }
        var stream = EncoderStream(width: Int32(geometry.outputWidth), height: Int32(geometry.outputHeight), pixelFormat: outputFormat,
                                   timeBase: inStream.pointee.time_base, frameRate: rate.num > 0 && rate.den > 0 ? rate : nil,
                                   sampleAspectRatio: sar.num > 0 ? sar : nil,
                                   colorPrimaries: AVCOL_PRI_BT709, colorTransfer: AVCOL_TRC_BT709, colorSpace: AVCOL_SPC_BT709,
                                   colorRange: AVCOL_RANGE_MPEG,
                                   globalHeader: output.format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0)
        if bypass {
            // The pixels keep their matrix; swscale only turns yuvj (full range) into limited range.
            stream.colorPrimaries = dec.color_primaries
            stream.colorTransfer = dec.color_trc
            stream.colorSpace = dec.colorspace
            stream.colorRange = format == AV_PIX_FMT_YUV420P && dec.color_range == AVCOL_RANGE_JPEG ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        }
        let (enc, encoderName) = try o.encoder.open(stream, output: o.output, log: o.log)
        encoder = enc
        o.log(.info, "encoder: \(encoderName)")

        videoOut = try output.addStream()
        try check(avcodec_parameters_from_context(videoOut.pointee.codecpar, enc), .internal, path: o.output, "encoder parameters")
        videoOut.pointee.time_base = enc.pointee.time_base
        videoOut.pointee.sample_aspect_ratio = enc.pointee.sample_aspect_ratio
        videoOut.pointee.disposition = inStream.pointee.disposition
        av_dict_copy(&videoOut.pointee.metadata, inStream.pointee.metadata, 0)
        // The picture is rotated already; a leftover rotate tag would turn it again.
        av_dict_set(&videoOut.pointee.metadata, "rotate", nil, 0)
        av_dict_set(&videoOut.pointee.metadata, "encoder", nil, 0)
        if bypass, let matrix = av_stream_get_side_data(inStream, AV_PKT_DATA_DISPLAYMATRIX, nil),
           let copy = av_stream_new_side_data(videoOut, AV_PKT_DATA_DISPLAYMATRIX, 36) {
            copy.update(from: matrix, count: 36)
        }
        streamMap[Int(input.videoIndex)] = videoOut.pointee.index

        // Every other stream is copied packet for packet.
        for i in 0..<input.streamCount where i != Int(input.videoIndex) {
            let s = input.stream(i)
            let par = s.pointee.codecpar!
            let type = par.pointee.codec_type
            let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
            let ext = pathExtension(o.output)
            switch type {
            case AVMEDIA_TYPE_AUDIO:
                guard output.canHold(par.pointee.codec_id) else {
                    throw GPUEncodeError(.usage, path: o.output, "audio stream #\(i) (\(codecName)) cannot be stored in .\(ext) without re-encoding; use .mkv, which holds any audio")
                }
            case AVMEDIA_TYPE_SUBTITLE:
                guard output.canHold(par.pointee.codec_id) else {
                    o.log(.warning, "\(o.output): subtitle stream #\(i) (\(codecName)) dropped: .\(ext) cannot hold it (.mkv can)")
                    continue
                }
            case AVMEDIA_TYPE_VIDEO:
                o.log(.info, "extra video stream #\(i) (\(codecName)) dropped: only the best video stream is filtered")
                continue
            default:
                o.log(.info, "stream #\(i) (\((av_get_media_type_string(type).map { String(cString: $0) } ?? "data")) \(codecName)) dropped")
                continue
            }
            let os = try output.addStream()
            try check(avcodec_parameters_copy(os.pointee.codecpar, par), .internal, path: o.output, "copying stream parameters")
            os.pointee.codecpar.pointee.codec_tag = 0
            os.pointee.time_base = s.pointee.time_base
            os.pointee.disposition = s.pointee.disposition
            av_dict_copy(&os.pointee.metadata, s.pointee.metadata, 0)
            streamMap[i] = os.pointee.index
        }
        av_dict_copy(&output.format.pointee.metadata, input.format.pointee.metadata, 0)
        let den = enc.pointee.time_base.den
        if enc.pointee.time_base.num == 1 && den >= 1000 && den <= 1_000_000 { output.movieTimescale = den }
        try output.open()
    }

    deinit {
        var e: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&e)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// The 8-bit planar format the GPU reads and the colour space to decode it with.
    static func workingFormat(for format: AVPixelFormat, colorspace: AVColorSpace, range: AVColorRange) -> (AVPixelFormat, YUVColorSpace) {
        let native: [AVPixelFormat] = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P,
                                       AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUV440P, AV_PIX_FMT_YUVJ440P]
        let jpeg: [AVPixelFormat] = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P]
        // Unspecified matrices are BT.601, as swscale and the ffmpeg CLI assume.
        let matrix: YUVMatrix
        switch colorspace {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = .bt2020
        default: matrix = .bt601
        }
        let full = range == AVCOL_RANGE_JPEG || jpeg.contains(format)
        if native.contains(format) { return (format, YUVColorSpace(matrix: matrix, fullRange: full)) }
        guard let desc = av_pix_fmt_desc_get(format)?.pointee else {
            return (AV_PIX_FMT_YUV420P, YUVColorSpace(matrix: matrix, fullRange: full))
        }
        let isYUV = desc.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && desc.flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0 && desc.nb_components >= 3
        let target: AVPixelFormat
        switch (desc.log2_chroma_w, desc.log2_chroma_h) {
        case (0, 0): target = AV_PIX_FMT_YUV444P
        case (1, 0): target = AV_PIX_FMT_YUV422P
        default: target = AV_PIX_FMT_YUV420P
        }
        // swscale turns RGB, palette and grey into limited-range BT.601 Y'CbCr; YUV keeps its values.
        return isYUV ? (target, YUVColorSpace(matrix: matrix, fullRange: full)) : (target, YUVColorSpace(matrix: .bt601, fullRange: false))
    }

    private func fail(_ error: Error) {
        let error = error as? GPUEncodeError ?? GPUEncodeError(.internal, "\(error)")
        // The first failure is reported, except that a signal wins over the error it may have
        // caused (SIGXFSZ comes with EFBIG, SIGPIPE with EPIPE): the exit status is then 128+signal,
        // as with the default action.
        failure.withLock { current in
            if current == nil || (error.isInterruption && !(current?.isInterruption ?? false)) { current = error }
        }
        toGPU.close()
        toEncoder.close()
    }

    private var failed: Bool { failure.withLock { $0 != nil } }

    private func checkInterrupt() {
        let sig = gpuencode_interrupt_signal()
        if sig != 0 { fail(GPUEncodeError(.interrupted(signal: sig), path: options.output, "interrupted by \(signalName(sig)); no output written")) }
        else if options.shouldStop?() == true { fail(GPUEncodeError(.interrupted(signal: 0), path: options.output, "stopped; no output written")) }
    }

    private func transcode() throws -> TranscodeSummary {
        let started = monotonicSeconds()
        if options.sequential {
            try runSequentially()
        } else {
            let encodeThread = try WorkerThread(name: "gpuencode-x264") { [self] in encodeStage() }
            let gpuThread: WorkerThread?
            do {
                gpuThread = usesGPU ? try WorkerThread(name: "gpuencode-gl") { [self] in gpuStage() } : nil
            } catch {
                // The encoder stage is running: stop it before reporting.
                fail(error)
                encodeThread.join()
                throw error
            }
            demuxStage { [self] frame in
                if (usesGPU ? toGPU : toEncoder).push(frame) { return true }
                var f: UnsafeMutablePointer<AVFrame>? = frame
                av_frame_free(&f)
                return false
            }
            toGPU.close()
            if let gpuThread { gpuThread.join() } else { toEncoder.close() }
            encodeThread.join()
        }
        toGPU.drain { var f: UnsafeMutablePointer<AVFrame>? = $0; av_frame_free(&f) }
        toEncoder.drain { var f: UnsafeMutablePointer<AVFrame>? = $0; av_frame_free(&f) }
        checkInterrupt()
        if let error = failure.withLock({ $0 }) { throw error }
        let frames = framesEncoded.withLock { $0 }
        if frames == 0 {
            throw GPUEncodeError(.inputDecode, path: options.input, "no video frame could be decoded")
        }
        try output.finish()
        let (gpuBusy, encodeBusy) = busy.withLock { ($0.gpu, $0.encode) }
        if !options.sequential {
            let wall = monotonicSeconds() - started
            options.log(.info, "stages busy: GPU \(format(gpuBusy, 2)) s (\(format(gpuBusy * 1000 / Double(frames), 2)) ms/frame), encode \(format(encodeBusy, 2)) s, of \(format(wall, 2)) s wall")
        }
        if decodeErrors > 0 {
            options.log(.warning, "\(options.input): \(decodeErrors) decode error(s) in the video stream; damaged frames were skipped or concealed by the decoder")
        }
        return TranscodeSummary(frames: frames, renderer: rendererName.withLock { $0 }, seconds: monotonicSeconds() - started, decodeErrors: decodeErrors)
    }

    /// Every stage on the calling thread, one frame at a time: the reference the pipelined run
    /// must reproduce byte for byte.
    private func runSequentially() throws {
        var gl = usesGPU ? try makeContext() : nil
        defer { releaseContext(&gl) }
        let renderer = try gl.map { try makeRenderer($0) }
        demuxStage { [self] frame in
            var f: UnsafeMutablePointer<AVFrame>? = frame
            defer { av_frame_free(&f) }
            do {
                checkInterrupt()
                if failed { return false }
                if let renderer {
                    var out: UnsafeMutablePointer<AVFrame>? = try render(frame, with: renderer)
                    defer { av_frame_free(&out) }
                    try encode(out!)
                } else {
                    try encode(frame)
                }
                return true
            } catch {
                fail(error)
                return false
            }
        }
        if !failed {
            do { try flushEncoder() } catch { fail(error) }
        }
    }

    // MARK: Stage 1: demux, copy, decode (calling thread)

    /// `deliver` takes ownership of each decoded frame and returns false to stop.
    private func demuxStage(deliver: (UnsafeMutablePointer<AVFrame>) -> Bool) {
        let packet = av_packet_alloc()!
        let frame = av_frame_alloc()!
        var converter = FrameConverter()
        defer { converter.release() }
        var clock = FrameClock(timeBase: input.videoStream.pointee.time_base, rate: encoder.pointee.framerate)
        defer {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            var f: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&f)
        }

        var warnedRepair = false
        var copiedOrder = CopiedPacketOrder(format: output.format.pointee.oformat)

        func receiveFrames() -> Bool {
            while true {
                let rc = input.receiveFrame(frame)
                if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return true }
                if rc < 0 { decodeErrors += 1; return true }
                defer { av_frame_unref(frame) }
                let (pts, duration, repaired) = clock.stamp(frame)
                if repaired && !warnedRepair {
                    warnedRepair = true
                    options.log(.warning, "\(options.input): video timestamps not increasing; repaired by one tick where needed")
                }
                guard let work = converter.convert(frame, to: workingFormat, width: geometry.sourceWidth, height: geometry.sourceHeight) else {
                    fail(GPUEncodeError(.internal, path: options.input, "cannot convert a \(frame.pointee.width)x\(frame.pointee.height) frame"))
                    return false
                }
                work.pointee.pts = pts
                work.pointee.pkt_duration = duration
                // Without a GPU stage, odd sizes are cropped by narrowing the frame over its buffer.
                work.pointee.width = Int32(geometry.outputWidth)
                work.pointee.height = Int32(geometry.outputHeight)
                if !deliver(work) { return false }
            }
        }

        while !failed {
            checkInterrupt()
            let rc = av_read_frame(input.format, packet)
            if rc == AVERROR_EOF_VALUE { break }
            if rc < 0 {
                // A signal stops a read blocked on a FIFO through the interrupt callback: that is
                // the interruption, not the end of the file.
                checkInterrupt()
                if failed { break }
                options.log(.warning, "\(options.input): read error (\(averrorString(rc))); treating it as the end of the file")
                break
            }
            defer { av_packet_unref(packet) }
            let index = Int(packet.pointee.stream_index)
            if index == Int(input.videoIndex) {
                let sent = avcodec_send_packet(input.decoder, packet)
                if sent < 0 && sent != AVERROR_EAGAIN_VALUE { decodeErrors += 1 }
                if !receiveFrames() { return }
            } else if let outIndex = streamMap[index] {
                let out = output.format.pointee.streams[Int(outIndex)]!
                av_packet_rescale_ts(packet, input.stream(index).pointee.time_base, out.pointee.time_base)
                packet.pointee.stream_index = outIndex
                packet.pointee.pos = -1
                guard copiedOrder.admit(packet) else {
                    if copiedOrder.dropped == 1 {
                        options.log(.warning, "\(options.input): stream \(index) timestamps go backwards; packets at or before a time already written are dropped")
                    }
                    continue
                }
                do { try output.write(packet) } catch let e as GPUEncodeError { fail(e); return } catch { return }
            }
        }
        if failed { return }
        avcodec_send_packet(input.decoder, nil)
        _ = receiveFrames()
    }

    // MARK: Stage 2: GPU

    private func gpuStage() {
        defer { toEncoder.close() }
        // The renderer (and its GL objects) is gone before the context is released.
        var gl: GLContext?
        defer { releaseContext(&gl) }
        do {
            gl = try makeContext()
            try gpuLoop(gl!)
        } catch {
            fail(error)
        }
    }


    /// Called when the renderer is gone: back to the pool, or destroyed.
    private func releaseContext(_ gl: inout GLContext?) {
        if options.reuseGPUContext, let context = gl {
            gl = nil
            GLContextPool.give(context)
        } else {
            gl = nil
        }
    }

    private func gpuLoop(_ gl: GLContext) throws {
        // On the pipelined path a frame's readback is collected after the next frame is submitted,
        // so these output frames are in flight (at most two).
        var inFlight: [UnsafeMutablePointer<AVFrame>] = []
        defer { for o in inFlight { var p: UnsafeMutablePointer<AVFrame>? = o; av_frame_free(&p) } }
        func deliver(_ out: UnsafeMutablePointer<AVFrame>) {
            if !toEncoder.push(out) {
                var o: UnsafeMutablePointer<AVFrame>? = out
                av_frame_free(&o)
            }
        }
        let renderer = try makeRenderer(gl)
        while let frame = toGPU.pop() {
            var f: UnsafeMutablePointer<AVFrame>? = frame
            defer { av_frame_free(&f) }
            if failed { continue }
            let t0 = monotonicSeconds()
            if renderer.canPipeline {
                let out = try outputFrame(for: frame)
                inFlight.append(out)
                let time = frameTime(frame)
                try renderer.submit(source: framePlanes(frame), time: time)
                // The measurements are read back while the frame is drawn (only its pixels wait
                // for `collect`), so they are reported now, in frame order.
                reportStatistics(of: renderer, time: time)
                if renderer.pendingFrames > 1 {
                    let done = inFlight.removeFirst()
                    try renderer.collect(into: framePlanes(done))
                    deliver(done)
                }
            } else {
                deliver(try render(frame, with: renderer))
            }
            let dt = monotonicSeconds() - t0
            busy.withLock { $0.gpu += dt }
        }
        while !inFlight.isEmpty && !failed {
            let done = inFlight.removeFirst()
            try renderer.collect(into: framePlanes(done))
            deliver(done)
        }
    }

    /// A new output frame (pooled memory) with the input frame's timestamps.
    private func outputFrame(for frame: UnsafeMutablePointer<AVFrame>) throws -> UnsafeMutablePointer<AVFrame> {
        let out = try framePool.withLock { pool -> UnsafeMutablePointer<AVFrame> in
            if pool == nil {
                pool = try FramePool(width: Int32(geometry.outputWidth), height: Int32(geometry.outputHeight), format: outputFormat)
            }
            return try pool!.frame()
        }
        out.pointee.pts = frame.pointee.pts
        out.pointee.pkt_duration = frame.pointee.pkt_duration
        return out
    }

    /// Filter time (keyframes, animated shaders) runs from 0 at the start of the media.
    private func frameTime(_ frame: UnsafeMutablePointer<AVFrame>) -> Double {
        max(0, seconds(frame.pointee.pts, input.videoStream.pointee.time_base) - mediaStart)
    }

    private func makeContext() throws -> GLContext {
        let t0 = monotonicSeconds()
        let context = options.reuseGPUContext ? try GLContextPool.take(options.gpu) : try GLContext(selection: options.gpu)
        rendererName.withLock { $0 = context.renderer }
        options.log(.info, "GPU: \(context.renderer) (\(context.version); \(context.platform); ready in \(Int((monotonicSeconds() - t0) * 1000)) ms)")
        return context
    }

    private func makeRenderer(_ gl: GLContext) throws -> FrameRenderer {
        let limits = GPULimits.current()
        options.log(.info, "GPU limits: \(limits)")
        let renderer = try FrameRenderer(geometry: geometry, source: sourceColor, filters: options.preset.filters, path: options.renderPath,
                                         pixelBuffers: options.transfer.usePixelBuffers(gl), copyThreads: options.transfer.copyThreads, limits: limits)
        for line in renderer.passes { options.log(.info, line) }
        return renderer
    }

    /// `--stats`: the measurements of the frame the renderer drew last.
    private func reportStatistics(of renderer: FrameRenderer, time: Double) {
        if let report = options.statistics, !renderer.statistics.isEmpty {
            report(renderer.frameIndex - 1, time, renderer.statistics)
        }
    }

    /// One frame through the GPU into a new 4:2:0 frame carrying the same timestamps.
    private func render(_ frame: UnsafeMutablePointer<AVFrame>, with renderer: FrameRenderer) throws -> UnsafeMutablePointer<AVFrame> {
        let out = try outputFrame(for: frame)
        do {
            let time = frameTime(frame)
            try renderer.render(source: framePlanes(frame), output: framePlanes(out), time: time)
            reportStatistics(of: renderer, time: time)
        } catch {
            var o: UnsafeMutablePointer<AVFrame>? = out
            av_frame_free(&o)
            throw error
        }
        return out
    }

    // MARK: Stage 3: encode and mux

    private func encodeStage() {
        do {
            while let frame = toEncoder.pop() {
                var f: UnsafeMutablePointer<AVFrame>? = frame
                defer { av_frame_free(&f) }
                if failed { continue }
                checkInterrupt()
                let t0 = monotonicSeconds()
                try encode(frame)
                let dt = monotonicSeconds() - t0
                busy.withLock { $0.encode += dt }
            }
            if failed { return }
            try flushEncoder()
        } catch {
            fail(error)
        }
    }

    private func encode(_ frame: UnsafeMutablePointer<AVFrame>) throws {
        // A decoded frame (the no-GPU path) still says what type it was; libx264 would take that
        // as an order and copy the source's GOP instead of choosing its own B-frames.
        frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
        let pts = frame.pointee.pts
        durations[pts] = frame.pointee.pkt_duration
        try check(avcodec_send_frame(encoder, frame), .encode, path: options.output, "encoding failed")
        try drainEncoder()
        let n = framesEncoded.withLock { $0 += 1; return $0 }
        let position = seconds(pts, encoder.pointee.time_base) - mediaStart
        options.progress?.update(frames: n, position: position, total: mediaDuration)
        options.onFrame?(n, position, mediaDuration)
    }

    private func flushEncoder() throws {
        try check(avcodec_send_frame(encoder, nil), .encode, path: options.output, "flushing the encoder failed")
        try drainEncoder()
        let total = mediaDuration
        options.progress?.update(frames: framesEncoded.withLock { $0 }, position: total ?? 0, total: total, final: true)
    }

    private func drainEncoder() throws {
        while true {
            let rc = avcodec_receive_packet(encoder, packet)
            if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return }
            try check(rc, .encode, path: options.output, "encoding failed")
            if let d = durations.removeValue(forKey: packet.pointee.pts), d > 0 {
                packet.pointee.duration = d
            }
            av_packet_rescale_ts(packet, encoder.pointee.time_base, videoOut.pointee.time_base)
            packet.pointee.stream_index = videoOut.pointee.index
            try output.write(packet)
        }
    }
}

/// Gives every decoded frame a presentation time: its own when it has one, otherwise the
/// previous one plus a frame; never equal to or before the previous (encoders reject that).
struct FrameClock {
    let defaultDuration: Int64
    private var last: Int64?

    init(timeBase: AVRational, rate: AVRational) {
        let frame = rate.num > 0 && rate.den > 0 ? AVRational(num: rate.den, den: rate.num) : AVRational(num: 1, den: 25)
        defaultDuration = max(1, av_rescale_q(1, frame, timeBase))
    }

    /// `repaired` is true when the frame's own time had to move forward.
    mutating func stamp(_ frame: UnsafeMutablePointer<AVFrame>) -> (pts: Int64, duration: Int64, repaired: Bool) {
        let duration = frame.pointee.pkt_duration > 0 ? frame.pointee.pkt_duration : defaultDuration
        var pts = frame.pointee.best_effort_timestamp
        if pts == AV_NOPTS { pts = last.map { $0 + defaultDuration } ?? 0 }
        var repaired = false
        if let last, pts <= last {
            pts = last + 1
            repaired = true
        }
        last = pts
        return (pts, duration, repaired)
    }
}
