import CFFmpeg

/// An audio or subtitle stream copied packet for packet: only the timestamps change: moved by the
/// timeline's shift (the output starts at 0 unless --copyts: Timeline), in the input's time base so
/// nothing is rounded, then rescaled to the output stream's time base (the muxer interleaves the
/// streams).
final class StreamCopyHandler: OutputStreamHandler {
    private let output: OutputFile
    private let stream: UnsafeMutablePointer<AVStream>
    private let inputTimeBase: AVRational
    private let inputIndex: Int
    private let inputPath: String
    private let log: @Sendable (LogLevel, String) -> Void
    private var order: CopiedPacketOrder
    /// Subtracted from every timestamp, in the input stream's time base (Timeline).
    private let shift: Int64
    /// Added after rescaling, in the output stream's time base (OutputFile.copiedBlockOffset).
    private let muxerOffset: Int64
    /// `--start`/`--to`/`-t` in this stream's ticks (TrimPlan); nil copies every packet.
    private let window: TrimWindow?
    /// Subtitles: a cue shown across the start is kept from the start (audio keeps its packet whole).
    private let isSubtitle: Bool
    private(set) var isDone = false

    init(from input: UnsafeMutablePointer<AVStream>, inputPath: String, to stream: UnsafeMutablePointer<AVStream>, output: OutputFile,
         shift: Int64, window: TrimWindow? = nil, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.output = output
        self.stream = stream
        inputTimeBase = input.pointee.time_base
        inputIndex = Int(input.pointee.index)
        self.inputPath = inputPath
        self.log = log
        order = CopiedPacketOrder(format: output.format.pointee.oformat)
        self.shift = shift
        muxerOffset = output.copiedBlockOffset(stream.pointee.codecpar, timeBase: stream.pointee.time_base)
        self.window = window
        isSubtitle = input.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
    }

    func handle(_ packet: Packet) throws {
        let p = packet.pointer
        if let window, !inside(p, window) { return }
        if shift != 0 {
            if p.pointee.pts != AV_NOPTS { p.pointee.pts -= shift }
            if p.pointee.dts != AV_NOPTS { p.pointee.dts -= shift }
        }
        av_packet_rescale_ts(p, inputTimeBase, stream.pointee.time_base)
        if muxerOffset != 0 {
            if p.pointee.pts != AV_NOPTS { p.pointee.pts += muxerOffset }
            if p.pointee.dts != AV_NOPTS { p.pointee.dts += muxerOffset }
        }
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

    /// Whether a packet is inside the trim, cut at packet boundaries: audio keeps the packet that
    /// holds the start whole (its bytes are not touched; in MP4/MOV its time before 0 becomes the
    /// edit list's media time, so playback starts at the start), and stops before the first packet
    /// that starts at or after the end (as the ffmpeg CLI's copy stops). A subtitle cue shown
    /// across the start is kept from the start to its own end (its time moved, its text not).
    private func inside(_ p: UnsafeMutablePointer<AVPacket>, _ w: TrimWindow) -> Bool {
        if isDone { return false }
        let pts = p.pointee.pts != AV_NOPTS ? p.pointee.pts : p.pointee.dts
        guard pts != AV_NOPTS else { return true }
        if let end = w.end, pts >= end {
            isDone = true
            return false
        }
        if let cut = w.cut, pts < cut {
            let duration = p.pointee.duration
            // Ends at or before the cut (or says no length): wholly before the start.
            guard duration > 0, pts + duration > cut else { return false }
            if isSubtitle {
                p.pointee.duration = pts + duration - cut
                p.pointee.pts = cut
                p.pointee.dts = cut
            }
        }
        return true
    }

    /// Nothing is held back: every packet was written when it came.
    func finish() {}
}
