import CFFmpeg

/// One filtered frame as a picture: `gpuencode preview`, contact sheets, preset checks. The frame
/// goes through the same colour conversion, rotation and filter chain as a transcode; still
/// images (PNG, JPEG) are inputs too.
public enum Preview {
    public struct Result {
        public var image: RGBAImage
        /// The time of the frame shown (seconds from the start), nil for a still image.
        public var time: Double?
        public var renderer: String
    }

    public static func render(input path: String, preset: Preset, at seconds: Double = 0, gpu: GPUSelection = .auto) throws -> Result {
        if ImageIO.isImagePath(path) {
            let image = try ImageIO.read(path)
            let gl = try GLContext(selection: gpu)
            let renderer = try ImageRenderer(width: image.width, height: image.height, filters: preset.filters)
            return Result(image: try renderer.render(image), time: nil, renderer: gl.renderer)
        }
        let input = try InputFile(path: path, threads: 0)
        guard let frame = try decodeFrame(input, at: seconds) else {
            let length = input.durationSeconds.map { " (the video is \(String(Double(Int($0 * 100)) / 100)) s long)" } ?? ""
            throw GPUEncodeError(.usage, path: path, "no video frame at or after \(seconds) s\(length)")
        }
        var f: UnsafeMutablePointer<AVFrame>? = frame.frame
        defer { av_frame_free(&f) }
        let dec = input.decoder.pointee
        let (working, color) = Transcoder.workingFormat(for: AVPixelFormat(rawValue: frame.frame.pointee.format), colorspace: dec.colorspace,
                                                        range: dec.color_range)
        let geometry = RenderGeometry(width: frame.frame.pointee.width, height: frame.frame.pointee.height, format: working,
                                      rotation: input.rotation, filters: preset.filters)
        var converter = FrameConverter()
        defer { converter.release() }
        guard let planar = converter.convert(frame.frame, to: working, width: geometry.sourceWidth, height: geometry.sourceHeight) else {
            throw GPUEncodeError(.inputDecode, path: path, "cannot convert the frame at \(seconds) s")
        }
        var pf: UnsafeMutablePointer<AVFrame>? = planar
        defer { av_frame_free(&pf) }
        let gl = try GLContext(selection: gpu)
        let renderer = try FrameRenderer(geometry: geometry, source: color, filters: preset.filters, path: .viaRGBA)
        let image = try renderer.renderRGBA(source: framePlanes(planar), time: frame.time)
        return Result(image: image, time: frame.time, renderer: gl.renderer)
    }

    /// The first frame shown at or after `seconds` from the start of the media.
    static func decodeFrame(_ input: InputFile, at seconds: Double) throws -> (frame: UnsafeMutablePointer<AVFrame>, time: Double)? {
        let stream = input.videoStream
        let tb = stream.pointee.time_base
        let start = input.startSeconds
        if seconds > 0 {
            let target = av_rescale_q(Int64((seconds + start) * Double(AV_TIME_BASE)), AV_TIME_BASE_Q_VALUE, tb)
            if av_seek_frame(input.format, input.videoIndex, target, AVSEEK_FLAG_BACKWARD) >= 0 {
                avcodec_flush_buffers(input.decoder)
            }
        }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else { throw GPUEncodeError(.internal, "out of memory") }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&p) }
        var keep = false
        defer { if !keep { var f: UnsafeMutablePointer<AVFrame>? = frame; av_frame_free(&f) } }
        // Half a frame of slack, so asking for a frame's own time (rounded) finds it.
        let slack = stream.pointee.avg_frame_rate.num > 0 ? 0.5 / av_q2d(stream.pointee.avg_frame_rate) : 0.001
        func receive() -> Double? {
            while avcodec_receive_frame(input.decoder, frame) >= 0 {
                let ts = frame.pointee.best_effort_timestamp
                let t = ts == AV_NOPTS ? seconds : Double(ts) * av_q2d(tb) - start
                if t + slack >= seconds { return max(0, t) }
                av_frame_unref(frame)
            }
            return nil
        }
        var ended = false
        while !ended {
            if av_read_frame(input.format, packet) < 0 {
                avcodec_send_packet(input.decoder, nil)
                ended = true
            } else {
                defer { av_packet_unref(packet) }
                guard packet.pointee.stream_index == input.videoIndex else { continue }
                avcodec_send_packet(input.decoder, packet)
            }
            if let t = receive() { keep = true; return (frame, t) }
        }
        return nil
    }
}
