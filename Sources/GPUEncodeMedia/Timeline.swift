import CFFmpeg
import GPUEncodeCore

/// Where the output's timeline starts: what is subtracted from each input stream's timestamps.
///
/// By default, as the ffmpeg CLI does without `-copyts`, the input's start (the earliest stream's
/// first presented time: FFmpeg's format start_time) becomes 0 in the output, and every stream is
/// moved by the same amount, so the offsets between streams (A/V offset, edit-list delays) stay as
/// they were. The amount is taken in the earliest stream's own time base and rescaled to each other
/// stream's (rounded to the nearest tick), so streams sharing a time base (MPEG-TS: 1/90000) move by
/// exactly the same number of ticks, and no stream moves by more than half a tick of its own off.
///
/// The first presented time is the stream's start_time except where the demuxer gives packets
/// earlier than what is played: Matroska's CodecDelay of an Opus track (its pre-skip) is subtracted
/// from the block times by FFmpeg's demuxer and skipped by the decoder, so such a stream is presented
/// CodecDelay later than its start_time says. Taking the start_time there would move the video
/// 6.5 ms later on every pass through an Opus MKV.
///
/// `--copyts` keeps the input's times, except where they are negative, which MP4's edit list would
/// hide (the ffmpeg CLI with -copyts loses those frames) and Matroska's muxer moves forward anyway:
/// across MPEG-TS's 33-bit timestamp wrap FFmpeg's demuxer makes the timestamps before the wrap
/// negative to keep the stream continuous; those are moved forward by 2^33 ticks (the times the file
/// counts up to before the wrap). Any other negative start is moved to 0, every stream with it, as
/// `-avoid_negative_ts make_non_negative` would.
package struct Timeline {
    /// By input stream index: subtracted from every timestamp of that stream, in its time base.
    package let shifts: [Int64]
    /// The input time (seconds) that becomes 0 in the output: 0 under --copyts with times from 0 on,
    /// minus the wrap's length when a wrap is undone.
    package let startSeconds: Double
    /// What was done, for `-v`: nil when the times are kept as they are.
    package let note: String?
    /// The input's start (the earliest stream's first presented time) in that stream's time base,
    /// whatever --copyts does with it: where a trim's --start counts from (TrimPlan), as ffmpeg's
    /// -ss counts from the format's start_time.
    package let origin: (value: Int64, timeBase: AVRational)?

    package init(format: UnsafeMutablePointer<AVFormatContext>, copyts: Bool) {
        let count = Int(format.pointee.nb_streams)
        let streams = (0..<count).map { format.pointee.streams[$0]! }
        var earliest: (value: Int64, timeBase: AVRational)?
        for s in streams {
            guard let start = Timeline.presentedStart(s, in: format) else { continue }
            if earliest == nil || av_compare_ts(start, s.pointee.time_base, earliest!.value, earliest!.timeBase) < 0 {
                earliest = (start, s.pointee.time_base)
            }
        }
        if earliest == nil, format.pointee.start_time != AV_NOPTS {
            earliest = (format.pointee.start_time, AV_TIME_BASE_Q_VALUE)
        }
        origin = earliest
        guard let start = earliest else {
            shifts = Array(repeating: 0, count: count)
            startSeconds = 0
            note = nil
            return
        }
        if copyts {
            // A negative time in a format with wrapping timestamps is the demuxer's wrap correction:
            // undo it for every stream (each by its own wrap, in its own time base).
            let wraps = streams.allSatisfy { $0.pointee.pts_wrap_bits > 0 && $0.pointee.pts_wrap_bits < 63 }
            if wraps && start.value < 0 {
                shifts = streams.map { -(Int64(1) << Int64($0.pointee.pts_wrap_bits)) }
                let first = streams.first!.pointee
                startSeconds = -Double(Int64(1) << Int64(first.pts_wrap_bits)) * Double(first.time_base.num) / Double(first.time_base.den)
                note = "timeline: absolute times (--copyts), continued across the \(first.pts_wrap_bits)-bit timestamp wrap"
                return
            }
            if start.value >= 0 {
                shifts = Array(repeating: 0, count: count)
                startSeconds = 0
                note = nil
                return
            }
            // Otherwise negative times: moved to 0 like the default (below).
        }
        let rounding = AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue)
        shifts = streams.map { av_rescale_q_rnd(start.value, start.timeBase, $0.pointee.time_base, rounding) }
        startSeconds = Double(start.value) * Double(start.timeBase.num) / Double(start.timeBase.den)
        note = startSeconds == 0 ? nil
            : "timeline: input time \(formatNumber((startSeconds * 1e6).rounded() / 1e6)) s becomes 0\(copyts ? " (--copyts keeps no negative time)" : " (--copyts keeps the input's times)")"
    }

    /// Subtracted from stream `index`'s timestamps.
    package func shift(_ index: Int) -> Int64 { index < shifts.count ? shifts[index] : 0 }

    /// The first presented time of `s` in its time base, or nil when it has none or does not count.
    /// Only video and audio count: a data track (timecode, metadata) or a cover picture says nothing
    /// about what plays, and FFmpeg's own start_time takes a subtitle's only when it is less than a
    /// second before the rest.
    static func presentedStart(_ s: UnsafeMutablePointer<AVStream>, in format: UnsafeMutablePointer<AVFormatContext>) -> Int64? {
        let st = s.pointee
        guard st.start_time != AV_NOPTS, st.time_base.num > 0, st.time_base.den > 0 else { return nil }
        let type = st.codecpar.pointee.codec_type
        guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO else { return nil }
        if st.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 { return nil }
        var start = st.start_time
        let par = st.codecpar.pointee
        if par.codec_id == AV_CODEC_ID_OPUS && par.initial_padding > 0 && Timeline.isMatroska(format) {
            // FFmpeg's Matroska demuxer stamps every block CodecDelay early (initial_padding, at 48 kHz
            // for Opus, rounded to the track's tick as the demuxer rounds it); the Opus decoder skips
            // the pre-skip. Other codecs' decoders in FFmpeg 5.1 do not skip it: their start_time is
            // what plays.
            start += av_rescale_q(Int64(par.initial_padding), AVRational(num: 1, den: 48000), st.time_base)
        }
        return start
    }

    static func isMatroska(_ format: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let iformat = format.pointee.iformat else { return false }
        return String(cString: iformat.pointee.name).contains("matroska")
    }
}
