import CFFmpeg

/// The video encoder as the transcode uses it: libx264, or h264_nvenc (`EncoderSettings.open`
/// chooses); frames in, packets out in the encoder's time base with their durations. (The
/// codec-neutral encoder replaces this file behind the same interface.)
final class VideoEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    /// What `-v` prints: the encoder and its rate control.
    let description: String
    /// The output, named in errors.
    private let output: String
    /// Frame durations by pts: x264 drops them, the muxer wants them.
    private var durations: [Int64: Int64] = [:]

    init(settings: EncoderSettings, stream: EncoderStream, output: String, log: @escaping @Sendable (LogLevel, String) -> Void) throws {
        (context, description) = try settings.open(stream, output: output, log: log)
        self.output = output
    }

    deinit {
        var e: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&e)
    }

    /// Describes what this encoder writes on `stream` (before the header is written). H.264 needs
    /// nothing particular to the MP4 family.
    func configure(_ stream: UnsafeMutablePointer<AVStream>, mp4Family: Bool) throws {
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, context), .internal, path: output, "encoder parameters")
        stream.pointee.time_base = context.pointee.time_base
    }

    /// Encodes `frame` (nil: the end, and the encoder gives out what it holds) and hands each
    /// packet finished meanwhile to `emit`, in the encoder's time base with its duration.
    func encode(_ frame: Frame?, emit: (Packet) throws -> Void) throws {
        if let frame {
            // A decoded frame (the no-GPU path) still says what type it was; libx264 would take that
            // as an order and copy the source's GOP instead of choosing its own B-frames.
            frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
            durations[frame.pts] = frame.duration
            try check(avcodec_send_frame(context, frame.pointer), .encode, path: output, "encoding failed")
        } else {
            try check(avcodec_send_frame(context, nil), .encode, path: output, "flushing the encoder failed")
        }
        while true {
            let packet = Packet()
            let rc = avcodec_receive_packet(context, packet.pointer)
            if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return }
            try check(rc, .encode, path: output, "encoding failed")
            if let d = durations.removeValue(forKey: packet.pts), d > 0 {
                packet.pointer.pointee.duration = d
            }
            try emit(packet)
        }
    }
}
