import CFFmpeg

/// The video's last stage: frames to the encoder, its packets to the muxer (rescaled to the
/// output stream's time base), and progress after each frame.
final class EncodeStage {
    let encoder: VideoEncoder
    private let stream: UnsafeMutablePointer<AVStream>
    private let output: OutputFile
    private let progress: ProgressReporter?
    private let onFrame: (@Sendable (Int, Double, Double?) -> Void)?
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
    /// Frames encoded so far (read by other threads only after this stage's thread is joined).
    private(set) var frames = 0
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
        // Progress counts the input's time.
        let position = seconds(frame.pts, rate.input) - mediaStart
        let retimed = rate.push(frame, pts: frame.pts - shift)
        frameRate = rate
        try encodeRetimed(retimed, position: position)
    }

    private func encodeRetimed(_ frames: [(frame: Frame, pts: Int64)], position: Double) throws {
        for (f, tick) in frames {
            f.pts = tick
            f.duration = 1
            try encodeOne(f, position: position)
        }
    }

    private func encodeOne(_ frame: Frame, position given: Double? = nil) throws {
        let pts = frame.pts
        if let tff = interlacedTopFieldFirst, !frame.interlaced {
            frame.interlaced = true
            frame.topFieldFirst = tff
        }
        try encoder.encode(frame, emit: write)
        frames += 1
        if frames == 1 { setupWarnings.release() }
        let position = given ?? seconds(pts, encoder.context.pointee.time_base) - mediaStart
        progress?.update(frames: frames, position: position, total: mediaDuration)
        onFrame?(frames, position, mediaDuration)
    }

    /// After the last frame: what the encoder still holds.
    func finish() throws {
        if var rate = frameRate {
            try encodeRetimed(rate.finish(), position: mediaDuration ?? 0)
            frameRate = rate
        }
        try encoder.encode(nil, emit: write)
        progress?.update(frames: frames, position: mediaDuration ?? 0, total: mediaDuration, final: true)
    }

    private func write(_ packet: Packet) throws {
        // With --fps the frames' ticks already count from the output's start.
        if shift != 0 && frameRate == nil {
            if packet.pointer.pointee.pts != AV_NOPTS { packet.pointer.pointee.pts -= shift }
            if packet.pointer.pointee.dts != AV_NOPTS { packet.pointer.pointee.dts -= shift }
        }
        av_packet_rescale_ts(packet.pointer, encoder.context.pointee.time_base, stream.pointee.time_base)
        packet.pointer.pointee.stream_index = stream.pointee.index
        try output.write(packet.pointer)
    }
}
