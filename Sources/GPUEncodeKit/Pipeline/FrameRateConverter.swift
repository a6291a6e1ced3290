import CFFmpeg

/// `--fps`: constant-rate output with the frame selection of ffmpeg's `fps` filter at its
/// defaults (libavfilter/vf_fps.c: round=near, eof_action=round, no start_time). Each frame's time
/// is rescaled to ticks of 1/rate, rounded to the nearest (halves away from zero, as
/// av_rescale_q_rnd's AV_ROUND_NEAR_INF); the output starts at the first frame's tick. Output tick
/// t shows the last frame whose tick is at or before t, so a frame is repeated until the next one's
/// tick (24 → 30: every fourth one twice) and frames that share a tick give way to the latest
/// (60 → 30: every other one dropped). The last frame lasts until its end (its time plus its
/// duration, rounded the same way): what the ffmpeg CLI tells the filter at the end of the stream.
/// Pure bookkeeping on timestamps: the frames themselves are passed through, a repeated frame
/// more than once.
struct FrameRateConverter {
    /// The frames' time base (the encoder's before --fps) and the output's (1/rate).
    let input: AVRational
    let output: AVRational
    /// The next output tick; nil before the first frame.
    private var next: Int64?
    /// The frame waiting for the next one (vf_fps's frames[0]): shown at every tick before the next
    /// frame's.
    private var held: (frame: Frame, end: Int64)?
    /// The previous frame's time, for a frame without a duration.
    private var lastPTS: Int64?

    init(from input: AVRational, to output: AVRational) {
        self.input = input
        self.output = output
    }

    private func ticks(_ t: Int64) -> Int64 {
        av_rescale_q_rnd(t, input, output, AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }

    /// A frame whose time is `pts` (the input time base, from the output's start): returns the
    /// frames to encode meanwhile, each with its output tick.
    mutating func push(_ frame: Frame, pts: Int64) -> [(frame: Frame, pts: Int64)] {
        let tick = ticks(pts)
        // The frame's end, in case it is the last: its duration, else as long as the frame before it
        // (the ffmpeg CLI guesses from the frame rate), else one tick.
        let length = frame.duration > 0 ? frame.duration : lastPTS.map { pts - $0 } ?? 0
        let end = length > 0 ? ticks(pts + length) : tick + 1
        lastPTS = pts
        guard let (previous, _) = held, var t = next else {
            next = tick
            held = (frame, end)
            return []
        }
        var out: [(Frame, Int64)] = []
        while tick > t {
            out.append((previous, t))
            t += 1
        }
        next = t
        held = (frame, end)
        return out
    }

    /// After the last frame: it is shown at every tick before its end.
    mutating func finish() -> [(frame: Frame, pts: Int64)] {
        guard let (last, end) = held, var t = next else { return [] }
        var out: [(Frame, Int64)] = []
        while end > t {
            out.append((last, t))
            t += 1
        }
        held = nil
        next = t
        return out
    }
}
