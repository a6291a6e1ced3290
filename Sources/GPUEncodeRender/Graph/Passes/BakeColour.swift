/// Baked colour: the run of point colour nodes a fused pass evaluates per pixel (the source's
/// transfer, gamut and tone mapping, then the preset's point filters) becomes one 3D table indexed
/// by the source's R'G'B' (after its own matrix and clamp), drawn through the same GLSL it replaces
/// and looked up by the texture unit (`BakedColour`). Only runs that depend on the colour alone
/// bake (no position, time, frame measurement or other picture); keyframed values bake again
/// when they change. Chosen when the lookup costs less than the chain on this renderer
/// (`BakedColour.shouldBake`: llvmpipe pays per instruction and per fetch, so sepia's few
/// multiply-adds stay, 1977's hue, curves and blend bake); its size (17, 33 or 65 a side) is the
/// smallest within the error bound, measured on the GPU when the renderer bakes it, and no size
/// within the bound leaves the exact chain.
public struct BakeColour: GraphPass {
    public let name = "bake colour"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        guard let execution = graph.execution, [.packedBlocks, .planeNativeBlocks, .lumaAndChroma].contains(execution),
              !job.dolbyVision else { return }
        var color = job.sourceColor
        color.clamped = !graph.transparent
        guard color.clamped || !(color.isIdentity || color.keepsSignal) else { return }
        let filters = graph.renderedFilters
        guard BakedColour.isPositionIndependent(filters, color: color) else { return }
        let sampling = SourceSampling(bits: job.geometry.bitDepth)
        let exact = FrameRenderer.prelude(filters, color: color, roundTo8Bits: !job.precise, sampling: sampling)
        let input: BakedColour.Input = .rgb(color.signalMax)
        guard BakedColour.shouldBake(exact: exact, baked: BakedColour.lookupPrelude(bits: job.geometry.bitDepth, input: input, interpolation: .trilinear)) else {
            return
        }
        // The nodes the table replaces: from the source colour conversion (or the first filter)
        // to the last point filter.
        let run = graph.nodes.indices.filter { i in
            switch graph.nodes[i].kind {
            case .sourceColour, .linearLight, .filter: return true
            default: return false
            }
        }
        guard let first = run.first, let last = run.last else { return }
        let names = graph.nodes[first...last].map { node in node.filter?.declaration.name ?? (node.isPointwise ? "source colour" : "") }
        graph.nodes.replaceSubrange(first...last, with: [RenderNode(.bakedColour(size: 0, of: names.filter { !$0.isEmpty }, filters: filters))])
    }
}
