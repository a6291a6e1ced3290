import CFFmpeg
import GPUEncodeCore
import Glibc

/// Copied Opus trimmed at the sample in Matroska/WebM, which has no edit list: by Opus's own means.
/// The packets stay bit-identical; the OpusHead pre-skip (extradata bytes 10-11, 48 kHz samples)
/// and `initial_padding` (the muxer's CodecDelay) become the samples from the first kept packet's
/// start to the cut, which RFC 7845 §4.2 allows ("pre-skip ... may be larger than the encoder's
/// delay, to trim the start"); the decoder drops them, so the first sample played is the one at the
/// cut. The first packet kept starts 240 ms before the cut where the demuxer gives that much after
/// its seek: a decoder started cold needs frames to converge (CELT predicts each frame's band
/// energies from the last), so the first samples after the cut differ from those of the source
/// decoded whole. RFC 7845 §4.6 asks for at least 80 ms (3840 samples); measured on pink noise cut
/// at 1.234 s, the 20 ms after the cut come out at 5 dB SNR against the whole decode when the
/// packet holding the cut is the first, 25 dB with 80 ms before it, 73 dB with 240 ms (largest
/// difference 5e-5, identical samples from 113 ms after the cut on).
///
/// The header (CodecPrivate, CodecDelay) is written before any packet, so which packet comes first
/// is found beforehand by a second, packet-only read of the input: opened and sought exactly as the
/// run's own demuxer is (TrimPlan.seek), so it sees the packets the run will see.
package struct OpusTrimStart: Sendable {
    /// Decoded before the cut and dropped by the pre-skip: 240 ms at 48 kHz, three times RFC 7845
    /// §4.6's minimum (see above for why).
    package static let preRoll: Int64 = 11520
    /// The same in microseconds: how far before the cut the run seeks (TrimPlan.seekPreRoll), so
    /// the demuxer gives the pre-roll's packets even where a keyframe sits just before the cut.
    package static let preRollMicros: Int64 = 240_000

    /// Whether `format` has an Opus audio stream (a copy of it into Matroska wants the pre-roll).
    package static func inputHasOpus(_ format: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        (0..<Int(format.pointee.nb_streams)).contains { i in
            let par = format.pointee.streams[i]!.pointee.codecpar!.pointee
            return par.codec_type == AVMEDIA_TYPE_AUDIO && par.codec_id == AV_CODEC_ID_OPUS
        }
    }
    /// The first packet kept: its pts as the demuxer gives it (input stream ticks).
    package let firstPacket: Int64
    /// The output's pre-skip: 48 kHz samples from the first kept packet's first sample to the cut.
    package let preSkip: Int64
    /// The input's pre-skip (where the Opus frame grid starts, see `start`).
    private let sourcePreSkip: Int64
    private let timeBase: AVRational
    /// The input time (48 kHz samples) that becomes the output's 0.
    private let zero: Int64
    /// The trim's end, 48 kHz samples of input time; nil to the end of the input.
    private let end: Int64?

    private static let rate = AVRational(num: 1, den: 48000)

    /// Finds the first packet to keep; nil where this cannot be done (no cut at the start, an
    /// extradata that is not an OpusHead, an input that cannot be read again, a cut before the
    /// first packet), and the stream is then cut at packet boundaries like any other codec.
    /// `shift`: what the run subtracts from the stream's times (TrimPlan.shift); with `copyts` the
    /// output keeps input times less it, else the cut is the output's 0.
    package static func plan(path: String, stream index: Int, in format: UnsafeMutablePointer<AVFormatContext>, window: TrimWindow,
                             seekTarget: Int64?, shift: Int64, copyts: Bool) -> OpusTrimStart? {
        guard let cutMicros = window.cutMicros, index < Int(format.pointee.nb_streams) else { return nil }
        let stream = format.pointee.streams[index]!
        guard let sourcePreSkip = preSkip(of: stream.pointee.codecpar) else { return nil }
        let tb = stream.pointee.time_base
        let cut = av_rescale_q(cutMicros, AV_TIME_BASE_Q_VALUE, rate)
        let grid = Grid(timeBase: tb, sourcePreSkip: Int64(sourcePreSkip))
        guard let packets = readAround(path: path, stream: index, seekMicros: seekTarget ?? cutMicros, cut: cut, grid: grid),
              let holder = packets.last else { return nil }
        let first = packets[0]
        let skip = cut - first.start
        guard skip > 0, skip <= Int64(UInt16.max), holder.start <= cut else { return nil }
        let zero = copyts ? av_rescale_q(shift, tb, rate) : cut
        return OpusTrimStart(firstPacket: first.pts, preSkip: skip, sourcePreSkip: Int64(sourcePreSkip), timeBase: tb, zero: zero,
                             end: window.endMicros.map { av_rescale_q($0, AV_TIME_BASE_Q_VALUE, rate) })
    }

    /// Writes the new pre-skip into the output stream's OpusHead and initial_padding (the muxer's
    /// CodecDelay). False (nothing changed) where the extradata is not an OpusHead.
    package func apply(to par: UnsafeMutablePointer<AVCodecParameters>) -> Bool {
        guard OpusTrimStart.preSkip(of: par) != nil, let data = par.pointee.extradata else { return false }
        data[10] = UInt8(preSkip & 0xff)
        data[11] = UInt8(preSkip >> 8)
        par.pointee.initial_padding = Int32(preSkip)
        return true
    }

    /// Where a packet starts (its first decoded sample, pre-skip included, as FFmpeg's timestamps
    /// count), in 48 kHz samples of input time.
    package func start(_ pts: Int64) -> Int64 {
        Grid(timeBase: timeBase, sourcePreSkip: sourcePreSkip).start(pts)
    }

    /// A packet's time in the output, in 48 kHz samples: the first kept packet at -preSkip (without --copyts).
    package func outputTime(_ pts: Int64) -> Int64 { start(pts) - zero }

    /// Whether a packet starts at or after the trim's end (none of it is played).
    package func isPastEnd(_ pts: Int64) -> Bool {
        guard let end else { return false }
        return start(pts) >= end
    }

    /// The samples of a packet (starting at input pts `pts`, `duration` ticks long) past the trim's
    /// end, for DiscardPadding (Matroska's end trim): 0 for all but the last packet.
    package func samplesPastEnd(_ pts: Int64, duration: Int64) -> Int64 {
        guard let end, duration > 0 else { return 0 }
        let packetEnd = start(pts) + av_rescale_q(duration, timeBase, OpusTrimStart.rate)
        return max(0, packetEnd - max(end, start(pts)))
    }

    /// The OpusHead's pre-skip, where the extradata is one (RFC 7845 §5.1: "OpusHead", version, channels, pre-skip LE16).
    private static func preSkip(of par: UnsafeMutablePointer<AVCodecParameters>) -> UInt16? {
        guard par.pointee.codec_id == AV_CODEC_ID_OPUS, par.pointee.extradata_size >= 19, let data = par.pointee.extradata,
              Array(UnsafeBufferPointer(start: data, count: 8)) == Array("OpusHead".utf8) else { return nil }
        return UInt16(data[10]) | UInt16(data[11]) << 8
    }

    /// Packet start times in 48 kHz samples. Matroska's millisecond ticks round them (a packet that
    /// starts 6.5 ms before 0 reads as -7 ms); Opus frames are multiples of 2.5 ms (120 samples) from
    /// the stream's first sample at -pre-skip, so a time within half a millisecond of that grid is
    /// put on it, exact again. A stream off the grid keeps its ticks (within half a millisecond).
    private struct Grid {
        let timeBase: AVRational
        let sourcePreSkip: Int64

        func start(_ pts: Int64) -> Int64 {
            let raw = av_rescale_q(pts, timeBase, OpusTrimStart.rate)
            guard av_cmp_q(timeBase, OpusTrimStart.rate) > 0 else { return raw }
            let fromFirst = raw + sourcePreSkip
            let step: Int64 = 120
            let snapped = (fromFirst >= 0 ? (fromFirst + step / 2) / step : -((-fromFirst + step / 2) / step)) * step - sourcePreSkip
            return abs(snapped - raw) <= 24 ? snapped : raw
        }
    }

    private struct Seen {
        let pts: Int64
        let start: Int64
    }

    /// The stream's packets as the run's demuxer will give them after its seek, up to the first
    /// one that ends after the cut; nil where the input cannot be read again.
    private static func readAround(path: String, stream index: Int, seekMicros: Int64, cut: Int64, grid: Grid) -> [Seen]? {
        // Only a regular file is read twice: a second open of a FIFO would take the run's bytes.
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, let ctx = try? MediaInput.open(path) else { return nil }
        var c: UnsafeMutablePointer<AVFormatContext>? = ctx
        defer { avformat_close_input(&c) }
        // As VideoSource opens it and TrimPlan.seeks it: the same default stream, the same place.
        guard avformat_find_stream_info(ctx, nil) >= 0, index < Int(ctx.pointee.nb_streams) else { return nil }
        _ = avformat_seek_file(ctx, -1, Int64.min, seekMicros, seekMicros, 0)
        let tb = ctx.pointee.streams[index]!.pointee.time_base
        guard let packet = av_packet_alloc() else { return nil }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&p) }
        var seen: [Seen] = []
        while av_read_frame(ctx, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == index else { continue }
            let pts = packet.pointee.pts != AV_NOPTS ? packet.pointee.pts : packet.pointee.dts
            guard pts != AV_NOPTS else { continue }
            let start = grid.start(pts)
            let end = start + av_rescale_q(max(0, packet.pointee.duration), tb, rate)
            seen.append(Seen(pts: pts, start: start))
            // The first is the latest packet that starts at least the pre-roll before the cut, or the
            // first read: nothing before it is kept (a run that cannot seek reads from the start).
            while seen.count > 1 && seen[1].start <= cut - preRoll { seen.removeFirst() }
            if end > cut || start >= cut { return seen }
        }
        return nil
    }
}
