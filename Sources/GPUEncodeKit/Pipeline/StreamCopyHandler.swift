import CFFmpeg

/// An audio or subtitle stream copied packet for packet: only the timestamps change: moved by the
/// timeline's shift (the output starts at 0 unless --copyts: Timeline), in the input's time base so
/// nothing is rounded, then rescaled to the output stream's time base (the muxer interleaves the
/// streams).
///
/// A trimmed copy into Matroska/WebM (no edit list there): Opus is cut at the sample by its own
/// pre-skip (`opus`: OpusTrimStart, the extradata already patched); any other codec starts with the
/// packet holding the cut, whole, and says once how far before the cut that is (`matroskaCut`).
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
    /// Added after rescaling, in the output stream's time base (OutputFile.copiedBlockOffset); found
    /// at the first packet, when the muxer has chosen the time base.
    private var muxerOffset: Int64?
    /// `--start`/`--to`/`-t` in this stream's ticks (TrimPlan); nil copies every packet.
    private let window: TrimWindow?
    /// Subtitles: a cue shown across the start is kept from the start (audio keeps its packet whole).
    private let isSubtitle: Bool
    /// Copied Opus trimmed at the sample into Matroska (the first packet kept, times, end padding).
    private let opus: OpusTrimStart?
    /// Matroska without `opus`: the output's name and the codec's, for the one warning when the cut
    /// falls inside the packet kept; nil elsewhere (MP4's edit list hides the part before the cut).
    private let matroskaCut: (output: String, codec: String)?
    private var started = false
    private(set) var isDone = false

    init(from input: UnsafeMutablePointer<AVStream>, inputPath: String, to stream: UnsafeMutablePointer<AVStream>, output: OutputFile,
         shift: Int64, window: TrimWindow? = nil, opus: OpusTrimStart? = nil, matroskaCut: (output: String, codec: String)? = nil,
         log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.output = output
        self.stream = stream
        inputTimeBase = input.pointee.time_base
        inputIndex = Int(input.pointee.index)
        self.inputPath = inputPath
        self.log = log
        order = CopiedPacketOrder(format: output.format.pointee.oformat)
        self.shift = shift
        self.window = window
        self.opus = opus
        self.matroskaCut = opus == nil ? matroskaCut : nil
        isSubtitle = input.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
    }

    func handle(_ packet: Packet) throws {
        let p = packet.pointer
        if let opus {
            guard keep(p, opus) else { return }
            retime(p, opus)
        } else {
            if let window, !inside(p, window) { return }
            if shift != 0 {
                if p.pointee.pts != AV_NOPTS { p.pointee.pts -= shift }
                if p.pointee.dts != AV_NOPTS { p.pointee.dts -= shift }
            }
            av_packet_rescale_ts(p, inputTimeBase, stream.pointee.time_base)
        }
        let muxerOffset = self.muxerOffset ?? output.copiedBlockOffset(stream.pointee.codecpar, timeBase: stream.pointee.time_base)
        self.muxerOffset = muxerOffset
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
            if !started, let matroskaCut {
                let ms = Double(av_rescale_q(cut - pts, inputTimeBase, AVRational(num: 1, den: 10000))) / 10
                log(.warning, "\(matroskaCut.output): audio stream #\(inputIndex) (\(matroskaCut.codec)) is copied: Matroska cannot trim inside an audio packet, so it starts \(formatNumber(ms)) ms before the cut (in sync with the picture); --audio opus re-encodes it sample-exact, or write .mp4/.mov, whose edit list trims it")
            }
            if isSubtitle {
                p.pointee.duration = pts + duration - cut
                p.pointee.pts = cut
                p.pointee.dts = cut
            }
        }
        started = true
        return true
    }

    /// Copied Opus into Matroska: every packet from the one OpusTrimStart chose (its pre-skip hides
    /// what is before the cut) to the last that starts before the end.
    private func keep(_ p: UnsafeMutablePointer<AVPacket>, _ opus: OpusTrimStart) -> Bool {
        if isDone { return false }
        let pts = p.pointee.pts != AV_NOPTS ? p.pointee.pts : p.pointee.dts
        guard pts != AV_NOPTS else { return started }
        if pts < opus.firstPacket { return false }
        if opus.isPastEnd(pts) {
            isDone = true
            return false
        }
        if !started && pts != opus.firstPacket {
            // The run's demuxer gave other packets than the look-ahead read: the pre-skip is off.
            log(.warning, "\(inputPath): stream \(inputIndex): the copied Opus stream does not start with the packet expected; its start may be up to one packet off")
        }
        started = true
        return true
    }

    /// Copied Opus into Matroska: times exact at 48 kHz (the first kept packet at -pre-skip, so its
    /// first played sample is at 0), then in the muxer's ticks; the last packet's samples past the
    /// end are marked for discarding (the muxer's DiscardPadding), so the audio ends with the trim.
    private func retime(_ p: UnsafeMutablePointer<AVPacket>, _ opus: OpusTrimStart) {
        let rate = AVRational(num: 1, den: 48000)
        let pts = p.pointee.pts != AV_NOPTS ? p.pointee.pts : p.pointee.dts
        let past = opus.samplesPastEnd(pts, duration: p.pointee.duration)
        // Rounded to the muxer's ticks as the block time it writes (time + pre-skip, see
        // copiedBlockOffset), so the demuxer's time less CodecDelay plus the decoder's skip, each
        // rounded alike, lands the first sample on the cut's own tick (--copyts: 1.234 s, not 1.235).
        let tb = stream.pointee.time_base
        let block = av_rescale_q(opus.outputTime(pts) + opus.preSkip, rate, tb)
        let time = block - av_rescale_q(opus.preSkip, rate, tb)
        p.pointee.duration = av_rescale_q(p.pointee.duration, inputTimeBase, tb)
        p.pointee.pts = time
        p.pointee.dts = time
        // Skip side data: u32le samples to skip at the start, u32le at the end, two reason bytes. A
        // start skip the input's demuxer attached (MP4's first packet) means nothing here: the
        // pre-skip does it. An end skip (the input's own last packet) stays, the trim's end is added.
        var size: Int = 0
        if let side = av_packet_get_side_data(p, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 10 {
            for i in [0, 1, 2, 3, 8] { side[i] = 0 }
        }
        if past > 0, let side = av_packet_get_side_data(p, AV_PKT_DATA_SKIP_SAMPLES, &size) ?? av_packet_new_side_data(p, AV_PKT_DATA_SKIP_SAMPLES, 10) {
            let had = (0..<4).reduce(UInt32(0)) { $0 | UInt32(side[4 + $1]) << (8 * UInt32($1)) }
            let v = max(had, UInt32(clamping: past))
            for i in 0..<4 { side[4 + i] = UInt8((v >> (8 * UInt32(i))) & 0xff) }
        }
    }

    /// Nothing is held back: every packet was written when it came.
    func finish() {}
}
