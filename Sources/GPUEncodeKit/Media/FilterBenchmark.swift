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
        public var fps: Double { Double(frames) / seconds }
    }

    public static func run(input path: String, preset: Preset, gpu: GPUSelection, path renderPath: RenderPath = .direct, frames: Int,
                           transfer: TransferOptions = TransferOptions(), synchronous: Bool = false) throws -> Result {
        let input = try InputFile(path: path, threads: 0)
        let dec = input.decoder.pointee
        let (working, color) = Transcoder.workingFormat(for: dec.pix_fmt, colorspace: dec.colorspace, range: dec.color_range)
        let geometry = RenderGeometry(width: dec.width, height: dec.height, format: working, rotation: input.rotation, filters: preset.filters)
        // A handful of distinct frames is enough to defeat caching and small enough to hold in memory.
        var pool: [UnsafeMutablePointer<AVFrame>] = []
        defer { for f in pool { var p: UnsafeMutablePointer<AVFrame>? = f; av_frame_free(&p) } }
        var converter = FrameConverter()
        defer { converter.release() }
        let packet = av_packet_alloc()!
        let frame = av_frame_alloc()!
        defer {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            var f: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&f)
        }
        func drain() {
            while pool.count < 8, avcodec_receive_frame(input.decoder, frame) >= 0 {
                if let w = converter.convert(frame, to: working, width: geometry.sourceWidth, height: geometry.sourceHeight) { pool.append(w) }
                av_frame_unref(frame)
            }
        }
        while pool.count < 8, av_read_frame(input.format, packet) >= 0 {
            if packet.pointee.stream_index == input.videoIndex { avcodec_send_packet(input.decoder, packet); drain() }
            av_packet_unref(packet)
        }
        avcodec_send_packet(input.decoder, nil)
        drain()
        guard !pool.isEmpty else { throw GPUEncodeError(.inputDecode, path: path, "no video frame could be decoded") }

        let gl = try GLContext(selection: gpu)
        let renderer = try FrameRenderer(geometry: geometry, source: color, filters: preset.filters, path: renderPath,
                                         pixelBuffers: transfer.usePixelBuffers(gl), copyThreads: transfer.copyThreads)
        let out = av_frame_alloc()!
        defer { var o: UnsafeMutablePointer<AVFrame>? = out; av_frame_free(&o) }
        out.pointee.width = Int32(geometry.outputWidth)
        out.pointee.height = Int32(geometry.outputHeight)
        out.pointee.format = (renderer.writesNV12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P).rawValue
        try check(av_frame_get_buffer(out, 0), .internal, path: nil, "frame allocation")
        func planes(_ f: UnsafeMutablePointer<AVFrame>) -> [Plane] { framePlanes(f) }
        // With pixel buffer objects a frame's readback overlaps the next frame's upload and draw
        // (one frame of latency), as the transcode's GPU stage does; `synchronous` measures without.
        let pipelined = renderer.canPipeline && !synchronous
        func run(_ count: Int) throws {
            for i in 0..<count {
                if pipelined {
                    try renderer.submit(source: planes(pool[i % pool.count]))
                    if renderer.pendingFrames > 1 { try renderer.collect(into: planes(out)) }
                } else {
                    try renderer.render(source: planes(pool[i % pool.count]), output: planes(out))
                }
            }
            while renderer.pendingFrames > 0 { try renderer.collect(into: planes(out)) }
        }
        // Warm-up: shader JIT and first-use allocations are not the steady state.
        try run(min(5, frames))
        let start = monotonicSeconds()
        try run(frames)
        let seconds = monotonicSeconds() - start
        return Result(frames: frames, seconds: seconds, width: geometry.outputWidth, height: geometry.outputHeight, renderer: gl.renderer)
    }
}
