import CFFmpeg

/// An audio stream re-encoded (AAC or Opus: AudioPlan decides which streams): its packets through
/// an AudioTranscoder (decode, resample, re-frame, encode), and the encoded packets rescaled from
/// the encoder's time base (1/sample rate) to the output stream's.
final class AudioTranscodeHandler: OutputStreamHandler {
    private let transcoder: AudioTranscoder
    private let stream: UnsafeMutablePointer<AVStream>
    private let output: OutputFile
    private let run: RunState
    /// Added to every packet's timestamps (in the transcoder's time base), decided at the first.
    private var shift: Int64?

    init(_ transcoder: AudioTranscoder, to stream: UnsafeMutablePointer<AVStream>, output: OutputFile, run: RunState) {
        self.transcoder = transcoder
        self.stream = stream
        self.output = output
        self.run = run
    }

    func handle(_ packet: Packet) throws {
        try transcoder.transcode(packet, emit: write)
    }

    var isDone: Bool { transcoder.pastEnd }

    /// What the decoder, resampler, sample queue and encoder still hold (nothing after a failure);
    /// then the codecs close, before the output is renamed into place.
    func finish() throws {
        defer { transcoder.close() }
        if run.failed { return }
        try transcoder.transcode(nil, emit: write)
    }

    private func write(_ encoded: Packet) throws {
        let p = encoded.pointer
        let shift = self.shift ?? decideShift(firstPts: p.pointee.pts)
        if shift != 0 {
            if p.pointee.pts != AV_NOPTS { p.pointee.pts += shift }
            if p.pointee.dts != AV_NOPTS { p.pointee.dts += shift }
        }
        av_packet_rescale_ts(encoded.pointer, transcoder.timeBase, stream.pointee.time_base)
        encoded.pointer.pointee.stream_index = stream.pointee.index
        encoded.pointer.pointee.pos = -1
        try output.write(encoded.pointer)
    }

    /// AAC into MP4/MOV starting at T > 0: FFmpeg 5.1's mov muxer writes an empty edit of the first
    /// packet's time or a media time that skips the priming, never both, so the priming (1024
    /// samples) would play just before T. The packets move later by the priming (the first one at T,
    /// so the muxer writes [empty edit T][media time 0]) and OutputFile patches the edit list's media
    /// time to skip it (EditListPatch). A stream at or before 0 already gets its skip from the muxer.
    private func decideShift(firstPts: Int64) -> Int64 {
        let priming = transcoder.primingSamples
        let rate = transcoder.timeBase
        var shift: Int64 = 0
        if transcoder.codec == .aac, output.isMP4Family, priming > 0, rate.num == 1, rate.den > 0,
           firstPts != AV_NOPTS, firstPts + priming > 0 {
            shift = priming
            output.skipAtStart(stream: Int(stream.pointee.index), samples: priming, rate: Int64(rate.den))
        }
        self.shift = shift
        return shift
    }
}
