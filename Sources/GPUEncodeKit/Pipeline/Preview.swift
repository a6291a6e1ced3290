import CFFmpeg

/// One filtered frame as a picture: `gpuencode preview`, contact sheets, preset checks. The frame
/// goes through the same colour conversion, rotation and filter chain as a transcode; still
/// images (PNG, JPEG) are inputs too.
public enum Preview {
    /// The times a frame may be asked for, in seconds: anything in a movie (31 years), and in
    /// range for the microsecond Int64 the seek takes.
    public static let timeRange: ClosedRange<Double> = 0...1e9

    /// Where the frame is taken when no time is asked for: this fraction of the video's duration
    /// into it. The first frame is often black (a fade in, a title, the README's contact sheet of
    /// Big Buck Bunny gave near-black tiles), 10% in is usually the picture itself.
    public static let representativeFraction = 0.1

    /// The time of the frame shown when none is asked for: `representativeFraction` of `duration`
    /// (0 when the container does not tell it).
    public static func representativeTime(duration: Double?) -> Double {
        guard let duration, duration.isFinite, duration > 0 else { return 0 }
        return duration * representativeFraction
    }

    public struct Result {
        public var image: RGBAImage
        /// The time of the frame shown (seconds from the start), nil for a still image.
        public var time: Double?
        public var renderer: String
    }

    /// `seconds`: the frame's time; nil takes the representative frame (`representativeTime`).
    public static func render(input path: String, preset: Preset, at seconds: Double? = nil, gpu: GPUSelection = .auto) throws -> Result {
        var picture = PictureOutput(input: path, preset: preset)
        picture.time = seconds
        picture.gpu = gpu
        return try picture.render()
    }

    /// One frame (or still) decoded once and a GL context made once, for rendering many filter
    /// chains over the same picture: contact sheets, `preview --watch`. Each render takes the path
    /// `render(input:preset:)` takes. Use it on the thread that made it (GL contexts are per thread).
    public final class Session {
        /// The time of the frame shown (seconds from the start), nil for a still image.
        public private(set) var time: Double?
        /// The GL_RENDERER in use.
        public let renderer: String
        /// The picture before any filter: upright (and even-sized for video).
        public let width: Int
        public let height: Int
        /// Width over height of one displayed pixel, turned with the picture (1 for square pixels and stills).
        public let sampleAspect: Double
        private let gl: GLContext
        private let still: RGBAImage?
        private var planar: Frame?
        private let frameSize: (width: Int32, height: Int32)
        private let working: AVPixelFormat
        private let rotation: Rotation
        private let color: YUVColorSpace
        /// The shown frame's Dolby Vision RPU, applied as a transcode applies it by default
        /// (`--dolby-vision apply`); nil: none, or one the renderer cannot apply (the base layer).
        private var dolbyVision: DolbyVisionRPU?
        /// A Dolby Vision stream's base layer (nil for other video), which says whether it may be shown.
        private var baseLayer: DolbyVisionBaseLayer?
        /// The open movie (nil for a still), kept so `show(at:)` can move to other frames; opened
        /// again when a seek fails.
        private var input: VideoSource?
        private let path: String
        /// The decoder stands just after the frame shown, so decoding on gives the next frames. False
        /// from the start of every move until it succeeds: after a failure the next move seeks afresh.
        private var positioned = false
        /// The frame shown is the video's last (the decoder has reached the end).
        private var atEnd = false
        /// The video's length in seconds and frame rate, when the container tells them.
        public let duration: Double?
        public let frameRate: Double?
        /// Frames rendered so far, so `frameIndex` keeps counting as in a transcode.
        private var renders = 0

        /// `seconds`: the frame's time from the start; nil takes the frame `representativeFraction`
        /// of the duration in (the first frame where the duration is unknown or that frame is not found).
        public init(input path: String, at asked: Double? = nil, gpu: GPUSelection = .auto) throws {
            // Checked here as well as by the commands.
            if let asked { try Session.checkTime(asked) }
            self.path = path
            if ImageIO.isImagePath(path) {
                let image = try ImageIO.read(path)
                gl = try GLContext(selection: gpu)
                still = image
                planar = nil
                time = nil
                width = image.width
                height = image.height
                sampleAspect = 1
                frameSize = (Int32(image.width), Int32(image.height))
                working = AV_PIX_FMT_YUV420P
                rotation = .none
                color = YUVColorSpace(matrix: .bt709, fullRange: false)
                renderer = gl.renderer
                input = nil
                duration = nil
                frameRate = nil
                return
            }
            var input = try VideoSource(path: path, threads: 0)
            let seconds = asked ?? Preview.representativeTime(duration: input.durationSeconds)
            var found = try decodeFrame(input, at: seconds)
            if found == nil && asked == nil && seconds > 0 {
                // A duration longer than the frames (a container that overstates it): the first frame.
                input = try VideoSource(path: path, threads: 0)
                found = try decodeFrame(input, at: 0)
            }
            guard let frame = found else {
                let length = input.durationSeconds.map { " (the video is \(roundedSeconds($0, places: 2)) s long)" } ?? ""
                throw GPUEncodeError(.usage, path: path, "no video frame at or after \(seconds) s\(length)")
            }
            let dec = input.decoder.pointee
            var (working, color) = VideoSource.workingFormat(for: frame.frame.pixelFormat, colorspace: dec.colorspace,
                                                            range: dec.color_range, width: Int(dec.width), height: Int(dec.height))
            // HDR and wide gamut are shown as SDR BT.709, tone-mapped as a transcode's defaults do.
            (color.transfer, color.primaries) = VideoSource.colorDescription(trc: dec.color_trc, primaries: dec.color_primaries)
            if color.transfer.isHDR { color.hdr = input.hdrMetadata }
            let geometry = RenderGeometry(width: frame.frame.width, height: frame.frame.height, format: working,
                                          rotation: input.rotation)
            try PictureSize.check(geometry, input: path, limit: .picture)
            planar = try input.convert(frame.frame, to: working, width: geometry.sourceWidth, height: geometry.sourceHeight)
            dolbyVision = Session.applicable(frame.frame.dolbyVisionRPU)
            if input.dolbyVision != nil || frame.frame.dolbyVisionRPU != nil {
                baseLayer = DolbyVisionBaseLayer(config: input.dolbyVision, rpu: frame.frame.dolbyVisionRPU)
            }
            self.working = working
            self.color = color
            rotation = input.rotation
            frameSize = (frame.frame.width, frame.frame.height)
            width = geometry.uprightWidth
            height = geometry.uprightHeight
            // As a transcode reads it (OutputScale): the stream's, else the decoder's.
            let stream = input.videoStream.pointee
            let sar = stream.sample_aspect_ratio.num > 0 ? stream.sample_aspect_ratio : dec.sample_aspect_ratio
            let aspect = sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
            sampleAspect = input.rotation.swapsDimensions ? 1 / aspect : aspect
            time = frame.time
            atEnd = frame.last
            positioned = true
            still = nil
            self.input = input
            duration = input.durationSeconds
            let rate = input.videoStream.pointee.avg_frame_rate
            frameRate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : nil
            gl = try GLContext(selection: gpu)
            renderer = gl.renderer
        }

        /// Moves to the first frame at or after `seconds` (the last frame when `seconds` is past
        /// it); returns its time. Stepping forward a little decodes on from the frame shown, so
        /// frame-by-frame stepping and playback do not seek back to a keyframe each time. A still
        /// image stays as it is (nil). A move that fails leaves the frame shown as it was, and the
        /// next move seeks afresh (a failure never sticks to the session).
        @discardableResult
        public func show(at seconds: Double) throws -> Double? {
            guard input != nil, let shown = time else { return nil }
            try Session.checkTime(seconds)
            let step = frameRate.map { 1 / $0 } ?? 0.04
            // Asked for the frame shown (a re-render after a change): nothing to decode.
            if abs(seconds - shown) < step / 2 { return shown }
            // The last frame is shown: every later time (the scrubber's end is the duration) shows it.
            if atEnd && seconds > shown { return shown }
            let ahead = positioned && seconds > shown && seconds - shown < Session.decodeAheadSeconds
            positioned = false
            atEnd = false
            let found: (frame: Frame, time: Double, last: Bool)
            if ahead {
                guard let next = try Preview.decodeFrame(input!, at: seconds, seeking: false, keepingLast: true) else {
                    // Nothing after the frame shown: it is the last.
                    positioned = true
                    atEnd = true
                    return shown
                }
                found = next
            } else {
                found = try seekAndDecode(seconds)
            }
            // A mid-stream change of size (rare; a transcode scales it) keeps the frame shown.
            guard found.frame.width == frameSize.width, found.frame.height == frameSize.height else { return shown }
            let g = RenderGeometry(width: frameSize.width, height: frameSize.height, format: working, rotation: rotation)
            planar = try input!.convert(found.frame, to: working, width: g.sourceWidth, height: g.sourceHeight)
            dolbyVision = Session.applicable(found.frame.dolbyVisionRPU)
            time = found.time
            positioned = true
            atEnd = found.last
            return found.time
        }

        /// Seeks (back to a keyframe) and decodes on to the first frame at or after `seconds`, or to
        /// the last frame when the video ends before it. Where the demuxer cannot seek there, or the
        /// seek lands where nothing decodes, the movie is opened again and decoded from the start.
        private func seekAndDecode(_ seconds: Double) throws -> (frame: Frame, time: Double, last: Bool) {
            if try input!.seek(toSeconds: seconds),
               let found = try Preview.decodeFrame(input!, at: seconds, seeking: false, keepingLast: true) {
                return found
            }
            input = try VideoSource(path: path, threads: 0)
            if let found = try Preview.decodeFrame(input!, at: seconds, seeking: false, keepingLast: true) { return found }
            throw GPUEncodeError(.inputDecode, path: path, "no video frame could be decoded")
        }

        /// `rpu` when the renderer applies it (DolbyVisionPlan's conditions), else nil.
        static func applicable(_ rpu: DolbyVisionRPU?) -> DolbyVisionRPU? {
            guard let rpu, !rpu.needsResidual, DolbyVisionReshape.fits(rpu) else { return nil }
            return rpu
        }

        /// A time a frame may be asked for: the seek converts it to an Int64, which traps on NaN,
        /// infinity or anything past 292,000 years.
        static func checkTime(_ seconds: Double) throws {
            guard Preview.timeRange.contains(seconds) else {
                throw GPUEncodeError(.usage, "the time \(formatNumber(seconds)) s must be from 0 to \(formatNumber(Preview.timeRange.upperBound)) s")
            }
        }

        /// How far ahead `show(at:)` decodes on rather than seeking (seconds): about a GOP of phone video.
        static let decodeAheadSeconds = 2.0

        /// The size `filters` make of the picture.
        public func outputSize(of filters: [FilterInstance]) -> (width: Int, height: Int) {
            let g = still != nil
                ? RenderGeometry(sourceWidth: width, sourceHeight: height, chromaShiftX: 0, chromaShiftY: 0, rotation: .none, filters: filters)
                : RenderGeometry(width: frameSize.width, height: frameSize.height, format: working, rotation: rotation, filters: filters)
            return (g.outputWidth, g.outputHeight)
        }

        /// The picture through `filters`, at the frame's time (keyframes evaluated there).
        /// `light`: the preset's (video frames only; a still picture is filtered in gamma light).
        /// `toneMapping`: how an HDR frame becomes SDR (a transcode's defaults unless given);
        /// `dolbyVision`: whether a Dolby Vision frame's RPU is applied (as a transcode's default) or
        /// its base layer shown.
        public func render(_ filters: [FilterInstance], light: FilterLight = .gamma, toneMapping: ToneMapping = ToneMapping(),
                           dolbyVision mode: DolbyVisionMode = .apply) throws -> RGBAImage {
            _ = gl
            defer { renders += 1 }
            if let still {
                let renderer = try ImageRenderer(width: still.width, height: still.height, filters: filters)
                return try renderer.render(still, frameIndex: renders)
            }
            let geometry = RenderGeometry(width: frameSize.width, height: frameSize.height, format: working, rotation: rotation, filters: filters)
            try baseLayer?.check(mode: mode, keep: false, applicable: self.dolbyVision != nil, path: path)
            let dolbyVision = mode == .apply ? self.dolbyVision : nil
            let renderer = try FrameRenderer(geometry: geometry, source: dolbyVision.map { $0.colorSpace(base: color) } ?? color, filters: filters,
                                             path: .viaRGBA, light: light, toneMapping: toneMapping,
                                             dolbyVision: dolbyVision.map { _ in DolbyVisionReshape(sourceBits: geometry.bitDepth) })
            if let dolbyVision { renderer.setDolbyVision(dolbyVision) }
            return try renderer.renderRGBA(source: planar!.planes, time: time ?? 0)
        }
    }

    /// The files a preset reads, for `preview --watch`: the preset file itself (unless built in)
    /// and every file its filters name (LUTs, pictures, custom shader files), resolved beside it.
    public static func files(of preset: Preset) -> [String] {
        var files: [String] = preset.origin.hasPrefix("builtin:") ? [] : [preset.origin]
        func visit(_ f: FilterInstance) {
            if f.context.builtin { return }
            for p in f.declaration.parameters {
                if case .file = p.type, case .string(let path) = f[p.name], !path.isEmpty { files.append(f.context.resolve(path)) }
            }
            // A custom shader read from a file is named in its summary ("custom shader FILE").
            if f.declaration.category == .custom, f.declaration.summary.hasPrefix("custom shader ") {
                let name = String(f.declaration.summary.dropFirst("custom shader ".count))
                if name != "(inline)" { files.append(f.context.resolve(name)) }
            }
            f.overlay.forEach(visit)
        }
        preset.filters.forEach(visit)
        var seen: Set<String> = []
        return files.filter { seen.insert($0).inserted }
    }

    /// The first frame shown at or after `seconds` from the start of the media (by the frame's own
    /// timestamp; one without is taken as the frame asked for).
    /// `seeking` false decodes on from where the source is (a later frame than the one last decoded);
    /// nil when it gives no frame (it was at the end). `keepingLast`: when the video ends before
    /// `seconds`, its last frame (`last` true) rather than nil.
    static func decodeFrame(_ input: VideoSource, at seconds: Double, seeking: Bool = true,
                            keepingLast: Bool = false) throws -> (frame: Frame, time: Double, last: Bool)? {
        let stream = input.videoStream
        let tb = input.timeBase
        let start = input.startSeconds
        if seeking && seconds > 0 { try input.seek(toSeconds: seconds) }
        // Half a frame of slack, so asking for a frame's own time (rounded) finds it.
        let slack = stream.pointee.avg_frame_rate.num > 0 ? 0.5 / av_q2d(stream.pointee.avg_frame_rate) : 0.001
        var decodedAny = false
        var last: (frame: Frame, time: Double)?
        while let frame = try input.nextFrame() {
            decodedAny = true
            let ts = frame.bestEffortTimestamp
            let t = ts == AV_NOPTS ? seconds : Double(ts) * av_q2d(tb) - start
            if t + slack >= seconds { return (frame, max(0, t), false) }
            if keepingLast { last = (frame, max(0, t)) }
        }
        if let last { return (last.frame, last.time, true) }
        // Not one frame decoded from a fresh position: the data is at fault (as in a transcode), not
        // the time asked for.
        if !decodedAny && seeking { throw GPUEncodeError(.inputDecode, path: input.path, "no video frame could be decoded") }
        return nil
    }
}
