import GPUEncodeCore

/// Whether a Dolby Vision stream's base layer is a picture without its RPU. Profile 5's is not: its
/// IPTPQc2 signal (configuration record compatibility id 0, often tagged nothing) shows green and
/// purple as Y'CbCr, and every player (libplacebo, mpv) applies the RPU to it. Such a stream is
/// shown only with its RPU applied: what would show the base layer instead is refused.
struct DolbyVisionBaseLayer {
    /// The stream's name for the error lines ("Dolby Vision profile 5.0").
    let name: String
    /// False: no backward-compatible base layer.
    let showable: Bool

    /// `config`: the container's configuration record (profile, compatibility id), nil without
    /// one; `rpu`: the first frame's RPU, which says profile 5 (vdr_rpu_profile 0) where no
    /// record does.
    init(config: (profile: Int, compatibility: Int)?, rpu: DolbyVisionRPU?) {
        if let config {
            name = "Dolby Vision profile \(config.profile).\(config.compatibility)"
            showable = config.compatibility != 0
        } else {
            name = "Dolby Vision profile 5 (by its RPU)"
            showable = rpu.map { $0.rpuProfile != 0 } ?? true
        }
    }

    /// Refuses what would show a base layer that is not a picture: `--dolby-vision base` and
    /// `--hdr keep` (usage errors: gpuencode writes no Dolby Vision, and kept as HDR10 it would be
    /// the IPT signal tagged as PQ Y'CbCr), and an RPU the renderer cannot apply (`applicable`
    /// false: 66, the input cannot be shown).
    func check(mode: DolbyVisionMode, keep: Bool, applicable: Bool, path: String) throws {
        guard !showable else { return }
        let what = "\(name) has no backward-compatible base layer (its IPTPQc2 signal is a picture only with its RPU applied)"
        if mode == .base {
            throw GPUEncodeError(.usage, path: path, "\(what): --dolby-vision base has nothing to show; leave it out to apply the RPU")
        }
        if keep {
            throw GPUEncodeError(.usage, path: path, "\(what): --hdr keep cannot keep it (gpuencode does not write Dolby Vision); leave it out to tone-map with the RPU applied")
        }
        if !applicable {
            throw GPUEncodeError(.input, path: path, "\(what), and its first frame's RPU cannot be applied (none in it, or none read ahead: a pipe is not; one that needs the enhancement layer, or too many MMR coefficients)")
        }
    }
}
