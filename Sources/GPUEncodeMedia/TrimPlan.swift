import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

/// A trim (`--start`, `--to`, `-t`: TrimRange) in each input stream's own ticks, laid over the
/// Timeline, the way the ffmpeg CLI's input options do it:
///
/// - `--start` counts from the input's start (Timeline.origin, ffmpeg's format start_time): the
///   cut is T = origin + start, in microseconds, rescaled to each stream's time base (as ffmpeg's
///   ts_offset), and the output's 0 is T (ffmpeg's default), or the input's own times stay
///   (`--copyts`, as `ffmpeg -copyts -ss`: only the cut points move).
/// - The length (`-t`, or `--to` minus `--start`) is ffmpeg's recording time: video keeps the
///   frames that start less than it after the first frame kept (ffmpeg's trim filter counts from
///   its first frame), audio and subtitles what starts before T + length.
package struct TrimPlan {
    package let range: TrimRange
    /// T: the input time the output starts at, in microseconds (demuxer time); nil when whole.
    package let cutMicros: Int64?
    private let shifts: [Int64]
    private let timeBases: [AVRational]

    package init(range: TrimRange, timeline: Timeline, format: UnsafeMutablePointer<AVFormatContext>, copyts: Bool) {
        self.range = range
        let count = Int(format.pointee.nb_streams)
        timeBases = (0..<count).map { format.pointee.streams[$0]!.pointee.time_base }
        guard !range.isWhole else {
            cutMicros = nil
            shifts = timeline.shifts
            return
        }
        let origin = timeline.origin.map { av_rescale_q($0.value, $0.timeBase, AV_TIME_BASE_Q_VALUE) } ?? 0
        let cut = origin + range.start
        cutMicros = cut
        let bases = timeBases
        shifts = copyts ? timeline.shifts : bases.map { av_rescale_q(cut, AV_TIME_BASE_Q_VALUE, $0) }
    }

    package var isWhole: Bool { cutMicros == nil }

    /// Subtracted from stream `index`'s timestamps (its time base): Timeline's, or the cut.
    package func shift(_ index: Int) -> Int64 { index < shifts.count ? shifts[index] : 0 }

    /// The trim in stream `index`'s ticks; nil when the whole input is encoded. Without `--start`
    /// nothing is cut at the start (as ffmpeg's `-t` alone, which adds no start to its trim).
    package func window(_ index: Int) -> TrimWindow? {
        guard let cut = cutMicros, index < timeBases.count else { return nil }
        let tb = timeBases[index]
        let endMicros = range.duration.map { cut + $0 }
        return TrimWindow(cut: range.start > 0 ? av_rescale_q(cut, AV_TIME_BASE_Q_VALUE, tb) : nil,
                          length: range.duration.map { av_rescale_q($0, AV_TIME_BASE_Q_VALUE, tb) },
                          end: endMicros.map { av_rescale_q($0, AV_TIME_BASE_Q_VALUE, tb) },
                          cutMicros: range.start > 0 ? cut : nil, endMicros: endMicros)
    }

    /// Where progress and filter time count from, and how long the output is (seconds): the
    /// video's own start and length when whole, else the cut and what is left of the input after
    /// it (at most the length asked for). The one place the run's duration is decided.
    package func span(videoStart: Double, videoDuration: Double?) -> (start: Double, duration: Double?) {
        guard let cut = cutMicros else { return (videoStart, videoDuration) }
        let start = Double(cut) / 1e6
        let left = videoDuration.map { max(0, videoStart + $0 - start) }
        let asked = range.duration.map { Double($0) / 1e6 }
        switch (left, asked) {
        case let (l?, a?): return (start, min(l, a))
        case let (l?, nil): return (start, l)
        case let (nil, a): return (start, a)
        }
    }

    /// How long before the cut reading starts (microseconds), where a copied stream needs packets
    /// from before it: Opus into Matroska (OpusTrimStart's pre-roll). 0 seeks to the cut itself.
    package var seekPreRoll: Int64 = 0

    /// Where `seek` goes, in microseconds of input time; nil when nothing is cut at the start.
    package var seekTarget: Int64? {
        guard let cut = cutMicros, range.start > 0 else { return nil }
        return cut - seekPreRoll
    }

    /// Seeks `format` to the last keyframe at or before the cut (all streams: the demuxer's
    /// default stream decides, as `ffmpeg -ss` with avformat_seek_file), so decoding starts there.
    /// False where the demuxer cannot seek: the run then reads from the start and drops what is
    /// before the cut, which gives the same output, only slower.
    package func seek(_ format: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let target = seekTarget else { return true }
        // why: on a pipe or FIFO a demuxer "seeks" by reading on (Matroska reads to the end looking
        // for its index, then reports success), which would leave nothing to decode.
        guard let pb = format.pointee.pb, pb.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0 else { return false }
        return avformat_seek_file(format, -1, Int64.min, target, target, 0) >= 0
    }
}

/// The trim in one stream's time base (demuxer ticks, before any shift).
package struct TrimWindow: Sendable {
    /// The first time kept; nil when nothing is cut at the start.
    package let cut: Int64?
    /// The recording time, nil for "to the end": video keeps what starts less than this after its
    /// first frame kept.
    package let length: Int64?
    /// The end for streams that count from the cut (audio, subtitles): nothing starting at or after it.
    package let end: Int64?
    /// The same cut and end in microseconds, for sample-exact audio cuts where a stream's time
    /// base is coarse (Matroska's milliseconds).
    package let cutMicros: Int64?
    package let endMicros: Int64?
}
