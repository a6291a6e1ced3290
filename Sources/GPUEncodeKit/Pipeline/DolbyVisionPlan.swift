import CFFmpeg
import GPUEncodeCore
import GPUEncodeMedia
import GPUEncodeRender

/// What a run does with a Dolby Vision stream (`--dolby-vision`): apply each frame's RPU before
/// tone mapping where the first frame has one the renderer can apply, else use the base layer
/// (an error where it is no picture: `DolbyVisionBaseLayer`); and the line `-v` shows for it.
struct DolbyVisionPlan {
    /// The first frame's RPU when the RPU is applied (it sets the tone mapping's peak and black:
    /// `DolbyVisionRPU.colorSpace`); nil: the base layer is used.
    var rpu: DolbyVisionRPU?
    /// The line saying what is done, nil for a stream without Dolby Vision.
    var note: (LogLevel, String)?

    init(_ o: TranscodeOptions, input: VideoSource, keep: Bool) throws {
        // A stream without the container's configuration record (raw HEVC, a remux that lost it)
        // is Dolby Vision when its frames carry RPUs: HEVC tagged HDR is looked at too, and HEVC
        // tagged nothing, as profile 5 usually is.
        let dec = input.decoder.pointee
        let looked = dec.codec_id == AV_CODEC_ID_HEVC && [AVCOL_TRC_SMPTE2084, AVCOL_TRC_ARIB_STD_B67, AVCOL_TRC_UNSPECIFIED].contains(dec.color_trc)
        let config = input.dolbyVision
        guard config != nil || looked else { return }
        let firstRPU = input.firstFrameDolbyVisionRPU
        guard config != nil || firstRPU != nil else { return }
        // Profile 5's base layer is no picture: whatever would show it is refused.
        let layer = DolbyVisionBaseLayer(config: config, rpu: firstRPU)
        try layer.check(mode: o.encoder.dolbyVision, keep: o.encoder.hdr == .keep,
                        applicable: firstRPU.map { !$0.needsResidual && DolbyVisionReshape.fits($0) } ?? false, path: o.input)
        let name = "\(o.input): Dolby Vision " + (config.map { "profile \($0.profile).\($0.compatibility)" } ?? "(RPUs without a configuration record\(layer.showable ? "" : "; profile 5 by its RPU"))")
        let compatibility = config?.compatibility ?? (!layer.showable ? 0 : dec.color_trc == AVCOL_TRC_ARIB_STD_B67 ? 4 : dec.color_trc == AVCOL_TRC_SMPTE2084 ? 1 : 0)
        let base = compatibility == 4 ? "HLG " : compatibility == 1 ? "HDR10 (PQ) " : compatibility == 2 ? "SDR " : ""
        let baseLine = "\(name): the \(base)base layer is used"
        if o.encoder.dolbyVision == .base {
            note = (.info, baseLine + " (--dolby-vision base)")
            return
        }
        if keep {
            note = (.info, baseLine + ", kept as HDR (--hdr keep keeps the base layer; the RPU is not written)")
            return
        }
        guard let first = firstRPU else {
            note = (.warning, baseLine + (input.readsAhead ? ": its frames carry no Dolby Vision metadata (RPU)"
                                          : ": its RPU is read ahead from a file before the run, and this input is not one (a pipe)"))
            return
        }
        if first.needsResidual {
            note = (.warning, baseLine + ": its RPU needs the enhancement layer's residual, which is not decoded")
            return
        }
        guard DolbyVisionReshape.fits(first) else {
            note = (.warning, baseLine + ": its RPU uses more MMR coefficients than the renderer holds (\(first.mmrOrders) orders, at most \(DolbyVisionReshape.mmrCapacity))")
            return
        }
        rpu = first
        let peak = Int(DolbyVisionRPU.pqNits(first.sourceMaxPQ).rounded())
        note = (.info, "\(name): RPU applied (reshaping and colour transform on the GPU, as libplacebo), then tone-mapped as PQ BT.2020 mastered at \(peak) nits")
    }
}
