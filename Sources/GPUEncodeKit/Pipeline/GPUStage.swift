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
        /// What the encoder takes: NV12 from the single-pass shaders, else yuv420p.
        var outputFormat: AVPixelFormat
        /// The input stream's time base and start (seconds): filter time runs from 0 there.
        var timeBase: AVRational
        var mediaStart: Double
        /// Each frame's readback may finish while the next frame is drawn (pixel buffer objects).
        var overlapReadback: Bool
        /// How HDR sources become SDR.
        var toneMapping = ToneMapping()
    }

    private let settings: Settings
    private let options: TranscodeOptions
    private var context: GLContext?
    private var pipeline: RenderPipeline<Frame>?
    private var pool: FramePool?
    /// The GL_RENDERER, once the context is made.
    private(set) var rendererName: String?

    init(_ settings: Settings, options: TranscodeOptions) {
        self.settings = settings
        self.options = options
    }

    /// Makes the context and the renderer, on the thread that will render.
    func open() throws {
        let t0 = monotonicSeconds()
        let gl = options.reuseGPUContext ? try GLContextPool.take(options.gpu) : try GLContext(selection: options.gpu)
        context = gl
        rendererName = gl.renderer
        options.log(.info, "GPU: \(gl.renderer) (\(gl.version); \(gl.platform); ready in \(Int((monotonicSeconds() - t0) * 1000)) ms)")
        let limits = GPULimits.current()
        options.log(.info, "GPU limits: \(limits)")
        let renderer = try FrameRenderer(geometry: settings.geometry, source: settings.sourceColor, filters: options.preset.filters,
                                         path: options.renderPath, light: options.preset.light, pixelBuffers: options.transfer.usePixelBuffers(gl),
                                         copyThreads: options.transfer.copyThreads, limits: limits, toneMapping: settings.toneMapping)
        for line in renderer.passes { options.log(.info, line) }
        pipeline = RenderPipeline(renderer: renderer, overlapReadback: settings.overlapReadback)
        let g = settings.geometry
        pool = try FramePool(width: Int32(g.outputWidth), height: Int32(g.outputHeight), format: settings.outputFormat)
    }

    /// Renders `frame`; returns the frames finished meanwhile (this one, or with pixel buffer
    /// objects the one before it).
    func process(_ frame: Frame) throws -> [Frame] {
        let out = try pool!.frame()
        out.pts = frame.pts
        out.duration = frame.duration
        // Filter time (keyframes, animated shaders) runs from 0 at the start of the media.
        let time = max(0, seconds(frame.pts, settings.timeBase) - settings.mediaStart)
        return report(try pipeline!.process(source: frame.planes, time: time, into: out))
    }

    /// After the last frame: the frames still in flight.
    func flush() throws -> [Frame] {
        report(try pipeline?.flush() ?? [])
    }

    /// Lets go of the GL objects, then of the context (back to the process's pool for batch jobs,
    /// which keeps memory flat over thousands of them): on the thread that rendered.
    func close() {
        pipeline = nil
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
