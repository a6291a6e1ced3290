import CFFmpeg

/// An audio stream re-encoded (AAC or Opus: AudioPlan decides which streams): its packets through
/// an AudioTranscoder (decode, resample, re-frame, encode), and the encoded packets rescaled from
/// the encoder's time base (1/sample rate) to the output stream's.
final class AudioTranscodeHandler: OutputStreamHandler {
    private let transcoder: AudioTranscoder
    private let stream: UnsafeMutablePointer<AVStream>
    private let output: OutputFile
    private let run: RunState

    init(_ transcoder: AudioTranscoder, to stream: UnsafeMutablePointer<AVStream>, output: OutputFile, run: RunState) {
        self.transcoder = transcoder
        self.stream = stream
        self.output = output
        self.run = run
    }

    func handle(_ packet: Packet) throws {
        try transcoder.transcode(packet, emit: write)
    }

    /// What the decoder, resampler, sample queue and encoder still hold; nothing after a failure.
    func finish() throws {
        if run.failed { return }
        try transcoder.transcode(nil, emit: write)
    }

    private func write(_ encoded: Packet) throws {
        av_packet_rescale_ts(encoded.pointer, transcoder.timeBase, stream.pointee.time_base)
        encoded.pointer.pointee.stream_index = stream.pointee.index
        encoded.pointer.pointee.pos = -1
        try output.write(encoded.pointer)
    }
}
