/// Scale first: a downscale moves ahead of the point filters before it, so they run on fewer
/// pixels. It never crosses a sampling filter (a blur's sigma is in pixels of the picture it runs
/// on). On a software renderer the moved scale runs in swscale (Lanczos, ffmpeg's
/// `flags=lanczos`) on the decoded frame, before the upload; on a GPU it stays on the GPU
/// (`ScaleFirst` says why). That choice changes what is uploaded, so the pipeline makes it with
/// `ScaleFirst` before the renderer exists and hands it over in the job; this pass puts it in the
/// graph: the moved scale as a node ahead of the filters, or a note saying why it stayed.
public struct ScaleFirstPass: GraphPass {
    public let name = "scale first"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        guard let first = job.scaleFirst else { return }
        guard first.movesScale else {
            if graph.scaleIndex != nil { graph.notes.append(first.description) }
            return
        }
        let node = RenderNode(.scale(width: first.to.width, height: first.to.height, site: .swscale, passes: []))
        // Right after the source: swscale scales the frame as coded, before it is turned upright.
        graph.nodes.insert(node, at: 1)
        if case .source(_, _, let bits, let chroma) = graph.nodes[0].kind {
            let coded = job.geometry.rotation.swapsDimensions ? (first.from.height, first.from.width) : first.from
            graph.nodes[0] = RenderNode(.source(width: coded.0, height: coded.1, bitDepth: bits, chroma: chroma))
        }
        graph.notes.append(first.description)
    }
}
