import CFFmpeg

/// An opened input: the container, its best video stream and that stream's decoder (software, or
/// NVDEC with `hwaccel`; `receiveFrame` hides the difference).
final class InputFile {
    let path: String
    let format: UnsafeMutablePointer<AVFormatContext>
    let videoIndex: Int32
    let decoder: UnsafeMutablePointer<AVCodecContext>
    /// Set when the decoder runs on NVDEC; frames are downloaded from CUDA memory as they come out.
    private let hardware: HardwareDecoder?

    init(path: String, threads: Int, hwaccel: HardwareAcceleration = .none,
         log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }) throws {
        self.path = path
        guard fileExists(path) else { throw GPUEncodeError(.input, path: path, "no such file") }
        if isDirectory(path) { throw GPUEncodeError(.input, path: path, "is a directory, not a media file") }
        let ctx = try MediaInput.open(path)
        format = ctx
        do {
            (videoIndex, decoder, hardware) = try InputFile.openVideoDecoder(ctx, path: path, threads: threads, hwaccel: hwaccel, log: log)
        } catch {
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            throw error
        }
    }

    private static func openVideoDecoder(_ ctx: UnsafeMutablePointer<AVFormatContext>, path: String, threads: Int,
                                         hwaccel: HardwareAcceleration, log: @escaping @Sendable (LogLevel, String) -> Void) throws
        -> (Int32, UnsafeMutablePointer<AVCodecContext>, HardwareDecoder?) {
        let info = avformat_find_stream_info(ctx, nil)
        if info < 0, let interrupted = MediaInput.interruption(path: path) { throw interrupted }
        try check(info, .input, path: path, "cannot read stream information")
        let best = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0 else {
            throw GPUEncodeError(.input, path: path, "no video stream (gpuencode filters video; audio-only files have nothing to filter)")
        }
        let stream = ctx.pointee.streams[Int(best)]!
        let par = stream.pointee.codecpar!
        try MediaInput.checkCodec(par.pointee.codec_id, path: path)
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw GPUEncodeError(.input, path: path, "no decoder for video codec \(String(cString: avcodec_get_name(par.pointee.codec_id)))")
        }
        guard let dec = avcodec_alloc_context3(codec) else { throw GPUEncodeError(.internal, path: path, "out of memory") }
        do {
            try check(avcodec_parameters_to_context(dec, par), .input, path: path, "bad video codec parameters")
            dec.pointee.pkt_timebase = stream.pointee.time_base
            dec.pointee.thread_count = Int32(clamping: threads)
            dec.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
            let hardware = try HardwareDecoder.attach(hwaccel, to: dec, codec: codec, path: path, log: log)
            if hardware == nil {
                log(.info, "decoder: \(String(cString: codec.pointee.name)) in software, \(threads == 0 ? "automatic" : String(threads)) threads")
            }
            try check(avcodec_open2(dec, codec, nil), .input, path: path, "cannot open the \(String(cString: codec.pointee.name)) decoder")
            return (best, dec, hardware)
        } catch {
            var d: UnsafeMutablePointer<AVCodecContext>? = dec
            avcodec_free_context(&d)
            throw error
        }
    }

    /// `avcodec_receive_frame` on the video decoder; an NVDEC frame comes back in system memory.
    func receiveFrame(_ frame: UnsafeMutablePointer<AVFrame>) -> Int32 {
        hardware?.receive(from: decoder, into: frame) ?? avcodec_receive_frame(decoder, frame)
    }

    deinit {
        var d: UnsafeMutablePointer<AVCodecContext>? = decoder
        avcodec_free_context(&d)
        var c: UnsafeMutablePointer<AVFormatContext>? = format
        avformat_close_input(&c)
    }

    var videoStream: UnsafeMutablePointer<AVStream> { format.pointee.streams[Int(videoIndex)]! }

    func stream(_ i: Int) -> UnsafeMutablePointer<AVStream> { format.pointee.streams[i]! }

    var streamCount: Int { Int(format.pointee.nb_streams) }

    /// The clockwise rotation that displays the picture upright (ffmpeg's autorotate rule).
    var rotation: Rotation {
        guard let data = av_stream_get_side_data(videoStream, AV_PKT_DATA_DISPLAYMATRIX, nil) else { return .none }
        let ccw = av_display_rotation_get(data.withMemoryRebound(to: Int32.self, capacity: 9) { $0 })
        guard ccw.isFinite else { return .none }
        var theta = (-ccw).rounded()
        theta = theta.truncatingRemainder(dividingBy: 360)
        if theta < 0 { theta += 360 }
        switch Int(theta) {
        case 45..<135: return .clockwise90
        case 135..<225: return .half
        case 225..<315: return .clockwise270
        default: return .none
        }
    }

    /// Seconds of media, for progress; nil when the container does not say (live captures).
    var durationSeconds: Double? {
        let s = videoStream.pointee
        if s.duration > 0 && s.duration != AV_NOPTS { return seconds(s.duration, s.time_base) }
        if format.pointee.duration > 0 && format.pointee.duration != AV_NOPTS { return Double(format.pointee.duration) / Double(AV_TIME_BASE) }
        return nil
    }

    var startSeconds: Double {
        let s = videoStream.pointee
        return s.start_time != AV_NOPTS ? seconds(s.start_time, s.time_base) : 0
    }
}

let AVERROR_INVALIDDATA_VALUE: Int32 = {
    // FFERRTAG('I','N','D','A'), negated.
    let tag = Int32(UInt8(ascii: "I")) | Int32(UInt8(ascii: "N")) << 8 | Int32(UInt8(ascii: "D")) << 16 | Int32(UInt8(ascii: "A")) << 24
    return -tag
}()
