import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

/// One input movie as the GPU stage sees it: the container (demuxer), the best video stream's
/// decoder (software, or NVDEC with `hwaccel`), the time each frame is shown at, the rotation that
/// makes it upright, and the conversion to the planar format the GPU reads. Every reader of movies
/// goes through it: the transcode, `preview` and contact sheets, the filter benchmark and video
/// overlays.
///
/// Two levels: the transcode reads every packet itself (`read`), hands the video stream's to the
/// decoder (`send`, then `receive` until nil) and the others to their own handlers; the rest take
/// decoded video frames one by one (`nextFrame`), other streams' packets skipped.
package final class VideoSource {
    /// What `receive` and `nextFrame` hand out.
    package enum Delivery {
        /// As decoded: any pixel format, the decoder's own timestamps. For readers that choose a
        /// frame by its time with rules of their own (preview, overlays).
        case decoded
        /// Stamped by the clock (`FrameClock`: pts and duration, never at or before the previous
        /// frame) and converted to `format` at `width` x `height` (`FrameConverter`): frames the
        /// GPU or the encoder takes as they are.
        case working(AVPixelFormat, width: Int, height: Int)
    }

    package let path: String
    package let format: UnsafeMutablePointer<AVFormatContext>
    package let videoIndex: Int
    package let decoder: UnsafeMutablePointer<AVCodecContext>
    package var delivery = Delivery.decoded
    /// How `.working` delivery resamples frames whose size it changes: bicubic, or Lanczos for a
    /// downscale planned ahead of the GPU (scale first). Set before the first frame.
    package var resampling: FrameConverter.Resampling {
        get { converter.resampling }
        set { converter.resampling = newValue }
    }
    /// Packets the decoder refused and frames it failed to produce: skipped (the decoder carries
    /// on, concealing what it can), counted for the warning at the end of a transcode.
    package private(set) var decodeErrors = 0
    /// Set when the decoder runs on NVDEC; frames are downloaded from CUDA memory as they come out.
    private let hardware: HardwareDecoder?
    private let log: @Sendable (LogLevel, String) -> Void
    private var clock: FrameClock
    private var warnedRepair = false
    private var converter = FrameConverter()
    /// The decoder was sent the end of the stream; what it still holds comes out, then nothing.
    private var draining = false

    /// NVDEC frames stay in CUDA memory (for CUDA-GL interop in the GPU stage) instead of being
    /// downloaded; `.working` delivery then stamps them and leaves them unconverted. Nothing
    /// changes for software decoding. Set before the first frame.
    package var keepsCUDAFrames: Bool {
        get { hardware?.keepsFramesOnGPU ?? false }
        set { hardware?.keepsFramesOnGPU = newValue }
    }

    /// Opens `path` (a local file, never a URL: MediaInput) and its best video stream's decoder.
    /// `threads`: decoder threads, 0 lets libavcodec choose. `videoOnly`: other streams are not
    /// even read (an overlay has no use for its audio).
    /// `cudaDevice`: with `hwaccel`, a CUDA device shared with other decoders (a batch's), instead of one of its own.
    package init(path: String, threads: Int, hwaccel: HardwareAcceleration = .none, cudaDevice: CUDADevice? = nil, videoOnly: Bool = false,
         log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }) throws {
        self.path = path
        self.log = log
        guard fileExists(path) else { throw GPUEncodeError(.input, path: path, "no such file") }
        if isDirectory(path) { throw GPUEncodeError(.input, path: path, "is a directory, not a media file") }
        let ctx = try MediaInput.open(path)
        format = ctx
        do {
            let index: Int32
            (index, decoder, hardware) = try VideoSource.openVideoDecoder(ctx, path: path, threads: threads, hwaccel: hwaccel,
                                                                          cudaDevice: cudaDevice, log: log)
            videoIndex = Int(index)
        } catch {
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            throw error
        }
        let stream = ctx.pointee.streams[videoIndex]!
        let rate = av_guess_frame_rate(ctx, stream, nil)
        clock = FrameClock(timeBase: stream.pointee.time_base, rate: rate)
        if videoOnly {
            for i in 0..<streamCount where i != videoIndex { self.stream(i).pointee.discard = AVDISCARD_ALL }
        }
    }

    deinit {
        converter.release()
        var d: UnsafeMutablePointer<AVCodecContext>? = decoder
        avcodec_free_context(&d)
        var c: UnsafeMutablePointer<AVFormatContext>? = format
        avformat_close_input(&c)
    }

    private static func openVideoDecoder(_ ctx: UnsafeMutablePointer<AVFormatContext>, path: String, threads: Int,
                                         hwaccel: HardwareAcceleration, cudaDevice: CUDADevice?,
                                         log: @escaping @Sendable (LogLevel, String) -> Void) throws
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
            let hardware = try HardwareDecoder.attach(hwaccel, to: dec, codec: codec, path: path,
                                                      device: cudaDevice ?? CUDADevice(), log: log)
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

    // MARK: Demuxer

    /// The next packet of any stream; nil at the end of the file. A read error is reported (a
    /// warning) and taken as the end, as ffmpeg does, except one a signal caused (the interrupt
    /// callback stops a read blocked on a FIFO), which throws the interruption.
    package func read() throws -> Packet? {
        let packet = Packet()
        let rc = av_read_frame(format, packet.pointer)
        if rc >= 0 { return packet }
        if rc == AVERROR_EOF_VALUE { return nil }
        if let interrupted = MediaInput.interruption(path: path) { throw interrupted }
        log(.warning, "\(path): read error (\(averrorString(rc))); treating it as the end of the file")
        return nil
    }

    /// Moves to the last key frame at or before `timestamp` (the video stream's time base) and
    /// empties the decoder. False, with nothing changed, where the demuxer cannot seek there.
    @discardableResult
    package func seek(to timestamp: Int64) -> Bool {
        guard av_seek_frame(format, Int32(videoIndex), timestamp, AVSEEK_FLAG_BACKWARD) >= 0 else { return false }
        avcodec_flush_buffers(decoder)
        draining = false
        clock.reset()
        return true
    }

    /// `seek(to:)` at `seconds` from the start of the media; false where the demuxer cannot seek there.
    @discardableResult
    package func seek(toSeconds seconds: Double) throws -> Bool {
        // The file's start time is the file's word: a hostile one could push the sum past Int64.
        guard let micro = Int64(inRange: (seconds + startSeconds) * Double(AV_TIME_BASE)) else {
            throw GPUEncodeError(.usage, path: path, "cannot seek to \(formatNumber(seconds)) s in this file")
        }
        return seek(to: av_rescale_q(micro, AV_TIME_BASE_Q_VALUE, timeBase))
    }

    // MARK: Video decoder

    /// Hands the decoder a packet of the video stream; nil is the end of the stream, after which
    /// `receive` gives out what the decoder still holds.
    package func send(_ packet: Packet?) {
        guard let packet else {
            avcodec_send_packet(decoder, nil)
            draining = true
            return
        }
        let rc = avcodec_send_packet(decoder, packet.pointer)
        if rc < 0 && rc != AVERROR_EAGAIN_VALUE { decodeErrors += 1 }
    }

    /// The next decoded frame as `delivery` says, or nil when the decoder wants another packet (or,
    /// after `send(nil)`, is empty). A frame that fails to decode is counted and ends this round.
    package func receive() throws -> Frame? {
        let frame = Frame()
        let rc = hardware?.receive(from: decoder, into: frame.pointer) ?? avcodec_receive_frame(decoder, frame.pointer)
        if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return nil }
        if rc < 0 {
            decodeErrors += 1
            return nil
        }
        guard case let .working(format, width, height) = delivery else { return frame }
        let (pts, duration, repaired) = clock.stamp(frame)
        if repaired && !warnedRepair {
            warnedRepair = true
            log(.warning, "\(path): video timestamps not increasing; repaired by one tick where needed")
        }
        // A CUDA frame (`keepsCUDAFrames`) goes to the GPU stage as it is: its planes are not here to convert.
        let work = frame.pixelFormat == AV_PIX_FMT_CUDA ? frame : try convert(frame, to: format, width: width, height: height)
        work.keepFields(of: frame)
        work.pts = pts
        work.duration = duration
        return work
    }

    /// `frame` in `format` at `width` x `height`: itself when it is already, else a copy made by
    /// swscale (without the original's timestamps and properties).
    package func convert(_ frame: Frame, to format: AVPixelFormat, width: Int, height: Int) throws -> Frame {
        guard let converted = converter.convert(frame, to: format, width: width, height: height) else {
            throw GPUEncodeError(.internal, path: path, "cannot convert a \(frame.width)x\(frame.height) frame")
        }
        return converted
    }

    /// The next frame of the video stream, reading and decoding as far as needed; nil at the end.
    package func nextFrame() throws -> Frame? {
        while true {
            if let frame = try receive() { return frame }
            if draining { return nil }
            if let packet = try read() {
                if packet.streamIndex == videoIndex { send(packet) }
            } else {
                send(nil)
            }
        }
    }

    // MARK: The streams

    package var videoStream: UnsafeMutablePointer<AVStream> { format.pointee.streams[videoIndex]! }

    package var timeBase: AVRational { videoStream.pointee.time_base }

    package func stream(_ i: Int) -> UnsafeMutablePointer<AVStream> { format.pointee.streams[i]! }

    package var streamCount: Int { Int(format.pointee.nb_streams) }

    /// The clockwise rotation that displays the picture upright (ffmpeg's autorotate rule).
    package var rotation: Rotation {
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
    package var durationSeconds: Double? {
        let s = videoStream.pointee
        if s.duration > 0 && s.duration != AV_NOPTS { return seconds(s.duration, s.time_base) }
        if format.pointee.duration > 0 && format.pointee.duration != AV_NOPTS { return Double(format.pointee.duration) / Double(AV_TIME_BASE) }
        return nil
    }

    /// The stream's field order as the demuxer found it (container tag or bitstream):
    /// AV_FIELD_PROGRESSIVE, AV_FIELD_TT/BB/TB/BT for interlaced video, or AV_FIELD_UNKNOWN.
    package var fieldOrder: AVFieldOrder { videoStream.pointee.codecpar.pointee.field_order }

    /// Where the video starts, in seconds: filter time 0 and progress 0.
    package var startSeconds: Double {
        let s = videoStream.pointee
        return s.start_time != AV_NOPTS ? seconds(s.start_time, s.time_base) : 0
    }
}

/// Gives every decoded frame a presentation time: its own when it has one, otherwise the
/// previous one plus a frame; never equal to or before the previous (encoders reject that).
package struct FrameClock {
    package let defaultDuration: Int64
    private var last: Int64?

    /// `rate`: the stream's frame rate where known (a frame's length when the stream does not say).
    package init(timeBase: AVRational, rate: AVRational) {
        let frame = rate.num > 0 && rate.den > 0 ? AVRational(num: rate.den, den: rate.num) : AVRational(num: 1, den: 25)
        defaultDuration = max(1, av_rescale_q(1, frame, timeBase))
    }

    /// `repaired` is true when the frame's own time had to move forward.
    package mutating func stamp(_ frame: Frame) -> (pts: Int64, duration: Int64, repaired: Bool) {
        let duration = frame.duration > 0 ? frame.duration : defaultDuration
        var pts = frame.bestEffortTimestamp
        if pts == AV_NOPTS { pts = last.map { $0 + defaultDuration } ?? 0 }
        var repaired = false
        if let last, pts <= last {
            pts = last + 1
            repaired = true
        }
        last = pts
        return (pts, duration, repaired)
    }

    /// After a seek: the next frame's own time stands, whatever came before.
    package mutating func reset() { last = nil }
}
