import GPUEncodeCore
import GPUEncodeFilters

// What `FrameRenderer.init` decides from the chain and the geometry before it makes anything:
// fused pass or chain, transparent chains, output scales, the packed and NV12 paths. Kept apart so
// `gpuencode validate` and the renderer share one answer without reading the renderer's set-up.
extension FrameRenderer {
    /// The passes a video renderer on a GPU with `limits` makes of `filters`, one line each, as
    /// `init` decides them (the fused single pass, or the chain's plan). Throws the preset error the
    /// renderer would throw. `gpuencode validate` calls this, so it predicts what runs.
    public static func passPlan(_ filters: [FilterInstance], limits: GPULimits, path: RenderPath = .direct) throws -> [String] {
        try nominalCompile(filters, limits: limits, path: path).graph.programs
    }

    /// The graph after each compiler pass (`--passes`) for `filters` on a nominal 1080p 8-bit
    /// BT.709 source, as `gpuencode validate --passes` shows it without a movie.
    public static func passTrace(_ filters: [FilterInstance], limits: GPULimits, compile: CompileOptions = CompileOptions()) throws -> [String] {
        try nominalCompile(filters, limits: limits, compile: compile).traceText
    }

    private static func nominalCompile(_ filters: [FilterInstance], limits: GPULimits, path: RenderPath = .direct,
                                       compile: CompileOptions = CompileOptions()) throws -> RenderCompiler.Result {
        let g = RenderGeometry(sourceWidth: 1920, sourceHeight: 1080, chromaShiftX: 1, chromaShiftY: 1, rotation: .none, filters: filters)
        let job = RenderJob(geometry: g, source: YUVColorSpace(matrix: .bt709, fullRange: false), filters: filters, path: path,
                            limits: limits, cost: .current())
        return try RenderCompiler(options: compile).compile(job)
    }

    /// Whether `init` renders `filters` in the single fused pass (else through the chain's passes):
    /// one decision for the run and for `passPlan`, so validate predicts the run.
    static func usesFusedPass(_ filters: [FilterInstance], path: RenderPath, limits: GPULimits) -> Bool {
        path == .direct && !ChainRenderer.needsSampling(filters) && fusesInOnePass(filters, limits: limits)
    }

    static func fusedPassLine(_ filters: [FilterInstance]) -> String {
        "pass 1: source, \(filters.map(\.declaration.name).joined(separator: ", ")), to Y'CbCr (filters: \(fusedNeeds(filters)))"
    }

    /// Whether the whole point chain fits the single fused program of the direct path (the
    /// largest of its luma, chroma and packed shaders) on a GPU with `limits`.
    static func fusesInOnePass(_ filters: [FilterInstance], limits: GPULimits) -> Bool {
        let own = [packedBlockMain, directLumaMain, directChromaMain].map { ShaderNeeds(glsl: ChainPlan.header + sourceUniforms() + $0) }
        let base = own.max { $0.uniformVectors + $0.samplers < $1.uniformVectors + $1.samplers }!
        let needs = fusedNeeds(filters)
        // One custom filter of uncounted size runs there as before: the linker has the last word.
        return base.fits(with: needs, in: limits) || (filters.count == 1 && needs.unknown)
    }

    /// What the point filters of the direct path's `filtered()` need, with the prefixes it gives them.
    private static func fusedNeeds(_ filters: [FilterInstance]) -> ShaderNeeds {
        filters.enumerated().reduce(ShaderNeeds()) { $0 + ShaderNeeds(glsl: FilterCodegen.function($1.1, prefix: "f\($1.0)_")) }
    }

    /// Whether `filters` leave the picture as it is (identity filters only, or none) in gamma
    /// light: such a chain is rendered without clamping R'G'B' to 0...1 and without 8-bit
    /// intermediates (see `init`).
    static func isTransparent(_ filters: [FilterInstance], light: FilterLight) -> Bool {
        light == .gamma && filters.onlyIdentity
    }

    /// When `filters` end in the output scaler (`ScaleFilter`'s two passes, which the pipeline
    /// appends for `--width`/`--size`): its horizontal ratio, input width over output width, for
    /// `ScaledChroma`. (The chain's result is then the output's size.)
    static func outputScaleRatio(_ filters: [FilterInstance], geometry g: RenderGeometry) -> Double? {
        guard endsInOutputScale(filters) else { return nil }
        let before = ChainRenderer.outputSize(of: Array(filters.dropLast(2)), width: g.uprightWidth, height: g.uprightHeight)
        return Double(before.0) / Double(g.outputWidth)
    }

    static func endsInOutputScale(_ filters: [FilterInstance]) -> Bool {
        filters.count >= 2 && filters.suffix(2).allSatisfy { $0.declaration.name == ScaleFilter.name }
    }

    static func isUpright420(_ g: RenderGeometry) -> Bool {
        g.rotation == .none && g.chromaShiftX == 1 && g.chromaShiftY == 1
    }

    /// Whether a renderer for this chain writes NV12 (Y + interleaved CbCr) rather than three
    /// planes: the single-pass path for upright 4:2:0 point-filter chains, where a 4x2 block's
    /// chroma is one RGBA8 texel.
    public static func writesNV12(_ g: RenderGeometry, path: RenderPath, filters: [FilterInstance]) -> Bool {
        // A chain ends upright in an RGBA texture whatever the source, so it converts to NV12 too.
        path == .direct && (isUpright420(g) || ChainRenderer.needsSampling(filters))
    }
}
