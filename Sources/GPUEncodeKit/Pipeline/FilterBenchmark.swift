import CFFmpeg

/// The filter stage alone: decoded frames held in memory, then upload → filter chain → YUV
/// readback in a loop, with no decoder or encoder competing for the CPU.
public enum FilterBenchmark {
    public struct Result: Sendable {
        public var frames: Int
        public var seconds: Double
        public var width: Int
        public var height: Int
        public var renderer: String
        /// With `stages`: per-stage GPU and CPU time of frames rendered one at a time (`StageTimes.summary`).
        public var stages: String?
        /// Where the output scale ran (`ScaleFirst.description`); nil without one. A scale done
        /// in swscale on delivery is outside the timed loop.
        public var scale: String?
        public var fps: Double { Double(frames) / seconds }
    }

    /// `scale`: `--width` and its kin, appended after the preset as the transcode appends them.
    public static func run(input path: String, preset: Preset, gpu: GPUSelection, path renderPath: RenderPath = .direct, frames: Int,
                           transfer: TransferOptions = TransferOptions(), synchronous: Bool = false, scale: ScaleRequest = ScaleRequest(),
                           stages: Bool = false, compile: CompileOptions = CompileOptions()) throws -> Result {
        let input = try VideoSource(path: path, threads: 0)
        let dec = input.decoder.pointee
        let (working, color) = input.workingFormat
        let scaled = OutputScale(scale, input: input, preset: preset.filters)
        if let target = scaled.target {
            try PictureSize.checkScaled(target, from: (scaled.displayed.outputWidth, scaled.displayed.outputHeight), input: path)
        }
        let all = scaled.filters(after: preset.filters)
        let reference = RenderGeometry(width: dec.width, height: dec.height, format: working, rotation: input.rotation, filters: all)
        // The transcode's limits, so the benchmark measures what a transcode could run.
        try PictureSize.check(reference, input: path, preset: preset.origin)
        let gl = try GLContext(selection: gpu)
        // As the transcode plans it (ScaleFirst): a downscale moved ahead is done on delivery, before
        // the frames are held, so the timed loop is the GPU chain the transcode runs.
        let first = ScaleFirst(filters: all, input: input, working: working, rotation: input.rotation, software: gl.isSoftware,
                               hdr: color.transfer == .pq || color.transfer == .hlg, deinterlace: false, light: preset.light, options: compile)
        let (geometry, filters) = first.deliver(input, working: working, rotation: input.rotation, filters: all)
        // A handful of distinct frames is enough to defeat caching and small enough to hold in memory.
        var pool: [Frame] = []
        while pool.count < 8, let frame = try input.nextFrame() { pool.append(frame) }
        guard !pool.isEmpty else { throw GPUEncodeError(.inputDecode, path: path, "no video frame could be decoded") }

        let renderer = try FrameRenderer(geometry: geometry, source: color, filters: filters, path: renderPath, light: preset.light,
                                         transfer: transfer.resolved(for: gl), compile: compile, scaleFirst: first)
        let output = Frame()
        let out = output.pointer
        out.pointee.width = Int32(geometry.outputWidth)
        out.pointee.height = Int32(geometry.outputHeight)
        out.pointee.format = (renderer.writesNV12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P).rawValue
        try check(av_frame_get_buffer(out, 0), .internal, path: nil, "frame allocation")
        // With pixel buffer objects a frame's readback overlaps the next frame's upload and draw
        // (one frame of latency), as the transcode's GPU stage does; `synchronous` measures
        // the same transfers waited for one frame at a time.
        let pipeline = RenderPipeline<Frame>(renderer: renderer, overlapReadback: !synchronous)
        func run(_ count: Int) throws {
            for i in 0..<count { _ = try pipeline.process(source: pool[i % pool.count].planes, time: 0, into: output) }
            _ = try pipeline.flush()
        }
        // Warm-up: shader JIT and first-use allocations are not the steady state.
        try run(min(5, frames))
        let start = monotonicSeconds()
        try run(frames)
        let seconds = monotonicSeconds() - start
        var stageSummary: String?
        if stages {
            // After the timed run, so the queries' waits do not slow it.
            let times = StageTimes()
            for i in 0..<min(frames, 200) { try renderer.renderMeasured(source: pool[i % pool.count].planes, output: output.planes, times: times) }
            stageSummary = times.summary
        }
        return Result(frames: frames, seconds: seconds, width: geometry.outputWidth, height: geometry.outputHeight, renderer: gl.renderer,
                      stages: stageSummary,
                      scale: scaled.target == nil ? nil : first.description + (first.movesScale ? " (as frames are delivered: not in the time above)" : ""))
    }
}
