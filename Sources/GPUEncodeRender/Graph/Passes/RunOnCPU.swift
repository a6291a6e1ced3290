import GPUEncodeFilters

/// The plane-native pass on the CPU: where the whole plan is the plane-native block pass
/// (`ChoosePlanes`) over a chain of affine colour filters (each declares its `ColourAffine`), an
/// 8-bit SDR BT.709/601 source and an 8-bit output, the same arithmetic runs in the CPU's vector
/// units (`AffinePlaneKernel`) from the decoded planes to the encoder's, and the renderer uploads,
/// draws and reads back nothing. Chosen by the cost model: a software rasteriser pays per
/// fragment and fetch for what the kernel does in a few vector instructions, so on llvmpipe the
/// kernel wins; a GPU draws the pass for next to nothing, so there it never does.
/// Keyframed values are fine (the maps are rebuilt for each frame's time).
public struct RunOnCPU: GraphPass {
    public let name = "run on the CPU"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        guard let reason = RunOnCPU.refusal(graph, job: job) else {
            graph.execution = .cpuPlanes
            graph.notes.append("on the CPU: \(RunOnCPU.costs(graph, job: job).map(RunOnCPU.describe) ?? "")")
            return
        }
        if graph.execution == .planeNativeBlocks { graph.notes.append("on the CPU: no, \(reason)") }
    }

    /// Why the plan stays on the renderer, or nil when it moves to the CPU.
    static func refusal(_ graph: RenderGraph, job: RenderJob) -> String? {
        guard graph.execution == .planeNativeBlocks else { return "not the plane-native block pass" }
        guard job.cpuKernels else { return "kept on the renderer (frames on the GPU, or asked for)" }
        guard job.light == .gamma else { return "the preset works in linear light" }
        guard job.sourceColor.isIdentity, !job.keepsSignal, !job.dolbyVision else { return "the source is not SDR BT.709/601" }
        guard job.geometry.bitDepth == 8, !job.precise else { return "the source is deeper than 8 bits" }
        let filters = graph.renderedFilters
        if let other = filters.first(where: { $0.affine(at: 0) == nil }) {
            return "\(other.declaration.name) is not an affine colour map"
        }
        guard let (host, renderer) = costs(graph, job: job) else { return "this CPU cannot run the kernels (AVX2 and FMA)" }
        guard host < renderer else { return describe((host, renderer)) }
        return nil
    }

    /// The kernel's cost against the renderer's plane-native pass (ns a frame); nil where the CPU
    /// cannot run the kernel. The renderer's: 4x2 blocks of 12 fetches and 10 chain evaluations
    /// (the source's matrix and the output's rows, 24 instructions, and 12 a filter), and the
    /// frame's planes up and back; the kernel's: 1.25 evaluations a pixel.
    static func costs(_ graph: RenderGraph, job: RenderJob) -> (host: Double, renderer: Double)? {
        let (w, h) = (job.geometry.sourceWidth, job.geometry.sourceHeight)
        let filters = graph.renderedFilters.count
        guard let host = job.cost.host(evaluations: w * h * 5 / 4, filters: filters) else { return nil }
        let renderer = job.cost.pass(fragments: (w + 3) / 4 * (h / 2), fetches: 12, instructions: 10 * (24 + 12 * filters))
            + 2 * Double(w * h * 3 / 2) * job.cost.perTransferByte
        return (host, renderer)
    }

    static func describe(_ c: (host: Double, renderer: Double)) -> String {
        "estimated \(milliseconds(c.host)) ms a frame on the CPU against \(milliseconds(c.renderer)) on the renderer"
    }

    private static func milliseconds(_ ns: Double) -> String { String(format: "%.2f", ns / 1e6) }
}
