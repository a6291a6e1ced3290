import GPUEncodeCore
import GPUEncodeFilters

/// What the renderer is asked to do for a whole run: the picture's geometry and colour, the
/// preset's filters (the output scale appended as its two Lanczos passes), how HDR becomes SDR,
/// and the GPU it runs on. The compiler turns it into a `RenderGraph` and the graph into a plan.
public struct RenderJob: Sendable {
    public var geometry: RenderGeometry
    public var source: YUVColorSpace
    public var filters: [FilterInstance]
    public var path: RenderPath
    public var light: FilterLight
    public var toneMapping: ToneMapping
    /// `--hdr keep`: 10-bit output through the source's own matrix, no tone mapping.
    public var keepsSignal: Bool
    public var dolbyVision: Bool
    public var limits: GPULimits
    public var cost: CostModel
    /// Uniform vectors the fused shader gives to things beside the filters (Dolby Vision's).
    public var reservedUniformVectors: Int
    /// Scale first, as the pipeline decided it before the upload (it changes what is uploaded, so it
    /// cannot wait for the renderer): when the scale moved, `geometry` is already the scaled source
    /// and `filters` are without the scaler.
    public var scaleFirst: ScaleFirst?
    /// The plan may run on the CPU kernels (with `CompileOptions.cpuKernels`, which the compiler applies).
    public var cpuKernels = true

    public init(geometry: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath = .direct,
                light: FilterLight = .gamma, toneMapping: ToneMapping = ToneMapping(), keepsSignal: Bool = false,
                dolbyVision: Bool = false, limits: GPULimits, cost: CostModel, reservedUniformVectors: Int = 0,
                scaleFirst: ScaleFirst? = nil) {
        self.geometry = geometry
        self.source = source
        self.filters = filters
        self.path = path
        self.light = light
        self.toneMapping = toneMapping
        self.keepsSignal = keepsSignal
        self.dolbyVision = dolbyVision && !keepsSignal
        self.limits = limits
        self.cost = cost
        self.reservedUniformVectors = reservedUniformVectors
        self.scaleFirst = scaleFirst
    }

    /// Deep sources, linear light and kept HDR filter in half float, without 8-bit rounding between filters.
    public var precise: Bool { geometry.bitDepth > 8 || light == .linear || keepsSignal }

    /// The source's colour conversion as the shaders make it (`SourceColorShader`).
    var sourceColor: SourceColorShader {
        SourceColorShader(color: source, toneMapping: toneMapping, keepsSignal: keepsSignal)
    }
}

/// How the programs of a plan reach the output planes.
public enum RenderExecution: Sendable, Equatable, CustomStringConvertible {
    /// One fused pass from the source planes to NV12, a 4x2 block per fragment (upright 4:2:0).
    case packedBlocks
    /// `packedBlocks` with the chain evaluated once per luma pixel and once per chroma sample.
    case planeNativeBlocks
    /// A fused luma pass (four pixels per fragment) and a fused chroma pass at chroma resolution.
    case lumaAndChroma
    /// The chain through RGBA textures (sampling filters, or a path asked for), then a conversion.
    case chain
    /// A large Gaussian blur alone, on the Y'CbCr planes at a quarter of the pixels (`PlaneBlur`).
    case planeBlur(sigma: Double, radius: Int)
    /// `planeNativeBlocks`' arithmetic on the CPU, from the decoded planes to the encoder's,
    /// without GL (`PlaneNativeKernel`: chains of affine colour filters).
    case cpuPlanes
    /// `packedBlocks`' arithmetic on the CPU, without GL (`ReferenceBlockKernel`: chains of affine
    /// colour filters and channel tables).
    case cpuBlocks
    /// `planeBlur`'s arithmetic on the CPU, without GL (`GridBlurKernel`), its grid kept in single
    /// precision.
    case cpuPlaneBlur(sigma: Double, radius: Int)

    /// The plan runs on the CPU kernels.
    public var runsOnCPU: Bool {
        switch self {
        case .cpuPlanes, .cpuBlocks, .cpuPlaneBlur: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .packedBlocks: return "one fused pass, source planes to NV12 in 4x2 blocks"
        case .planeNativeBlocks: return "one fused pass, source planes to NV12 in 4x2 blocks, plane-native (luma per pixel, chroma per sample)"
        case .lumaAndChroma: return "fused luma and chroma passes, source planes to output planes"
        case .chain: return "the chain through RGBA textures, then to Y'CbCr"
        case .planeBlur(let sigma, _): return "the Gaussian blur (sigma \(sigma)) on the Y'CbCr planes at every 4th pixel, interpolated into NV12"
        case .cpuPlanes: return "on the CPU, plane-native (luma per pixel, chroma per sample), source planes to output planes, no GL"
        case .cpuBlocks: return "on the CPU, the block pass's arithmetic (the chain per pixel, R'G'B' decimated), source planes to output planes, no GL"
        case .cpuPlaneBlur(let sigma, _):
            return "on the CPU, the Gaussian blur (sigma \(sigma)) on the Y'CbCr planes at every 4th pixel, interpolated, source planes to output planes, no GL"
        }
    }
}

/// The job as nodes, in the order the picture goes through them, with what the passes decided
/// about the whole: how it executes, the program lines, and what each pass did.
public struct RenderGraph: Sendable, CustomStringConvertible {
    public var nodes: [RenderNode]
    /// Set by `ChooseExecution`.
    public var execution: RenderExecution?
    /// Whether the programs read the source planes packed, four samples a texel (the block passes).
    public var readsPacked: Bool {
        switch execution {
        case .packedBlocks, .planeNativeBlocks, .planeBlur: return true
        default: return false
        }
    }
    /// A run of point colour nodes is baked into a table (`BakeColour`).
    public var bakesColour: Bool { nodes.contains { if case .bakedColour = $0.kind { return true } else { return false } } }
    /// No filter changes the picture (`DropIdentity`): R'G'B' are carried unclamped.
    public var transparent = false
    /// The scale runs on the source's Y'CbCr codes, the matrix changed once at the end (`InsertConversions`).
    public var scalesYCbCr = false
    /// One line per program, set by `FuseIntoPrograms` (what `-v` prints).
    public var programs: [String] = []
    /// What passes decided beside the nodes, one line each (shown with the graph).
    public var notes: [String] = []

    public init(nodes: [RenderNode]) {
        self.nodes = nodes
    }

    /// The first graph of a job: the source, its rotation, the preset's filters, the scale and
    /// the output; conversions come from `InsertConversions`.
    public init(job: RenderJob) {
        let g = job.geometry
        let chroma = g.chromaShiftX == 1 && g.chromaShiftY == 1 ? "4:2:0" : g.chromaShiftX == 1 ? "4:2:2" : "4:4:4"
        var nodes = [RenderNode(.source(width: g.sourceWidth, height: g.sourceHeight, bitDepth: g.bitDepth, chroma: chroma))]
        if g.rotation != .none { nodes.append(RenderNode(.rotate(g.rotation))) }
        var filters = job.filters
        var scale: RenderNode?
        if FrameRenderer.endsInOutputScale(filters) {
            scale = RenderNode(.scale(width: g.outputWidth, height: g.outputHeight, site: .gpu, passes: Array(filters.suffix(2))))
            filters.removeLast(2)
        }
        nodes += filters.enumerated().map { RenderNode(.filter(index: $0, $1)) }
        if let scale { nodes.append(scale) }
        nodes.append(RenderNode(.output(job.keepsSignal ? "10-bit Y'CbCr 4:2:0, the source's matrix" : "8-bit Y'CbCr 4:2:0, BT.709 limited range")))
        self.nodes = nodes
    }

    /// The preset's filters still in the graph, in order, with the output scale's two passes
    /// where a GPU scale node stands: what the programs render.
    public var renderedFilters: [FilterInstance] {
        nodes.flatMap { node -> [FilterInstance] in
            switch node.kind {
            case .filter(_, let f): return [f]
            case .bakedColour(_, _, let filters): return filters
            case .scale(_, _, .gpu, let passes): return passes
            default: return []
            }
        }
    }

    public var description: String {
        var lines = nodes.enumerated().map { "  \($0 + 1). \($1)" }
        if let execution { lines.append("  execution: \(execution)") }
        lines += programs.map { "  " + $0 }
        lines += notes.map { "  note: " + $0 }
        return lines.joined(separator: "\n")
    }
}
