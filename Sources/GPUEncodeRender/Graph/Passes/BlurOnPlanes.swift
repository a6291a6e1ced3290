/// A large Gaussian blur alone blurs the Y'CbCr planes as they are (luma with sigma, chroma with
/// sigma / 2 at chroma resolution) on a grid of every 4th pixel, then interpolates the grid in the
/// NV12 pass (`PlaneBlur`): the blur is linear, so it commutes with the matrix to R'G'B', and
/// nothing is converted or clamped before it. Which jobs qualify is `PlaneBlur.decide`; it is
/// chosen when the job's cost model says its four passes cost less than the reference's RGBA
/// chain (a source pass, the 4x reduction, the two blur passes and the conversion to NV12).
public struct BlurOnPlanes: GraphPass {
    public let name = "blur on planes"
    public let isOptional = true
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        guard let blur = PlaneBlur.decide(job.filters, geometry: job.geometry, source: job.source, light: job.light,
                                          keepsSignal: job.keepsSignal, dolbyVision: job.dolbyVision, path: job.path,
                                          compile: CompileOptions()) else { return }
        let g = job.geometry
        let taps = 2 * blur.radius / 4 + 1
        let pixels = g.sourceWidth * g.sourceHeight, grid = pixels / 16, blocks = pixels / 8
        // Fetches a fragment makes, pass by pass (the grid passes read packed rows: one fetch a row).
        let planes = job.cost.pass(fragments: grid / 4, fetches: 4 * taps, instructions: 8 * taps)
            + job.cost.pass(fragments: grid / 4, fetches: 2 * taps, instructions: 8 * taps)
            + job.cost.pass(fragments: grid, fetches: taps + 4, instructions: 10 * taps)
            + job.cost.pass(fragments: blocks, fetches: 8, instructions: 200)
        let reference = job.cost.pass(fragments: pixels / 4, fetches: 6, instructions: 120)
            + job.cost.pass(fragments: grid, fetches: taps, instructions: 10 * taps)
            + job.cost.pass(fragments: grid, fetches: taps, instructions: 10 * taps)
            + job.cost.pass(fragments: blocks, fetches: 16, instructions: 400)
        // A plan timed on this renderer overrides the counts.
        let ratio = job.cost.measured[.planeBlur] ?? planes / reference
        guard ratio < 1 else {
            graph.notes.append("blur on planes: no, \(String(format: "%.2f", ratio))x the RGBA chain's time on this renderer (\(job.cost.renderer.rawValue) cost model)")
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
