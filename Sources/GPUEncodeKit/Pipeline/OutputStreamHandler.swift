/// What becomes of one input stream in the output. The transcode loop (Transcoder.run) reads
/// packets and hands each to its stream's handler, as FFmpeg's doc/examples/transcode.c does:
/// `StreamCopyHandler` copies packets, `VideoTranscodeHandler` decodes, filters on the GPU and
/// encodes. A stream re-encoded another way (audio the container cannot hold) is one more handler
/// of the same shape: a decoder and an encoder between `handle` and the muxer, its packets
/// rescaled from the encoder's time base to the output stream's as it writes them.
protocol OutputStreamHandler: AnyObject {
    /// One packet of the handler's input stream, in that stream's time base.
    func handle(_ packet: Packet) throws

    /// The end of the input, or of the run after a failure (`RunState.failed`): write what is
    /// still buffered, or stop and let go of what the handler holds. Called once, whatever
    /// happened before, so a handler with threads joins them here.
    func finish() throws

    /// True once nothing more of this stream will be written (past a trim's end): when the video
    /// and every audio stream are done, the loop stops reading the input.
    var isDone: Bool { get }
}

extension OutputStreamHandler {
    var isDone: Bool { false }
}
