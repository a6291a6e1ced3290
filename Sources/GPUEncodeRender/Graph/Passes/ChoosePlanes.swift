/// Plane-native point chains: the fused block pass evaluates the chain once per luma pixel and
/// once per chroma sample (the chroma samples from the source's own Cb and Cr and the decimated
/// luma: `PlaneNativeShaders`), 10 evaluations a 4x2 block instead of the reference's 18 (each
/// output chroma sample from the chain at the 20 pixels its kernel covers). Exact for chains
/// affine in R'G'B' up to their clamps; which chains keep to the accuracy bar is
/// `PlaneNativeShaders.applies`. Chosen when the job's cost model says the block costs less: the
/// same fetches and targets, fewer chain evaluations.
public struct ChoosePlanes: GraphPass {
    public let name = "choose execution planes"
    public let isOptional = true
    public init() {}

    /// Arithmetic of one chain evaluation: the source conversion and about 20 instructions a filter
    /// (rough; it only has to rank the two plans).
    static func evaluation(_ graph: RenderGraph) -> Int { 30 + 20 * graph.renderedFilters.count }

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        // An odd coded size's cropped last row and column feed the chroma beside them in the
        // reference's kernel, not in the plane-native one: those stay on the reference.
        guard graph.execution == .packedBlocks, job.geometry.sourceWidth % 2 == 0, job.geometry.sourceHeight % 2 == 0,
              PlaneNativeShaders.applies(graph.renderedFilters, light: job.light, hdr: job.source.transfer.isHDR, upright420: true,
                                         compile: CompileOptions()) else { return }
        let blocks = (job.geometry.outputWidth / 4) * (job.geometry.outputHeight / 2)
        let reference = job.cost.pass(fragments: blocks, fetches: 24, instructions: 18 * ChoosePlanes.evaluation(graph))
        let planes = job.cost.pass(fragments: blocks, fetches: 24, instructions: 10 * ChoosePlanes.evaluation(graph))
        guard planes < reference else { return }
        graph.execution = .planeNativeBlocks
        graph.notes.append("plane-native: 10 chain evaluations a 4x2 block instead of 18 (\(Int(planes / 1000)) µs against \(Int(reference / 1000)) µs a frame, \(job.cost.renderer.rawValue) cost model)")
    }
}
