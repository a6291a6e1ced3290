/// A chain of identity filters only, or none, leaves the picture as it is: its filters go, and
/// the picture is carried unclamped (half-float intermediates on the chain paths), so Y'CbCr
/// outside the R'G'B' cube comes back as it went in. Required: it is what the reference does.
public struct DropIdentity: GraphPass {
    public let name = "drop identity filters"
    public let isOptional = false
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        let filters = graph.filterIndices.map { graph.nodes[$0].filter! }
        guard FrameRenderer.isTransparent(filters, light: job.light) else { return }
        graph.transparent = true
        graph.nodes.removeAll { $0.filter != nil }
        graph.notes.append("transparent: no filter changes the picture, so R'G'B' are not clamped")
    }
}
