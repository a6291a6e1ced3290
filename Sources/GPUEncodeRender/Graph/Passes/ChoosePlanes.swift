/// Plane-native point chains: the fused block pass evaluates the chain once per luma pixel and
/// once per chroma sample (the chroma samples from the source's own Cb and Cr and the decimated
/// luma: `PlaneNativeShaders`), 10 evaluations a 4x2 block instead of the reference's 18 (each
/// output chroma sample from the chain at the 20 pixels its kernel covers). Exact for chains
/// affine in R'G'B' up to their clamps; which chains keep to the accuracy bar is
/// `PlaneNativeShaders.applies`. It reads the same texels and writes the same targets with fewer
/// evaluations, so it costs less under either renderer's model (timed: 13.0 against 17.7 CPU ms a
/// 1080p sepia frame on llvmpipe; within the spread of the reference on the H100).
public struct ChoosePlanes: GraphPass {
    public let name = "choose execution planes"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        // An odd coded size's cropped last row and column feed the chroma beside them in the
        // reference's kernel, not in the plane-native one: those stay on the reference.
        guard graph.execution == .packedBlocks, job.geometry.sourceWidth % 2 == 0, job.geometry.sourceHeight % 2 == 0,
              PlaneNativeShaders.applies(graph.renderedFilters, light: job.light, hdr: job.source.transfer.isHDR, upright420: true,
                                         compile: CompileOptions()) else { return }
        graph.execution = .planeNativeBlocks
        graph.notes.append("plane-native: 10 chain evaluations a 4x2 block instead of 18")
    }
}
