import CFFmpeg

/// The filter graph on the GPU for video frames: frames in, filtered frames out with the same
/// timestamps, in order, each frame's measurements reported (`--stats`) as it finishes. Owns the
/// GL context, made on the thread that renders (GL contexts are per thread), the renderer and its
/// pipeline (RenderPipeline decides when readbacks finish), and the pool output frames come from.
final class GPUStage {
    struct Settings {
        var geometry: RenderGeometry
        /// How to read the source's Y'CbCr.
        var sourceColor: YUVColorSpace
        /// What the encoder takes: NV12 from the single-pass shaders, else yuv420p; yuv420p10le
        /// for kept HDR.
        var outputFormat: AVPixelFormat
        /// The input stream's time base and start (seconds): filter time runs from 0 there.
        var timeBase: AVRational
        var mediaStart: Double
        /// Each frame's readback may finish while the next frame is drawn (pixel buffer objects).
        var overlapReadback: Bool
        /// How HDR sources become SDR.
        var toneMapping = ToneMapping()
        /// Deinterlacing before the filters (InterlacePlan); nil: frames go as they are.
        var deinterlace: Deinterlace? = nil
        /// `--hdr keep`: filters see the source's own R'G'B' and the output is 10-bit in its colour space.
        var keepHDR = false
        /// The preset's filters, then the output scaler's passes when the size changes.
        var filters: [FilterInstance] = []
        /// The planar format frames are read in (`VideoSource.workingFormat`): what NVDEC frames
        /// become when they cannot stay on the GPU (`CUDAFrames`).
        var workingFormat = AV_PIX_FMT_YUV420P
        /// Dolby Vision: each frame's RPU applied before tone mapping (`DolbyVisionPlan`); nil: the base layer.
        var dolbyVision: DolbyVisionReshape? = nil
        /// Where the output scale runs (`ScaleFirst`), decided before the frames are delivered.
        var scaleFirst: ScaleFirst? = nil
    }

    /// How the stage deinterlaces (`--deinterlace`, decided by `InterlacePlan`).
    struct Deinterlace {
        /// One frame per field, twice the frame rate (bwdif's send_field), instead of one per frame.
        var fieldRate: Bool
        /// Every frame (frame, field), or only those flagged interlaced (auto: bwdif's
        /// deint=interlaced; the others are shown as they are).
        var all: Bool
        /// Start at the first frame flagged interlaced (auto, on a stream not tagged interlaced):
        /// until then frames go through untouched, with no frame of delay.
        var waitForFlag: Bool
        /// The field shown first in frames that do not say (the stream's order, else top).
        var topFieldFirst: Bool
        /// Output timestamps are the input's times this: the encoder counts in the input's time
        /// base divided by it (2 when a field's time would fall between two ticks).
        var timeScale: Int64
    }

    /// A frame uploaded to the deinterlacer and not yet shown.
    private struct Waiting {
        var pts: Int64
        var duration: Int64
        var interlaced: Bool
        var topFieldFirst: Bool
    }

    private let settings: Settings
    private let options: TranscodeOptions
    private var context: GLContext?
    private var pipeline: RenderPipeline<Frame>?
    private var pool: FramePool?
    private var deinterlacer: Deinterlacer?
    /// NVDEC frames (CUDA memory) into the renderer; made with the first one.
    private var cuda: CUDAFrames?
    private var waiting: [Waiting] = []
    /// What the renderer was planned with, to plan it again.
    private var planMadeWith: (transfer: TransferOptions, limits: GPULimits)?
    /// The GL_RENDERER, once the context is made.
    private(set) var rendererName: String?

    init(_ settings: Settings, options: TranscodeOptions) {
        self.settings = settings
        self.options = options
    }

    /// Makes the context and the renderer, on the thread that will render (or, with
    /// `options.sharedGL`, the renderer on the shared context's thread).
    func open() throws {
        if let shared = options.sharedGL {
            try shared.sync { gl in try makeRenderer(gl) }
            return
        }
        if try planOnCPU() { return }
        let t0 = monotonicSeconds()
        let gl = try makeContext()
        options.log(.info, "GPU: \(gl.renderer) (\(gl.version); \(gl.platform); ready in \(Int((monotonicSeconds() - t0) * 1000)) ms)")
        try makeRenderer(gl)
    }

    /// Where the renderer would be a software rasteriser and its plan runs on the CPU alone
    /// (`FrameRenderer.onCPU`), makes that renderer without a GL context, which is then never
    /// made. Frames a deinterlacer may hand over on the GPU need the context from the start.
    private func planOnCPU() throws -> Bool {
        let gpu = options.gpu
        guard options.compile.cpuKernels, framesInMemory,
              let renderer = try FrameRenderer.onCPU(geometry: settings.geometry, source: settings.sourceColor, filters: settings.filters,
                                                     path: options.renderPath, light: options.preset.light, toneMapping: settings.toneMapping,
                                                     keepsSignal: settings.keepHDR, dolbyVision: settings.dolbyVision,
                                                     compile: options.compile, scaleFirst: settings.scaleFirst,
                                                     rendersInSoftware: { GLContext.rendersInSoftware(gpu) }) else { return false }
        rendererName = "the CPU"
        options.log(.info, "GPU: none made (the plan runs on the CPU; a GPU would be a software rasteriser)")
        for line in renderer.passes { options.log(.info, line) }
        options.passTrace?(renderer.compiled.traceText)
        let path = options.renderPath == .viaRGBA ? "rgba" : options.renderPath.rawValue
        options.report?.gpu(.object([("renderer", .string("CPU kernels")), ("software", .bool(true)), ("renderPath", .string(path)),
                                     ("transfer", .string("none")), ("passes", .strings(renderer.passes))]))
        pipeline = RenderPipeline(renderer: renderer, overlapReadback: false)
        let g = settings.geometry
        pool = try FramePool(width: Int32(g.outputWidth), height: Int32(g.outputHeight), format: settings.outputFormat)
        return true
    }

    /// This stage's own context (from the process's pool for batch jobs), kept in `context`.
    private func makeContext() throws -> GLContext {
        let gl = options.reuseGPUContext ? try GLContextPool.take(options.gpu) : try GLContext(selection: options.gpu)
        context = gl
        return gl
    }

    /// Runs `body` where the stage's GL work runs: on the shared context's thread, or here.
    private func onGL<T>(_ body: () throws -> T) throws -> T {
        guard let shared = options.sharedGL else { return try body() }
        return try shared.sync { _ in try body() }
    }

    private func makeRenderer(_ gl: GLContext) throws {
        rendererName = gl.renderer
        if options.sharedGL != nil { options.log(.info, "GPU: \(gl.renderer) (\(gl.version); \(gl.platform); shared by the batch's jobs)") }
        let limits = GPULimits.current()
        options.log(.info, "GPU limits: \(limits)")
        // Frames come as planes in memory until a deinterlacer hands them over on the GPU (where a
        // CPU kernel cannot reach them): one that waits for the first flagged frame is made, and
        // the plan made again, then.
        let transfer = options.transfer.resolved(for: gl)
        planMadeWith = (transfer, limits)
        let renderer = try makePlan(transfer: transfer, limits: limits, cpuKernels: framesInMemory)
        if let report = options.report {
            let path = options.renderPath == .viaRGBA ? "rgba" : options.renderPath.rawValue
            report.gpu(.object([("renderer", .string(gl.renderer)), ("version", .string(gl.version)), ("platform", .string(gl.platform)),
                                ("software", .bool(gl.isSoftware)), ("renderPath", .string(path)),
                                ("transfer", .string(transfer.mode.rawValue)), ("passes", .strings(renderer.passes))]))
        }
        let g = settings.geometry
        pool = try FramePool(width: Int32(g.outputWidth), height: Int32(g.outputHeight), format: settings.outputFormat)
    }

    /// Frames reach the renderer in memory, where a CPU kernel can read them: not a deinterlacer's,
    /// unless it waits for a flagged frame (the plan is made again then). (NVDEC's frames are
    /// downloaded for a plan on the CPU: `SemiPlanarSource` refuses one, and `CUDAFrames` falls back.)
    private var framesInMemory: Bool {
        settings.deinterlace?.waitForFlag ?? true
    }

    /// Compiles the renderer and its pipeline; `cpuKernels` false keeps every step on the GPU.
    private func makePlan(transfer: TransferOptions, limits: GPULimits, cpuKernels: Bool) throws -> FrameRenderer {
        var compile = options.compile
        compile.cpuKernels = compile.cpuKernels && cpuKernels
        let renderer = try FrameRenderer(geometry: settings.geometry, source: settings.sourceColor, filters: settings.filters,
                                         path: options.renderPath, light: options.preset.light,
                                         transfer: transfer, limits: limits, toneMapping: settings.toneMapping,
                                         keepsSignal: settings.keepHDR, dolbyVision: settings.dolbyVision,
                                         compile: compile, scaleFirst: settings.scaleFirst)
        for line in renderer.passes { options.log(.info, line) }
        options.passTrace?(renderer.compiled.traceText)
        pipeline = RenderPipeline(renderer: renderer, overlapReadback: settings.overlapReadback)
        return renderer
    }

    /// Renders `frame`; returns the frames finished meanwhile (this one, or with pixel buffer
    /// objects the one before it).
    func process(_ frame: Frame) throws -> [Frame] {
        try onGL { try filtered(frame) }
    }

    private func filtered(_ frame: Frame) throws -> [Frame] {
        // An NVDEC frame: on the GPU already (`onGPU`), or downloaded and converted.
        var imported: CUDAFrames.Imported?
        if frame.pixelFormat == AV_PIX_FMT_CUDA {
            if cuda == nil { cuda = CUDAFrames(workingFormat: settings.workingFormat, log: options.log) }
            imported = try cuda!.importFrame(frame, renderer: pipeline!.renderer)
        }
        // Kept alive until the frame is rendered: `source` points into its planes.
        var downloaded: Frame?
        var onGPU: SemiPlanarSource?
        switch imported {
        case .onGPU(let s): onGPU = s
        case .downloaded(let f): downloaded = f
        case nil: break
        }
        let planes = (downloaded ?? frame).planes
        defer { withExtendedLifetime(downloaded) {} }
        // (The RPU of the frame arriving: with the deinterlacer, which shows each frame one frame
        // late, the frame shown gets its successor's, in practice the same scene's.)
        if settings.dolbyVision != nil, let rpu = frame.dolbyVisionRPU { pipeline!.renderer.setDolbyVision(rpu) }
        if let plan = settings.deinterlace {
            if deinterlacer == nil && (!plan.waitForFlag || frame.interlaced) {
                if pipeline!.renderer.runsOnCPU {
                    // A plan on the CPU cannot take the deinterlacer's frames; none of its frames is
                    // in flight, so the plan is made again here, with a context if it had none.
                    if let made = planMadeWith {
                        _ = try makePlan(transfer: made.transfer, limits: made.limits, cpuKernels: false)
                    } else {
                        let gl = try makeContext()
                        options.log(.info, "GPU: \(gl.renderer) (\(gl.version); \(gl.platform); for the deinterlacer)")
                        planMadeWith = (options.transfer.resolved(for: gl), GPULimits.current())
                        _ = try makePlan(transfer: planMadeWith!.transfer, limits: planMadeWith!.limits, cpuKernels: false)
                        rendererName = gl.renderer
                    }
                }
                deinterlacer = try Deinterlacer(renderer: pipeline!.renderer)
                if plan.waitForFlag { options.log(.info, "frame at \(frame.pts) flagged interlaced: deinterlacing from here on") }
            }
            if let deinterlacer {
                waiting.append(Waiting(pts: frame.pts, duration: frame.duration, interlaced: frame.interlaced, topFieldFirst: frame.topFieldFirst))
                // One frame late: the frame before this one is shown now that its next is known.
                guard try onGPU.map({ try deinterlacer.push($0) }) ?? deinterlacer.push(planes) else { return [] }
                return report(try show(waiting.removeFirst(), plan))
            }
        }
        let out = try pool!.frame()
        out.pts = frame.pts
        out.duration = frame.duration
        // Interlaced output (--deinterlace off) needs each frame's fields.
        out.interlaced = frame.interlaced
        out.topFieldFirst = frame.topFieldFirst
        // Filter time (keyframes, animated shaders) runs from 0 at the start of the media.
        let time = max(0, seconds(frame.pts, settings.timeBase) - settings.mediaStart)
        try onGPU?.render()
        return report(try pipeline!.process(source: onGPU == nil ? planes : nil, time: time, into: out))
    }

    /// After the last frame: the frames still in flight.
    func flush() throws -> [Frame] {
        try onGL { try finish() }
    }

    private func finish() throws -> [Frame] {
        var last: [RenderPipeline<Frame>.Finished] = []
        if let plan = settings.deinterlace, let deinterlacer, deinterlacer.finish() { last = try show(waiting.removeFirst(), plan) }
        return report(last + (try pipeline?.flush() ?? []))
    }

    /// The deinterlacer's current frame as one output frame, or two at the field rate; progressive
    /// frames (auto) as they are. Timestamps are the frame's, scaled by the plan's `timeScale`; the
    /// second field's is half the frame's length later.
    private func show(_ frame: Waiting, _ plan: Deinterlace) throws -> [RenderPipeline<Frame>.Finished] {
        let pts = frame.pts * plan.timeScale, duration = frame.duration * plan.timeScale
        guard plan.all || frame.interlaced else { return try render(.copy, pts: pts, duration: duration) }
        let tff = frame.interlaced ? frame.topFieldFirst : plan.topFieldFirst
        guard plan.fieldRate else { return try render(.field(second: false, topFieldFirst: tff), pts: pts, duration: duration) }
        let half = duration / 2
        return try render(.field(second: false, topFieldFirst: tff), pts: pts, duration: half)
            + render(.field(second: true, topFieldFirst: tff), pts: pts + half, duration: duration - half)
    }

    private func render(_ output: Deinterlacer.Output, pts: Int64, duration: Int64) throws -> [RenderPipeline<Frame>.Finished] {
        try deinterlacer!.render(output)
        let out = try pool!.frame()
        out.pts = pts
        out.duration = duration
        out.interlaced = false
        let timeBase = AVRational(num: settings.timeBase.num, den: settings.timeBase.den * Int32(settings.deinterlace?.timeScale ?? 1))
        let time = max(0, seconds(pts, timeBase) - settings.mediaStart)
        return try pipeline!.process(source: nil, time: time, into: out)
    }

    /// Lets go of the GL objects, then of the context (back to the process's pool for batch jobs,
    /// which keeps memory flat over thousands of them): on the thread that rendered.
    func close() {
        // The GL objects go on the thread of their context.
        try? onGL {
            cuda?.close()
            cuda = nil
            deinterlacer = nil
            pipeline = nil
        }
        if options.reuseGPUContext, let context { GLContextPool.give(context) }
        context = nil
    }

    /// `--stats`: each finished frame's measurements, in frame order.
    private func report(_ finished: [RenderPipeline<Frame>.Finished]) -> [Frame] {
        if let statistics = options.statistics {
            for f in finished where !f.statistics.isEmpty { statistics(f.index, f.time, f.statistics) }
        }
        return finished.map(\.buffer)
    }
}
