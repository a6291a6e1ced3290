/// Says how the programs reach the output planes. A chain of point filters that fits one shader
/// goes straight from the source planes to the output planes, fused: upright 4:2:0 in one pass of
/// 4x2 blocks, other layouts (rotated, 4:2:2, 4:4:4) as a luma and a chroma pass. A chain with
/// sampling filters, one too big for one shader, or a path asked for (`--render-path`) goes
/// through RGBA textures.
public struct ChooseExecution: GraphPass {
    public let name = "choose execution"
    public let isOptional = false
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        var limits = job.limits
        limits.uniformVectors -= job.reservedUniformVectors
        // Decided on the preset's filters as given (identity included): a transparent chain runs
        // where its filters would have run.
        let fused = FrameRenderer.usesFusedPass(job.filters, path: job.path, limits: limits)
        graph.execution = !fused ? .chain : FrameRenderer.isUpright420(job.geometry) ? .packedBlocks : .lumaAndChroma
    }
}
