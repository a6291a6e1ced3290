import GPUEncodeCore
import GPUEncodeFilters

// Plans made before a GL context exists: the job the compiler gets, and the renderer of a plan
// that runs on the CPU alone (`RunOnCPU`), which never needs one.

extension FrameRenderer {
    /// The job `init` compiles (its parameters as `init`'s; `dolbyVision` as the renderer keeps it).
    static func job(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath, light: FilterLight,
                    toneMapping: ToneMapping, dolbyVision: DolbyVisionReshape?, limits: GPULimits, cost: CostModel,
                    keepsSignal: Bool, scaleFirst: ScaleFirst?) -> RenderJob {
        // Dolby Vision's uniforms sit in the fused shader beside the filters'.
        RenderJob(geometry: g, source: source, filters: filters, path: path, light: light, toneMapping: toneMapping,
                  keepsSignal: keepsSignal, dolbyVision: dolbyVision != nil, limits: limits, cost: cost,
                  reservedUniformVectors: dolbyVision.map { ShaderNeeds(glsl: $0.glsl).uniformVectors } ?? 0,
                  scaleFirst: scaleFirst)
    }

    /// The limits a plan made without a context assumes: llvmpipe's (Mesa 22), the software
    /// rasteriser such a plan replaces. A CPU plan draws nothing; the limits only decide which
    /// plan the compiler makes, as they would with the context.
    static let contextFreeLimits = GPULimits(uniformVectors: 4096, textureUnits: 32, combinedTextureUnits: 192, drawBuffers: 8,
                                             maxTextureSize: 16384)

    /// The renderer for a software rasteriser (`GLContext.rendersInSoftware`) where its plan runs on
    /// the CPU alone, made without a GL context: none is ever needed, and llvmpipe's would hold about
    /// 65 MB (its threads, LLVM) and take 40 ms to start. nil where the plan needs the renderer
    /// (make the context, then the renderer, as always). Parameters as `init`'s; `rendersInSoftware`
    /// is asked only when the plan would run on the CPU (on a GPU machine it opens the GPU's display).
    public static func onCPU(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath = .direct,
                             light: FilterLight = .gamma, toneMapping: ToneMapping = ToneMapping(), keepsSignal: Bool = false,
                             dolbyVision: DolbyVisionReshape? = nil, compile: CompileOptions = CompileOptions(),
                             scaleFirst: ScaleFirst? = nil, rendersInSoftware: () -> Bool) throws -> FrameRenderer? {
        let cost = CostModel.software.withHostKernels(CPUFeatures.hasVectorKernels())
        let job = FrameRenderer.job(geometry: g, source: source, filters: filters, path: path, light: light, toneMapping: toneMapping,
                                    dolbyVision: keepsSignal ? nil : dolbyVision, limits: contextFreeLimits, cost: cost,
                                    keepsSignal: keepsSignal, scaleFirst: scaleFirst)
        guard (try? ChainRenderer.checkSize(g.sourceWidth, g.sourceHeight, limits: contextFreeLimits, of: .input)) != nil,
              (try? ChainRenderer.checkSize(g.outputWidth, g.outputHeight, limits: contextFreeLimits, of: .input)) != nil,
              // (A plan that does not fit these limits throws here: it is the context's to make.)
              (try? RenderCompiler(options: compile).compile(job))?.graph.execution?.runsOnCPU == true, rendersInSoftware() else { return nil }
        // The same job, so the same plan: `init` returns before its first GL call.
        return try FrameRenderer(geometry: g, source: source, filters: filters, path: path, light: light, limits: contextFreeLimits,
                                 toneMapping: toneMapping, keepsSignal: keepsSignal, dolbyVision: dolbyVision, compile: compile,
                                 scaleFirst: scaleFirst, cost: cost)
    }
}
