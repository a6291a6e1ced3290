import CFFmpeg

/// The video's last stage: frames to the encoder, its packets to the muxer (rescaled to the
/// output stream's time base), and progress after each frame.
final class EncodeStage {
    let encoder: VideoEncoder
    private let stream: UnsafeMutablePointer<AVStream>
    private let output: OutputFile
    private let progress: ProgressReporter?
    private let onFrame: (@Sendable (EncodeProgress) -> Void)?
    /// The video's start and length in seconds, for progress.
    private let mediaStart: Double
    private let mediaDuration: Double?
    /// Subtracted from every packet's timestamps, in the encoder's time base (the input video
    /// stream's): the output starts at 0 unless --copyts (Timeline). The frames keep the input's
    /// times until here, so filters and progress count from the video's own start.
    private let shift: Int64
    /// `--fps`: frames are retimed (repeated, dropped) to ticks of 1/rate from the output's start
    /// (the shift is taken off first), and the encoder counts in those ticks.
    private var frameRate: FrameRateConverter?
    /// With `--fps`, the shift in seconds: packets count from the output's start, progress from the video's.
    private let retimedShift: Double
    /// Frames given to the encoder so far (read by other threads only after this stage's thread is joined).
    private(set) var frames = 0
    /// Frames out of the encoder (its packets) and where the latest one ends, in seconds from the
    /// video's start: what progress counts, so it does not stop short while the encoder drains.
    private var framesOut = 0
    private var positionOut = 0.0
    /// The setup's warnings (audio re-encoded, tags the container drops), printed with the first
    /// encoded frame: a run that fails before that prints its one error line and nothing else.
    let setupWarnings: DeferredLog

    init(encoder: VideoEncoder, stream: UnsafeMutablePointer<AVStream>, output: OutputFile, options: TranscodeOptions, shift: Int64,
         mediaStart: Double, mediaDuration: Double?, frameRate: FrameRateConverter? = nil) {
        self.encoder = encoder
        self.stream = stream
        self.output = output
        self.shift = shift
        self.frameRate = frameRate
        retimedShift = frameRate.map { seconds(shift, $0.input) } ?? 0
        progress = options.progress
        onFrame = options.onFrame
        self.mediaStart = mediaStart
        self.mediaDuration = mediaDuration
        setupWarnings = DeferredLog(options.log)
    }

    /// Interlaced output (`InterlacePlan.keptFieldOrder`): every frame is coded as two fields,
    /// in its own order where the decoder flagged it, else in this one (true: top field first).
    var interlacedTopFieldFirst: Bool?

    func encode(_ frame: Frame) throws {
        guard var rate = frameRate else { return try encodeOne(frame) }
        let retimed = rate.push(frame, pts: frame.pts - shift)
        frameRate = rate
        try encodeRetimed(retimed)
    }

    private func encodeRetimed(_ frames: [(frame: Frame, pts: Int64)]) throws {
        for (f, tick) in frames {
            f.pts = tick
            f.duration = 1
            try encodeOne(f)
        }
    }

    private func encodeOne(_ frame: Frame) throws {
        if let tff = interlacedTopFieldFirst, !frame.interlaced {
            frame.interlaced = true
            frame.topFieldFirst = tff
        }
        frames += 1
        if frames == 1 { setupWarnings.release() }
        try encoder.encode(frame, emit: write)
    }

    /// After the last frame: what the encoder still holds.
    func finish() throws {
        if var rate = frameRate {
            try encodeRetimed(rate.finish())
            frameRate = rate
        }
        try encoder.encode(nil, emit: write)
    }

    private func write(_ packet: Packet) throws {
        framesOut += 1
        let timeBase = encoder.context.pointee.time_base
        let p = packet.pointer.pointee
        if p.pts != AV_NOPTS {
            positionOut = max(positionOut, seconds(p.pts + max(0, p.duration), timeBase) + retimedShift - mediaStart)
        }
        let quality = qualityOf(packet)
        // With --fps the frames' ticks already count from the output's start.
        if shift != 0 && frameRate == nil {
            if packet.pointer.pointee.pts != AV_NOPTS { packet.pointer.pointee.pts -= shift }
            if packet.pointer.pointee.dts != AV_NOPTS { packet.pointer.pointee.dts -= shift }
        }
        av_packet_rescale_ts(packet.pointer, encoder.context.pointee.time_base, stream.pointee.time_base)
        packet.pointer.pointee.stream_index = stream.pointee.index
        try output.write(packet.pointer)
        if progress != nil || onFrame != nil {
            let sample = EncodeProgress(frames: framesOut, position: positionOut, total: mediaDuration, bytes: output.bytesWritten,
                                        quality: quality, outputStream: Int(stream.pointee.index))
            progress?.update(sample)
            onFrame?(sample)
        }
    }

    /// The quantizer the encoder reports for a packet (AV_PKT_DATA_QUALITY_STATS, in lambda units),
    /// as ffmpeg shows it in `q=`.
    private func qualityOf(_ packet: Packet) -> Double? {
        var size = 0
        guard let data = av_packet_get_side_data(packet.pointer, AV_PKT_DATA_QUALITY_STATS, &size), size >= 4 else { return nil }
        let q = UInt32(data[0]) | UInt32(data[1]) << 8 | UInt32(data[2]) << 16 | UInt32(data[3]) << 24
        return Double(Int32(bitPattern: q)) / Double(FF_QP2LAMBDA)
    }
}
