import CFFmpeg

/// What a run does with interlaced video, from `--deinterlace`, whether the preset has filters (a
/// GPU stage) and what the input says of its fields:
///
/// | --deinterlace | stream tagged interlaced (field_order tt/bb/tb/bt) | not tagged |
/// |---|---|---|
/// | auto, filters | deinterlaced at the frame rate where frames are flagged (bwdif `deint=interlaced`) | from the first frame flagged interlaced on, as when tagged; untouched when none is |
/// | auto, `--preset none` | encoded interlaced, order kept (none does not touch pixels) | untouched |
/// | off | encoded interlaced, order kept | untouched |
/// | frame / field | every frame deinterlaced (bwdif `deint=all`), at the frame / field rate | the same, top field first |
struct InterlacePlan {
    /// How the GPU stage deinterlaces; nil when it does not.
    var deinterlace: GPUStage.Deinterlace?
    /// Encode interlaced with this field order (AV_FIELD_TT or AV_FIELD_BB); nil for progressive output.
    var keptFieldOrder: AVFieldOrder?
    /// The output frame rate, and the encoder's time base (the input's, or half of it when a
    /// field's time would not be a whole number of ticks).
    var frameRate: AVRational?
    var timeBase: AVRational
    /// For `-v` and warnings.
    var notes: [(LogLevel, String)] = []

    /// Whether frames of a stream with this field order are interlaced, and which field is shown
    /// first. tb and bt are read as the ffmpeg CLI writes them for woven frames (tb for top field
    /// first, as Matroska's "interleaved, top field first"), not by AVFieldOrder's comments; a
    /// frame's own top_field_first wins over either.
    static func fields(_ order: AVFieldOrder) -> (interlaced: Bool, topFirst: Bool) {
        switch order {
        case AV_FIELD_TT, AV_FIELD_TB: return (true, true)
        case AV_FIELD_BB, AV_FIELD_BT: return (true, false)
        default: return (false, true)
        }
    }

    init(mode: DeinterlaceMode, presetHasFilters: Bool, fieldOrder: AVFieldOrder, timeBase: AVRational, frameRate: AVRational?,
         codec: VideoCodec, input: String) {
        let (tagged, topFirst) = InterlacePlan.fields(fieldOrder)
        let order = topFirst ? "tt" : "bb"
        self.timeBase = timeBase
        self.frameRate = frameRate
        switch mode {
        case .auto where presetHasFilters:
            // Untagged streams start deinterlacing at their first flagged frame, so progressive
            // video goes through exactly as before.
            deinterlace = GPUStage.Deinterlace(fieldRate: false, all: false, waitForFlag: !tagged, topFieldFirst: topFirst, timeScale: 1)
            if tagged { notes.append((.info, "interlaced (\(order)) video: deinterlaced on the GPU (bwdif), one frame per frame")) }
        case .auto, .off:
            if tagged {
                keptFieldOrder = topFirst ? AV_FIELD_TT : AV_FIELD_BB
                let why = mode == .off ? "--deinterlace off" : "--preset none does not touch pixels; --deinterlace frame deinterlaces"
                notes.append((.info, "interlaced (\(order)) video encoded interlaced (\(why))"))
                if codec != .h264 {
                    notes.append((.info, "\(codec.softwareEncoder) codes each woven frame as one picture; the container says \(order)"))
                }
                if mode == .off && presetHasFilters {
                    notes.append((.warning, "\(input): --deinterlace off: the GPU filters each interlaced frame with its two fields woven, so chroma resampling and any filter that moves, scales or blurs mixes them (--preset none keeps them apart)"))
                }
            }
        case .frame, .field:
            let field = mode == .field
            var scale: Int64 = 1
            if field {
                // A field lasts half a frame: keep the input's time base when that is a whole
                // number of its ticks, else count in half ticks, so every time is exact.
                let rate = frameRate ?? AVRational(num: 25, den: 1)
                let ticks = Int64(timeBase.den) * Int64(rate.den), per = Int64(timeBase.num) * Int64(rate.num)
                if per == 0 || ticks % (2 * per) != 0 { scale = 2 }
                self.timeBase = AVRational(num: timeBase.num, den: timeBase.den * Int32(scale))
                self.frameRate = frameRate.map { AVRational(num: $0.num * 2, den: $0.den) }
            }
            deinterlace = GPUStage.Deinterlace(fieldRate: field, all: true, waitForFlag: false, topFieldFirst: topFirst, timeScale: scale)
            notes.append((.info, "deinterlacing every frame on the GPU (bwdif, \(tagged ? order : "not flagged interlaced; tt assumed")), one frame per \(field ? "field" : "frame")"))
        }
    }
}
