import GPUEncodeFilters

/// The block pass on the CPU: where the whole plan is one fused block pass (upright 4:2:0) over a
/// chain of point filters the CPU kernels can run (each declares an affine map of R'G'B',
/// `ColourAffine`, or a table per channel, `ChannelTables`), for an 8-bit SDR BT.709/601 source in
/// gamma light and an 8-bit output, the same arithmetic runs in the CPU's vector units from the
/// decoded planes to the encoder's, and the renderer uploads, draws and reads back nothing: the
/// plane-native pass (`ChoosePlanes`) as `PlaneNativeKernel`, the reference block pass as
/// `ReferenceBlockKernel`. Chosen by the cost model: a software rasteriser pays per fragment and
/// fetch for what a kernel does in a few vector instructions, so on llvmpipe the kernel wins; a
/// GPU draws the pass for next to nothing, so there it never does. Keyframed values are fine (the
/// maps are rebuilt for each frame's time). The plane blur (`BlurOnPlanes`) moves the same way, to
/// `GridBlurKernel`: its jobs are already 8-bit SDR upright 4:2:0 with the source's matrix kept.
public struct RunOnCPU: GraphPass {
    public let name = "run on the CPU"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        if case .planeBlur(let sigma, let radius) = graph.execution {
            if let reason = RunOnCPU.blurRefusal(job: job, sigma: sigma, radius: radius) {
                graph.notes.append("on the CPU: no, \(reason)")
            } else {
                graph.execution = .cpuPlaneBlur(sigma: sigma, radius: radius)
                graph.notes.append("on the CPU: \(RunOnCPU.blurCosts(job: job, sigma: sigma, radius: radius).map(RunOnCPU.describe) ?? "")")
            }
            return
        }
        guard let reason = RunOnCPU.refusal(graph, job: job) else {
            let cost = RunOnCPU.costs(graph, job: job).map(RunOnCPU.describe) ?? ""
            graph.execution = graph.execution == .planeNativeBlocks ? .cpuPlanes : .cpuBlocks
            graph.notes.append("on the CPU: \(cost)")
            return
        }
        if graph.execution == .planeNativeBlocks || graph.execution == .packedBlocks { graph.notes.append("on the CPU: no, \(reason)") }
    }

    /// Whether the CPU kernels can run `filter` (an affine map or channel tables).
    static func runs(_ filter: FilterInstance) -> Bool {
        filter.affine(at: 0) != nil || filter.channelTables != nil
    }

    /// Why the plan stays on the renderer, or nil when it moves to the CPU.
    static func refusal(_ graph: RenderGraph, job: RenderJob) -> String? {
        guard graph.execution == .planeNativeBlocks || graph.execution == .packedBlocks else { return "not a block pass" }
        guard job.cpuKernels else { return "kept on the renderer (frames on the GPU, or asked for)" }
        guard job.light == .gamma else { return "the preset works in linear light" }
        guard job.sourceColor.isIdentity, !job.keepsSignal, !job.dolbyVision else { return "the source is not SDR BT.709/601" }
        guard job.geometry.bitDepth == 8, !job.precise else { return "the source is deeper than 8 bits" }
        guard job.geometry.sourceWidth % 2 == 0, job.geometry.sourceHeight % 2 == 0 else { return "an odd coded size" }
        if let other = graph.renderedFilters.first(where: { !runs($0) }) {
            return "\(other.declaration.name) is neither an affine colour map nor a table per channel"
        }
        guard let (host, renderer) = costs(graph, job: job) else { return "this CPU cannot run the kernels (AVX2 and FMA)" }
        guard host < renderer else { return describe((host, renderer)) }
        return nil
    }

    /// The kernel's cost against the renderer's block pass (ns a frame); nil where the CPU cannot
    /// run the kernels. The renderer's: 4x2 blocks of 12 fetches and 10 chain evaluations
    /// (plane-native) or 18 (the reference), each the source's matrix and the output's rows (24
    /// instructions) and 12 a filter, and the frame's planes up and back. The kernels': 1.25
    /// evaluations a pixel (plane-native) or 1.5 (the reference: every pixel, and two outer rows a
    /// chroma sample).
    static func costs(_ graph: RenderGraph, job: RenderJob) -> (host: Double, renderer: Double)? {
        let (w, h) = (job.geometry.sourceWidth, job.geometry.sourceHeight)
        let filters = graph.renderedFilters.count
        let lookups = graph.renderedFilters.filter { $0.affine(at: 0) == nil }.count
        let planeNative = graph.execution == .planeNativeBlocks
        guard let host = job.cost.host(evaluations: w * h * (planeNative ? 5 : 6) / 4, filters: filters - lookups, lookups: lookups) else { return nil }
        let renderer = job.cost.pass(fragments: (w + 3) / 4 * (h / 2), fetches: 12, instructions: (planeNative ? 10 : 18) * (24 + 12 * filters))
            + 2 * Double(w * h * 3 / 2) * job.cost.perTransferByte
        return (host, renderer)
    }

    /// Why the plane blur stays on the renderer, or nil when it moves to the CPU.
    static func blurRefusal(job: RenderJob, sigma: Double, radius: Int) -> String? {
        guard job.cpuKernels else { return "kept on the renderer (frames on the GPU, or asked for)" }
        guard let (host, renderer) = blurCosts(job: job, sigma: sigma, radius: radius) else { return "this CPU cannot run the kernels (AVX2 and FMA)" }
        guard host < renderer else { return describe((host, renderer)) }
        return nil
    }

    /// The blur kernel's cost against the renderer's four plane-blur passes (ns a frame); nil where
    /// the CPU cannot run the kernels. Both compute the same grid: every 4th row's samples down the
    /// columns (the luma's 2r + 1 taps, the chroma's r + 1 on two planes of a quarter the samples),
    /// every 4th of those across, and each output sample interpolated. The renderer's column passes
    /// fetch once a tap per packed texel; its NV12 pass reads 8 grid texels a 4x2 block and runs the
    /// writer (about 200 instructions).
    static func blurCosts(job: RenderJob, sigma: Double, radius: Int) -> (host: Double, renderer: Double)? {
        let (w, h) = (job.geometry.sourceWidth, job.geometry.sourceHeight)
        let gridWidth = w / PlaneBlur.gridStep + 1, gridHeight = (h - 1) / PlaneBlur.gridStep + 4
        let kernels = PlaneBlur.kernels(sigma: sigma, radius: radius)
        let lumaTaps = 2 * kernels.luma.radius + 1, chromaTaps = 2 * kernels.chroma.radius + 1
        let tapSamples = gridHeight * (w * lumaTaps + w * chromaTaps) + gridHeight * gridWidth * (lumaTaps + 2 * chromaTaps)
        guard let host = job.cost.hostBlur(tapSamples: tapSamples, samples: w * h * 3 / 2) else { return nil }
        let c = job.cost
        let renderer = c.pass(fragments: w / 4 * gridHeight, fetches: lumaTaps, instructions: 2 * lumaTaps)
            + c.pass(fragments: w / 8 * gridHeight, fetches: 2 * chromaTaps, instructions: 4 * chromaTaps)
            + c.pass(fragments: gridWidth * gridHeight, fetches: (lumaTaps + 2 * chromaTaps) / 4 + 3, instructions: 3 * (lumaTaps + 2 * chromaTaps))
            + c.pass(fragments: w / 4 * (h / 2), fetches: 8, instructions: 200)
            + 2 * Double(w * h * 3 / 2) * c.perTransferByte
        return (host, renderer)
    }

    static func describe(_ c: (host: Double, renderer: Double)) -> String {
        "estimated \(milliseconds(c.host)) ms a frame on the CPU against \(milliseconds(c.renderer)) on the renderer"
    }

    private static func milliseconds(_ ns: Double) -> String { String(format: "%.2f", ns / 1e6) }
}
