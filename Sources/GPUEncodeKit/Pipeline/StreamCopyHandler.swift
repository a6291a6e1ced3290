import CFFmpeg

/// An audio or subtitle stream copied packet for packet: only the timestamps change, rescaled to
/// the output stream's time base (the muxer interleaves the streams).
final class StreamCopyHandler: OutputStreamHandler {
    private let output: OutputFile
    private let stream: UnsafeMutablePointer<AVStream>
    private let inputTimeBase: AVRational
    private let inputIndex: Int
    private let inputPath: String
    private let log: @Sendable (LogLevel, String) -> Void
    private var order: CopiedPacketOrder

    init(from input: UnsafeMutablePointer<AVStream>, inputPath: String, to stream: UnsafeMutablePointer<AVStream>, output: OutputFile,
         log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.output = output
        self.stream = stream
        inputTimeBase = input.pointee.time_base
        inputIndex = Int(input.pointee.index)
        self.inputPath = inputPath
        self.log = log
        order = CopiedPacketOrder(format: output.format.pointee.oformat)
    }

    func handle(_ packet: Packet) throws {
        let p = packet.pointer
        av_packet_rescale_ts(p, inputTimeBase, stream.pointee.time_base)
        p.pointee.stream_index = stream.pointee.index
        p.pointee.pos = -1
        guard order.admit(p) else {
            if order.dropped == 1 {
                log(.warning, "\(inputPath): stream \(inputIndex) timestamps go backwards; packets at or before a time already written are dropped")
            }
            return
        }
        try output.write(p)
    }

    /// Nothing is held back: every packet was written when it came.
    func finish() {}
}
