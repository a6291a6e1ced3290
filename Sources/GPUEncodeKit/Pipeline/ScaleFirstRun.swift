import CFFmpeg

// Scale first, carried out (`ScaleFirst` decides): the frames come out of the decoder's delivery
// already scaled by swscale's Lanczos, and the GPU stage sees a smaller source with the scaler's
// passes gone. One place for the transcode and `--benchmark-filters`, so the benchmark times the
// chain the transcode runs.

extension ScaleFirst {
    /// The decision for a run that reads `input` in `working` and renders `filters` (the preset's,
    /// then the output scaler's passes) turned by `rotation`.
    /// `software`: whether the run's renderer is software (`GLContext.isSoftware`, or
    /// `GLContext.rendersInSoftware` before its context exists).
    init(filters: [FilterInstance], input: VideoSource, working: AVPixelFormat, rotation: Rotation, software: Bool,
         hdr: Bool, deinterlace: Bool, light: FilterLight, options: CompileOptions) {
        let dec = input.decoder.pointee
        var facts = Facts(sourceWidth: Int(dec.width), sourceHeight: Int(dec.height), rotation: rotation,
                          bitDepth: Int(av_pix_fmt_desc_get(working)!.pointee.comp.0.depth), softwareRenderer: software)
        facts.hdr = hdr
        facts.deinterlace = deinterlace
        facts.light = light
        self.init(filters: filters, facts: facts, options: options)
    }

    /// Sets `input`'s delivery for the GPU stage and returns its geometry and chain: the frames at
    /// the coded scaled size, resampled with Lanczos, and the chain without the scaler when the
    /// scale moves; else the source's size and `filters` as they are (today's plan).
    func deliver(_ input: VideoSource, working: AVPixelFormat, rotation: Rotation, filters: [FilterInstance])
        -> (geometry: RenderGeometry, filters: [FilterInstance]) {
        let dec = input.decoder.pointee
        let chain = gpuFilters(filters)
        let (w, h) = movesScale ? (Int32(coded.width), Int32(coded.height)) : (dec.width, dec.height)
        let geometry = RenderGeometry(width: w, height: h, format: working, rotation: rotation, filters: chain)
        input.resampling = movesScale ? .lanczos : .bicubic
        input.delivery = .working(working, width: geometry.sourceWidth, height: geometry.sourceHeight)
        return (geometry, chain)
    }
}
