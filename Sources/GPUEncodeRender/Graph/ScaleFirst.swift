import GPUEncodeCore
import GPUEncodeFilters

/// Scale first: whether the output scaler (`--width`, `--height`, `--size`: `ScaleFilter`'s two
/// Lanczos passes, appended after the preset) moves ahead of the preset's filters and runs in
/// swscale on the decoded frame, before the upload. A pure decision from the chain and the run's
/// facts; the pipeline carries it out (the frames delivered at the scaled size, the scaler's
/// passes dropped from the chain).
///
/// Why, and only where: on a software renderer (llvmpipe) every pass is CPU time, and a downscale
/// at the end of the chain makes the filters run on every source pixel and then a GLSL Lanczos
/// read them all again; swscale's Lanczos (ffmpeg's `scale=flags=lanczos`) on 8-bit planes is
/// several times cheaper, and the filters then shade the smaller picture. It moves only what a
/// resize commutes with: filters that are a function of the pixel's colour alone
/// (`FilterDeclaration.isPositionFree`), in gamma light, on 8- and 10-bit SDR sources, for a downscale.
public struct ScaleFirst: Sendable, Equatable, CustomStringConvertible {
    /// Why the scaler stays at the end of the chain (today's plan).
    public enum Stay: Sendable, Equatable {
        /// `--no-optimize`: the reference plan moves nothing.
        case reference
        /// The chain does not end in the output scaler (no size asked for).
        case noOutputScale
        /// Not smaller both ways: scaling first would make the filters shade more pixels, and the
        /// GPU's Lanczos is the one that enlarges.
        case notDownscale
        /// A hardware GPU: its Lanczos costs next to nothing and the full-size upload is DMA, while
        /// swscale would take CPU time the decoder and the encoder need.
        case hardwareRenderer
        /// Sources deeper than 10 bits keep the GPU's float Lanczos (none measured with swscale).
        /// 10-bit SDR moves: swscale keeps it 10-bit (yuv420p10le to yuv420p10le), at about the
        /// cost of 8-bit (2.5 against 2.2 ms a 1080p frame), 50-58 dB luma from today's plan.
        case deepSource
        /// HDR (tone-mapped or kept): tone mapping is far from linear, and peak detection measures
        /// the full-size picture.
        case hdr
        /// Deinterlacing runs on the fields of the full-size frame; a scale before it mixes them.
        /// (A stream not tagged interlaced, deinterlaced only from a first flagged frame on, is
        /// taken as progressive: should flagged frames come, they are deinterlaced after the scale,
        /// as ffmpeg's `scale` before `bwdif` would.)
        case deinterlace
        /// A coded size that is odd: the renderer crops the upright picture to even first, and
        /// which edge it loses depends on the rotation.
        case oddSource
        /// A preset in linear light: its scaler runs on linear RGB, swscale's on gamma Y'CbCr.
        case linearLight
        /// The named filter reads more than its pixel's colour (a sampling or blend filter, the
        /// average, or a point filter that reads its position or the picture's size).
        case notPointwise(String)
    }

    public enum Decision: Sendable, Equatable {
        /// The frames are scaled in swscale (Lanczos) before the upload; the scaler's passes are dropped.
        case swscaleBeforeUpload
        case stays(Stay)
    }

    public let decision: Decision
    /// The upright picture before the scale (what the preset starts from) and the size asked for.
    public let from: (width: Int, height: Int)
    public let to: (width: Int, height: Int)
    /// The filters the scale moves ahead of, by name.
    public let ahead: [String]
    /// The coded size the source is scaled to: `to`, turned back when the rotation swaps sizes
    /// (the frame is scaled as coded and turned upright on the GPU, as before).
    public let coded: (width: Int, height: Int)

    /// The facts of a run the decision reads.
    public struct Facts: Sendable {
        /// The decoded picture as coded, and how it is turned upright.
        public var sourceWidth: Int
        public var sourceHeight: Int
        public var rotation: Rotation
        public var bitDepth: Int
        /// `GLContext.isSoftware` of the renderer the run will use.
        public var softwareRenderer: Bool
        public var hdr = false
        /// A stream tagged interlaced, or `--deinterlace frame|field`.
        public var deinterlace = false
        public var light = FilterLight.gamma

        public init(sourceWidth: Int, sourceHeight: Int, rotation: Rotation, bitDepth: Int, softwareRenderer: Bool) {
            self.sourceWidth = sourceWidth
            self.sourceHeight = sourceHeight
            self.rotation = rotation
            self.bitDepth = bitDepth
            self.softwareRenderer = softwareRenderer
        }
    }

    /// `filters`: the whole chain, the output scaler's passes last when a size was asked for.
    public init(filters: [FilterInstance], facts f: Facts, options: CompileOptions) {
        let endsInScale = FrameRenderer.endsInOutputScale(filters)
        let before = endsInScale ? Array(filters.dropLast(2)) : filters
        ahead = before.map(\.declaration.name)
        let upright = f.rotation.swapsDimensions ? (f.sourceHeight, f.sourceWidth) : (f.sourceWidth, f.sourceHeight)
        from = upright
        let target = endsInScale ? (Int(filters[filters.count - 2].double("size")), Int(filters[filters.count - 1].double("size"))) : upright
        to = target
        coded = f.rotation.swapsDimensions ? (target.1, target.0) : target
        decision = ScaleFirst.decide(before: before, endsInScale: endsInScale, from: upright, to: target, facts: f, options: options)
    }

    private static func decide(before: [FilterInstance], endsInScale: Bool, from: (Int, Int), to: (Int, Int), facts f: Facts,
                               options: CompileOptions) -> Decision {
        guard options.optionalPasses else { return .stays(.reference) }
        guard endsInScale else { return .stays(.noOutputScale) }
        guard to.0 <= from.0 && to.1 <= from.1 && (to.0 < from.0 || to.1 < from.1) else { return .stays(.notDownscale) }
        guard f.softwareRenderer else { return .stays(.hardwareRenderer) }
        guard f.bitDepth <= 10 else { return .stays(.deepSource) }
        guard !f.hdr else { return .stays(.hdr) }
        guard !f.deinterlace else { return .stays(.deinterlace) }
        guard f.sourceWidth % 2 == 0 && f.sourceHeight % 2 == 0 else { return .stays(.oddSource) }
        guard f.light == .gamma else { return .stays(.linearLight) }
        if let other = before.first(where: { !$0.isPositionFreePoint }) { return .stays(.notPointwise(other.declaration.name)) }
        return .swscaleBeforeUpload
    }

    public var movesScale: Bool { decision == .swscaleBeforeUpload }

    /// The chain the GPU runs: without the scaler's passes when the scale moves, else `filters` as given.
    public func gpuFilters(_ filters: [FilterInstance]) -> [FilterInstance] {
        movesScale ? Array(filters.dropLast(2)) : filters
    }

    public static func == (a: ScaleFirst, b: ScaleFirst) -> Bool {
        a.decision == b.decision && a.from == b.from && a.to == b.to && a.ahead == b.ahead && a.coded == b.coded
    }

    /// One line for `-v`: where the scale runs and why.
    public var description: String {
        let size = "\(from.width)x\(from.height) -> \(to.width)x\(to.height)"
        let names = ahead.isEmpty ? "" : ", ahead of \(ahead.joined(separator: ", "))"
        switch decision {
        case .swscaleBeforeUpload:
            return "scale first: \(size) in swscale (lanczos) before the upload\(names)"
        case .stays(.noOutputScale):
            return "scale first: no output scale"
        case .stays(let why):
            return "scale first: no, \(size) on the GPU (Lanczos-3) after the preset: \(ScaleFirst.reason(why))"
        }
    }

    private static func reason(_ why: Stay) -> String {
        switch why {
        case .reference: return "--no-optimize"
        case .noOutputScale: return "no output scale"
        case .notDownscale: return "not a downscale"
        case .hardwareRenderer: return "hardware GPU"
        case .deepSource: return "source deeper than 10 bits"
        case .hdr: return "HDR"
        case .deinterlace: return "deinterlacing"
        case .oddSource: return "odd coded size"
        case .linearLight: return "linear light"
        case .notPointwise(let name): return "\(name) is not a function of the pixel's colour alone"
        }
    }
}
