/// A large Gaussian blur alone blurs the Y'CbCr planes as they are (luma with sigma, chroma with
/// sigma / 2 at chroma resolution) on a grid of every 4th pixel, then interpolates the grid in the
/// NV12 pass (`PlaneBlur`): the blur is linear, so it commutes with the matrix to R'G'B', and
/// nothing is converted or clamped before it. Which jobs qualify is `PlaneBlur.decide`; it is
/// chosen where the job's cost model has timed it faster than the RGBA chain (`CostModel.measured`).
public struct BlurOnPlanes: GraphPass {
    public let name = "blur on planes"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        guard let blur = PlaneBlur.decide(job.filters, geometry: job.geometry, source: job.source, light: job.light,
                                          keepsSignal: job.keepsSignal, dolbyVision: job.dolbyVision, path: job.path,
                                          compile: CompileOptions()) else { return }
        // Counting fetches ranked it cheaper on both renderers; timed, it is not on a GPU (its
        // column passes give few fragments long loops of fetches), so the timed ratio decides.
        guard let ratio = job.cost.measured[.planeBlur], ratio < 1 else {
            let timed = job.cost.measured[.planeBlur].map { String(format: "%.2f", $0) + "x the RGBA chain's time" } ?? "not timed"
            graph.notes.append("blur on planes: no, \(timed) on this renderer (\(job.cost.renderer.rawValue) cost model)")
            return
        }
        graph.execution = .planeBlur(sigma: blur.sigma, radius: blur.radius)
        // The planes are blurred as Y'CbCr: the matrix to R'G'B' comes after the blur.
        if let toRGB = graph.nodes.firstIndex(where: { if case .toRGB = $0.kind { return true } else { return false } }) {
            let node = graph.nodes.remove(at: toRGB)
            let end = graph.nodes.firstIndex { if case .toYCbCr = $0.kind { return true } else { return false } } ?? graph.nodes.count - 1
            graph.nodes.insert(node, at: end)
        }
        graph.notes.append("blur on planes: \(String(format: "%.2f", ratio))x the RGBA chain's time (\(job.cost.renderer.rawValue) cost model)")
    }
}
